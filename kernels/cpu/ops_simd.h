#pragma once
// Inner loops of ops.cpp that have an AVX2 (+FMA, F16C) version in
// ops_avx2.cpp. Only call the ops_avx2:: functions when opsHaveAvx2() is true.
#include <cstdint>

namespace weir::kernels {

bool opsHaveAvx2();

namespace ops_avx2 {
// Sum of a[i]*b[i] over f16 vectors, f32 accumulation in 4 x 8 lanes (n % 32 == 0).
float dotF16(const uint16_t* a, const uint16_t* b, int64_t n);
// The same with b already widened to f32 (b's values exactly f16's): the
// same products in the same order, one conversion fewer per element.
float dotF16F32(const uint16_t* a, const float* b, int64_t n);
// y = f16(f32(y) + f32(x) * v)
void madF16(uint16_t* y, const uint16_t* x, float v, int64_t n);
// y = f16(f32(y) * v)
void scaleF16(uint16_t* y, float v, int64_t n);
// y += x * v
void madF32(float* y, const float* x, float v, int64_t n);
float dotF32(const float* a, const float* b, int64_t n);
// The same sums in llama.cpp's AVX-512 order (4 x 16 lanes over steps of 64,
// the rest one by one in double; any n), for when avx512VariantsActive().
float dotF16Lanes16(const uint16_t* a, const uint16_t* b, int64_t n);
float dotF16F32Lanes16(const uint16_t* a, const float* b, int64_t n);
float dotF32Lanes16(const float* a, const float* b, int64_t n);
void toF16(const float* x, uint16_t* y, int64_t n);
void fromF16(const uint16_t* x, float* y, int64_t n);
// SwiGLU over whole groups of 8; returns how many elements it did.
int64_t swiglu(const float* gate, const float* up, float* y, int64_t n);
// The same with expApprox512 (llama.cpp's AVX-512 expf) over whole groups of
// 8 of the first n; returns how many elements it did.
int64_t swiglu512(const float* gate, const float* up, float* y, int64_t n);
void ropeApply(float* x, int64_t nHeads, int64_t headDim, int32_t nRot, bool neox, const float* cs);
void gegluF16Table(const float* gate, const float* up, float* y, int64_t n, const uint16_t* table);
// sums[r] = the sum over i < n of double(x[r stride + i]^2), in order of i,
// for rows r < kSquareSumRows (rmsNorm's sum, several rows side by side).
constexpr int kSquareSumRows = 8;
void squareSums(const float* x, int64_t n, int64_t stride, double* sums);
// y = (x * s) * w, or x * s without w (two roundings, as rmsNorm).
void scaleRow(const float* x, const float* w, float* y, int64_t n, float s);
// The largest value among x[0, n), NaN skipped (-inf if none).
float maxF32(const float* x, int64_t n);
// The first i in [from, n) with x[i] == v, or n.
int64_t findF32(const float* x, int64_t from, int64_t n, float v);
} // namespace ops_avx2

} // namespace weir::kernels
