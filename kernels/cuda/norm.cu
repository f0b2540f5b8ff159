#include "kernels/cuda/norm.h"

#include "kernels/cuda/device_common.cuh"

namespace weir::cuda {
namespace {

__global__ void rmsNormKernel(const float* x, const float* __restrict__ w, float* y, int width, float eps) {
    const int64_t r = blockIdx.x;
    const float* xr = x + r * width;
    float* yr = y + r * width;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < width; i += blockDim.x) sum = fmaf(xr[i], xr[i], sum);
    sum = warpSum(sum);
    __shared__ float partial[32];
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, warps = blockDim.x / kWarpSize;
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        float s = lane < warps ? partial[lane] : 0.0f;
        s = warpSum(s);
        if (lane == 0) partial[0] = s;
    }
    __syncthreads();
    const float mean = partial[0] / float(width);
    const float s = 1.0f / sqrtf(mean + eps);
    // Each thread rewrites only the elements it read: x and y may alias.
    if (w) {
        for (int i = threadIdx.x; i < width; i += blockDim.x) yr[i] = (xr[i] * s) * w[i];
    } else {
        for (int i = threadIdx.x; i < width; i += blockDim.x) yr[i] = xr[i] * s;
    }
}

} // namespace

void rmsNormRows(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps, cudaStream_t stream) {
    if (rows <= 0 || width <= 0) return;
    const int threads = width <= 128 ? 32 : width <= 1024 ? 128 : 512;
    rmsNormKernel<<<unsigned(rows), threads, 0, stream>>>(x, w, y, int(width), eps);
}

} // namespace weir::cuda
