#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/device_common.cuh"

namespace weir::cuda {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(int64_t n) {
    const int64_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 65536 ? b : 65536);
}

#define WEIR_GRID_STRIDE(i, n) \
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

__global__ void addKernel(float* __restrict__ y, const float* __restrict__ x, int64_t n) {
    WEIR_GRID_STRIDE(i, n) y[i] += x[i];
}

__global__ void biasKernel(float* __restrict__ y, const float* __restrict__ b, int64_t n, int64_t width) {
    WEIR_GRID_STRIDE(i, n) y[i] += b[i % width];
}

__global__ void scaleKernel(float* __restrict__ y, float s, int64_t n) {
    WEIR_GRID_STRIDE(i, n) y[i] *= s;
}

__global__ void softcapKernel(float* __restrict__ y, float c, int64_t n) {
    WEIR_GRID_STRIDE(i, n) y[i] = c * tanhf(y[i] / c);
}

__global__ void gatherKernel(const float* __restrict__ rows, int64_t width, const int32_t* __restrict__ src, int64_t n,
                             float* __restrict__ tmp) {
    WEIR_GRID_STRIDE(i, n) {
        const int64_t r = i / width, c = i - r * width;
        tmp[i] = rows[int64_t(src[r]) * width + c];
    }
}

#undef WEIR_GRID_STRIDE

} // namespace

void addInPlace(float* y, const float* x, int64_t n, cudaStream_t stream) {
    if (n > 0) addKernel<<<gridFor(n), kThreads, 0, stream>>>(y, x, n);
}

void addBiasRows(float* y, const float* bias, int64_t rows, int64_t width, cudaStream_t stream) {
    if (rows > 0 && width > 0) biasKernel<<<gridFor(rows * width), kThreads, 0, stream>>>(y, bias, rows * width, width);
}

void scaleInPlace(float* y, float s, int64_t n, cudaStream_t stream) {
    if (n > 0) scaleKernel<<<gridFor(n), kThreads, 0, stream>>>(y, s, n);
}

void softcap(float* y, float c, int64_t n, cudaStream_t stream) {
    if (n > 0) softcapKernel<<<gridFor(n), kThreads, 0, stream>>>(y, c, n);
}

void gatherRows(float* rows, int64_t width, const int32_t* src, int64_t count, float* tmp, cudaStream_t stream) {
    if (count <= 0 || width <= 0) return;
    gatherKernel<<<gridFor(count * width), kThreads, 0, stream>>>(rows, width, src, count * width, tmp);
    cudaMemcpyAsync(rows, tmp, size_t(count * width) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
}

} // namespace weir::cuda
