#include "kernels/cuda/dequantize.h"

#include "kernels/cuda/ggml_blocks.cuh"

namespace weir::cuda {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(int64_t items) {
    const int64_t blocks = (items + kThreads - 1) / kThreads;
    return unsigned(blocks < 65536 ? blocks : 65536);  // grid-stride loops cover the rest
}

template <GgmlType T>
__global__ void embedKernel(const uint8_t* __restrict__ table, size_t rowStride, int cols, const int32_t* __restrict__ ids,
                            float scale, float* __restrict__ x) {
    const int64_t i = blockIdx.x;
    const uint8_t* row = table + size_t(ids[i]) * rowStride;
    float4* out = reinterpret_cast<float4*>(x + i * cols);
    for (int i8 = threadIdx.x; i8 < cols / 8; i8 += blockDim.x) {
        float w[8];
        Blocks<T>::load8(row, i8, w);
        if (scale != 0.0f)
#pragma unroll
            for (int j = 0; j < 8; ++j) w[j] *= scale;
        out[2 * i8] = make_float4(w[0], w[1], w[2], w[3]);
        out[2 * i8 + 1] = make_float4(w[4], w[5], w[6], w[7]);
    }
}

template <GgmlType T>
__global__ void dequantizeF16Kernel(const uint8_t* __restrict__ w, size_t rowStride, int cols, int64_t rows,
                                    uint4* __restrict__ dst) {
    const int64_t chunksPerRow = cols / 8, total = rows * chunksPerRow;
    for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < total; c += int64_t(gridDim.x) * blockDim.x) {
        const int64_t r = c / chunksPerRow;
        const int i8 = int(c - r * chunksPerRow);
        float v[8];
        Blocks<T>::load8(w + size_t(r) * rowStride, i8, v);
        uint32_t h[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const __half2 p = __floats2half2_rn(v[2 * j], v[2 * j + 1]);
            h[j] = *reinterpret_cast<const uint32_t*>(&p);
        }
        dst[c] = make_uint4(h[0], h[1], h[2], h[3]);
    }
}

__global__ void toF16Kernel(const float* __restrict__ x, int64_t n, __half* __restrict__ y) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = __float2half_rn(x[i]);
}

__global__ void toBf16Kernel(const float* __restrict__ x, int64_t n, __nv_bfloat16* __restrict__ y) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = __float2bfloat16_rn(x[i]);
}

} // namespace

void embedRows(GgmlType type, const void* table, size_t rowStride, int64_t cols, const int32_t* ids, int64_t n,
               float scale, float* x, cudaStream_t stream) {
    if (n <= 0 || cols <= 0) return;
    const int threads = cols / 8 >= 256 ? 256 : 64;
    dispatchWeightType(type, [&]<GgmlType T>() {
        embedKernel<T><<<unsigned(n), threads, 0, stream>>>(static_cast<const uint8_t*>(table), rowStride, int(cols), ids,
                                                           scale, x);
    });
}

void dequantizeRowsF16(GgmlType type, const void* w, size_t rowStride, int64_t cols, int64_t row0, int64_t rows,
                       uint16_t* dst, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const uint8_t* first = static_cast<const uint8_t*>(w) + size_t(row0) * rowStride;
    dispatchWeightType(type, [&]<GgmlType T>() {
        dequantizeF16Kernel<T><<<gridFor(rows * (cols / 8)), kThreads, 0, stream>>>(first, rowStride, int(cols), rows,
                                                                                    reinterpret_cast<uint4*>(dst));
    });
}

void toF16(const float* x, int64_t n, uint16_t* dst, cudaStream_t stream) {
    if (n <= 0) return;
    toF16Kernel<<<gridFor(n), kThreads, 0, stream>>>(x, n, reinterpret_cast<__half*>(dst));
}

void toBf16(const float* x, int64_t n, uint16_t* dst, cudaStream_t stream) {
    if (n <= 0) return;
    toBf16Kernel<<<gridFor(n), kThreads, 0, stream>>>(x, n, reinterpret_cast<__nv_bfloat16*>(dst));
}

} // namespace weir::cuda
