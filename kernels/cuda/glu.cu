#include "kernels/cuda/glu.h"

#include "kernels/cuda/device_common.cuh"

namespace weir::cuda {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(int64_t n) {
    const int64_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 65536 ? b : 65536);
}

__global__ void gegluKernel(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ y, int64_t n) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoef = 0.044715f;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        float a;
        if (g <= -10.0f) {
            a = 0.0f;
        } else if (g >= 10.0f) {
            a = g;
        } else {
            const float x = __half2float(__float2half_rn(g));
            const float inner = fmaf(kCoef * x, x, 1.0f);
            a = __half2float(__float2half_rn(0.5f * x * (1.0f + tanhf(kSqrt2OverPi * x * inner))));
        }
        y[i] = a * up[i];
    }
}

__global__ void swigluKernel(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        y[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

} // namespace

void gegluTanh(const float* gate, const float* up, float* y, int64_t n, cudaStream_t stream) {
    if (n > 0) gegluKernel<<<gridFor(n), kThreads, 0, stream>>>(gate, up, y, n);
}

void swiglu(const float* gate, const float* up, float* y, int64_t n, cudaStream_t stream) {
    if (n > 0) swigluKernel<<<gridFor(n), kThreads, 0, stream>>>(gate, up, y, n);
}

} // namespace weir::cuda
