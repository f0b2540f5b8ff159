#pragma once
// Row quantizers for activations and caches, with the same arithmetic as
// llama.cpp's x86 CPU backend (so results built on them track it):
//
// Q8_0 (blocks of 32: f16 d, int8 qs[32]; 34 bytes):
//   amax = max |x|, d = amax / 127, id = amax ? 127 / amax : 0 (both f32),
//   q = round-half-to-even(x * id), d stored as f16 (round to nearest even).
// Q8_1 (blocks of 32: f16 d, f16 s, int8 qs[32]; 36 bytes):
//   as Q8_0, plus s = f16(d * sum(q)) with the f32 d.
// Q8_K (blocks of 256: f32 d, int8 qs[256], int16 bsums[16]; 292 bytes):
//   max = the element of largest |x| (first one on ties), iscale = -127 / max,
//   q = min(127, round-half-to-even(iscale * x)), d = 1 / iscale (f32),
//   bsums[g] = sum of q[16g .. 16g+15]. An all-zero block gives d = 0, q = 0.
#include <cstddef>
#include <cstdint>

namespace weir::kernels {

constexpr size_t kQ8_0BlockBytes = 34;
constexpr size_t kQ8_1BlockBytes = 36;
constexpr size_t kQ8_KBlockBytes = 292;

// n must be a multiple of 32 (Q8_0, Q8_1) or 256 (Q8_K); dst holds the blocks.
void quantizeRowQ8_0(const float* x, void* dst, int64_t n);
void quantizeRowQ8_1(const float* x, void* dst, int64_t n);
void quantizeRowQ8_K(const float* x, void* dst, int64_t n);

// Dot product of two Q8_0 rows of n elements (e.g. a query quantized with
// quantizeRowQ8_0 against a Q8_0 cache row): sum over blocks of
// da * db * sum(qa * qb), on the active kernel path. b must not hold the
// value -128 (the quantizers above never write it).
float dotQ8_0(const void* a, const void* b, int64_t n);

} // namespace weir::kernels
