#pragma once
// The decode GEMV with int8 activations: activation rows are quantized per
// block of 32 (an f32 scale amax / 127 and 32 int8, round half to even, as
// the CPU's Q8_0), and each lane multiplies packed weight values with them
// four at a time (__dp4a), applying each block's scales once per eight
// elements. Several times fewer instructions per weight than the f32 GEMV
// (gemv.h), at the cost of the activations' 8-bit rounding; quantized weight
// types only.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::cuda {

inline constexpr size_t kQ8ActivationBlockBytes = 36;  // f32 scale + 32 int8

// Whether gemvQ8 reads this type: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K.
bool gemvQ8Supported(GgmlType type);
// Bytes of M quantized activation rows of K values (K a multiple of 32).
size_t q8ActivationBytes(int64_t M, int64_t K);

// x: M rows of K f32 -> xq (q8ActivationBytes(M, K) bytes of device memory).
void quantizeActivations(const float* x, int64_t M, int64_t K, void* xq, cudaStream_t stream);
// y[m][n] = sum_k W[n][k] * x[m][k] with x as quantizeActivations left it.
void gemvQ8(GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N, const void* xq, int64_t M, float* y,
            cudaStream_t stream);

} // namespace weir::cuda
