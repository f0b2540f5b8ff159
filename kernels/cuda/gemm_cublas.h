#pragma once
// Weight times many activation rows (prefill, large batches) through cuBLAS:
// the weight's rows are dequantized to f16 in slices (F16 and BF16 weights are
// used in place), the activations converted to f16 (bf16 for BF16 weights),
// and cublasGemmEx multiplies them with f32 accumulation into f32 rows.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::cuda {

// At most this many bytes of f16 weight rows are dequantized at a time.
inline constexpr size_t kGemmWeightSliceBytes = size_t(64) << 20;

// Device scratch gemmCublas needs for these shapes (activations plus one weight slice).
size_t gemmScratchBytes(GgmlType type, int64_t K, int64_t N, int64_t M);

// y[m][n] = sum_k W[n][k] x[m][k] (shapes as gemv()). `scratch` holds
// gemmScratchBytes(type, K, N, M) bytes of device memory. The conversions run
// on `stream`; the handle must already run there (cublasSetStream, which
// also resets its workspace: set the workspace after it, as graph capture
// needs one). Returns cuBLAS's status.
cublasStatus_t gemmCublas(cublasHandle_t handle, GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N,
                          const float* x, int64_t M, float* y, void* scratch, cudaStream_t stream);

} // namespace weir::cuda
