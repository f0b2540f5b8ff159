#pragma once
// Weight times a few activation rows (decode steps and small batches),
// reading GGUF blocks in place: y[m][n] = sum_k W[n][k] x[m][k].
// Activations stay f32 (no quantization): each lane dequantizes eight weight
// elements at a time and multiplies them with the f32 activations in f32.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::cuda {

// Rows per launch the GEMV is built for; more rows run in several passes
// (the backend switches to cuBLAS above this).
inline constexpr int64_t kGemvMaxRows = 8;

// Types the GEMV (and the dequantizers) read: F32, F16, BF16, Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, with rows of a multiple of the block
// size and of 8 elements.
bool weightTypeSupported(GgmlType type, int64_t cols);

// w: N rows of K elements of `type`, rowStride bytes apart (device memory).
// x: M rows of K f32 (16-byte aligned, row stride K); y: M rows of N f32.
// M == 0 or N == 0 launches nothing.
void gemv(GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N, const float* x, int64_t M, float* y,
          cudaStream_t stream);

} // namespace weir::cuda
