// Layout as gemv.cu (a warp per weight row, or two when four or more
// activation rows share the launch; lanes on consecutive 8-element chunks);
// the products are integer (__dp4a) per chunk and scaled once per chunk.
#include "kernels/cuda/gemv_q8.h"

#include "kernels/cuda/gemv.h"
#include "kernels/cuda/ggml_blocks_q8.cuh"

namespace weir::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kOnes = 0x01010101;

// A warp per block of 32 values.
__global__ void quantizeKernel(const float* __restrict__ x, int64_t blocks, uint8_t* __restrict__ xq) {
    const int lane = threadIdx.x % kWarpSize;
    const int64_t b = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
    if (b >= blocks) return;  // whole warps
    const float v = x[b * 32 + lane];
    const float amax = warpMax(fabsf(v));
    const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
    uint8_t* out = xq + b * int64_t(kQ8ActivationBlockBytes);
    out[4 + lane] = uint8_t(int8_t(rintf(v * id)));
    if (lane == 0) *reinterpret_cast<float*>(out) = d;
}

template <GgmlType T, int MR, int NR>
__global__ void __launch_bounds__(kWarpsPerBlock * kWarpSize)
    gemvQ8Kernel(const uint8_t* __restrict__ w, size_t rowStride, int K, int N, const uint8_t* __restrict__ xq, int M,
                 float* __restrict__ y) {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int n0 = (blockIdx.x * kWarpsPerBlock + warp) * NR;
    if (n0 >= N) return;
    const int chunks = K / 8, blocksPerRow = K / 32;
    float acc[MR][NR];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int r = 0; r < NR; ++r) acc[m][r] = 0.0f;

#pragma unroll 2
    for (int i8 = lane; i8 < chunks; i8 += kWarpSize) {
        Q8Chunk c[NR];
#pragma unroll
        for (int r = 0; r < NR; ++r) {
            if (n0 + r < N) {
                c[r] = Q8Dot<T>::load(w + size_t(n0 + r) * rowStride, i8);
            } else {
                c[r].q[0] = c[r].q[1] = 0;
                c[r].d = c[r].m = 0.0f;
            }
        }
#pragma unroll
        for (int m = 0; m < MR; ++m) {
            if (m >= M) break;
            const uint8_t* xb = xq + (size_t(m) * blocksPerRow + (i8 >> 2)) * kQ8ActivationBlockBytes;
            const float dx = *reinterpret_cast<const float*>(xb);
            const int* a = reinterpret_cast<const int*>(xb + 4 + (i8 & 3) * 8);
            const int a0 = a[0], a1 = a[1];
            float sum = 0.0f;
            if constexpr (Q8Dot<T>::kOffset) sum = float(__dp4a(a0, kOnes, __dp4a(a1, kOnes, 0)));
#pragma unroll
            for (int r = 0; r < NR; ++r) {
                const int dot = __dp4a(c[r].q[0], a0, __dp4a(c[r].q[1], a1, 0));
                const float part = Q8Dot<T>::kOffset ? fmaf(c[r].d, float(dot), c[r].m * sum) : c[r].d * float(dot);
                acc[m][r] = fmaf(dx, part, acc[m][r]);
            }
        }
    }
#pragma unroll
    for (int m = 0; m < MR; ++m) {
#pragma unroll
        for (int r = 0; r < NR; ++r) {
            const float s = warpSum(acc[m][r]);
            if (lane == 0 && m < M && n0 + r < N) y[size_t(m) * N + n0 + r] = s;
        }
    }
}

template <GgmlType T, int MR, int NR>
void launch(const void* w, size_t rowStride, int K, int N, const uint8_t* xq, int M, float* y, cudaStream_t stream) {
    const int rowsPerBlock = kWarpsPerBlock * NR;
    const unsigned blocks = unsigned((N + rowsPerBlock - 1) / rowsPerBlock);
    gemvQ8Kernel<T, MR, NR><<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(static_cast<const uint8_t*>(w), rowStride, K,
                                                                               N, xq, M, y);
}

} // namespace

bool gemvQ8Supported(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0:
    case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K: return true;
    default: return false;
    }
}

size_t q8ActivationBytes(int64_t M, int64_t K) { return size_t(M) * size_t(K / 32) * kQ8ActivationBlockBytes; }

void quantizeActivations(const float* x, int64_t M, int64_t K, void* xq, cudaStream_t stream) {
    const int64_t blocks = M * (K / 32);
    if (blocks <= 0) return;
    constexpr int kThreads = 256;
    const int64_t grid = (blocks * kWarpSize + kThreads - 1) / kThreads;
    quantizeKernel<<<unsigned(grid), kThreads, 0, stream>>>(x, blocks, static_cast<uint8_t*>(xq));
}

void gemvQ8(GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N, const void* xq, int64_t M, float* y,
            cudaStream_t stream) {
    if (M <= 0 || N <= 0) return;
    for (int64_t m0 = 0; m0 < M; m0 += kGemvMaxRows) {
        const int rows = int(M - m0 < kGemvMaxRows ? M - m0 : kGemvMaxRows);
        const uint8_t* xs = static_cast<const uint8_t*>(xq) + q8ActivationBytes(m0, K);
        float* ys = y + m0 * N;
        dispatchQ8Type(type, [&]<GgmlType T>() {
            if (rows == 1) launch<T, 1, 1>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else if (rows == 2) launch<T, 2, 1>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else if (rows <= 4) launch<T, 4, 2>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else launch<T, 8, 2>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
        });
    }
}

} // namespace weir::cuda
