#include "kernels/cuda/gemm_cublas.h"

#include <algorithm>

#include "kernels/cuda/dequantize.h"

namespace weir::cuda {
namespace {

size_t roundUp(size_t n) { return (n + 255) & ~size_t(255); }

bool usedInPlace(GgmlType type) { return type == GgmlType::F16 || type == GgmlType::BF16; }

int64_t sliceRows(int64_t K, int64_t N) {
    const int64_t rows = int64_t(kGemmWeightSliceBytes / (size_t(K) * 2));
    return std::clamp<int64_t>(rows, 1, N);
}

} // namespace

size_t gemmScratchBytes(GgmlType type, int64_t K, int64_t N, int64_t M) {
    const size_t act = roundUp(size_t(M) * size_t(K) * 2);
    if (usedInPlace(type)) return act;
    return act + roundUp(size_t(sliceRows(K, N)) * size_t(K) * 2);
}

cublasStatus_t gemmCublas(cublasHandle_t handle, GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N,
                          const float* x, int64_t M, float* y, void* scratch, cudaStream_t stream) {
    if (M <= 0 || N <= 0) return CUBLAS_STATUS_SUCCESS;
    auto* act = static_cast<uint16_t*>(scratch);
    auto* slice = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(scratch) + roundUp(size_t(M) * size_t(K) * 2));
    const bool bf16 = type == GgmlType::BF16;
    if (bf16) toBf16(x, M * K, act, stream);
    else toF16(x, M * K, act, stream);
    const cudaDataType_t dt = bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const float alpha = 1.0f, beta = 0.0f;

    if (usedInPlace(type)) {
        // Column-major view: W^T (K x N, ld = row stride) times X (K x M) = Y^T (N x M).
        return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &alpha, w, dt, int(rowStride / 2), act,
                            dt, int(K), &beta, y, CUDA_R_32F, int(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    const int64_t rows = sliceRows(K, N);
    for (int64_t n0 = 0; n0 < N; n0 += rows) {
        const int64_t nc = std::min(rows, N - n0);
        dequantizeRowsF16(type, w, rowStride, K, n0, nc, slice, stream);
        const cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(nc), int(M), int(K), &alpha, slice, CUDA_R_16F, int(K), act,
                          CUDA_R_16F, int(K), &beta, y + n0, CUDA_R_32F, int(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) return st;
    }
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace weir::cuda
