// The decode GEMV: a warp per weight row (two rows when four or more
// activation rows share the launch, so each activation load feeds two rows),
// lanes on consecutive 8-element chunks (coalesced 16-byte activation loads,
// neighbouring weight bytes), a shuffle reduction at the end.
#include "kernels/cuda/gemv.h"

#include "kernels/cuda/ggml_blocks.cuh"

namespace weir::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

template <GgmlType T, int MR, int NR>
__global__ void __launch_bounds__(kWarpsPerBlock * kWarpSize)
    gemvKernel(const uint8_t* __restrict__ w, size_t rowStride, int K, int N, const float* __restrict__ x, int M,
               float* __restrict__ y) {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int n0 = (blockIdx.x * kWarpsPerBlock + warp) * NR;
    if (n0 >= N) return;  // whole warps leave together: the shuffles below see full warps
    const int chunks = K / 8;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float acc[MR][NR];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int r = 0; r < NR; ++r) acc[m][r] = 0.0f;

    // Two chunks in flight per lane: more loads outstanding per warp.
#pragma unroll 2
    for (int i8 = lane; i8 < chunks; i8 += kWarpSize) {
        float wv[NR][8];
#pragma unroll
        for (int r = 0; r < NR; ++r) {
            if (n0 + r < N) Blocks<T>::load8(w + size_t(n0 + r) * rowStride, i8, wv[r]);
            else
#pragma unroll
                for (int j = 0; j < 8; ++j) wv[r][j] = 0.0f;
        }
#pragma unroll
        for (int m = 0; m < MR; ++m) {
            if (m >= M) break;
            const float4 a = x4[size_t(m) * (K / 4) + 2 * i8], b = x4[size_t(m) * (K / 4) + 2 * i8 + 1];
            const float xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
            for (int r = 0; r < NR; ++r)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[m][r] = fmaf(wv[r][j], xv[j], acc[m][r]);
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
void launch(const void* w, size_t rowStride, int K, int N, const float* x, int M, float* y, cudaStream_t stream) {
    const int rowsPerBlock = kWarpsPerBlock * NR;
    const unsigned blocks = unsigned((N + rowsPerBlock - 1) / rowsPerBlock);
    gemvKernel<T, MR, NR><<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(static_cast<const uint8_t*>(w), rowStride, K,
                                                                             N, x, M, y);
}

} // namespace

bool weightTypeSupported(GgmlType type, int64_t cols) {
    const TypeTraits* t = typeTraits(type);
    if (!t || cols <= 0 || cols % t->blockElems != 0 || cols % 8 != 0 || cols > (int64_t(1) << 30)) return false;
    switch (type) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q4_0: case GgmlType::Q4_1:
    case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0: case GgmlType::Q4_K: case GgmlType::Q5_K:
    case GgmlType::Q6_K: return true;
    default: return false;
    }
}

void gemv(GgmlType type, const void* w, size_t rowStride, int64_t K, int64_t N, const float* x, int64_t M, float* y,
          cudaStream_t stream) {
    if (M <= 0 || N <= 0) return;
    for (int64_t m0 = 0; m0 < M; m0 += kGemvMaxRows) {
        const int rows = int(M - m0 < kGemvMaxRows ? M - m0 : kGemvMaxRows);
        const float* xs = x + m0 * K;
        float* ys = y + m0 * N;
        dispatchWeightType(type, [&]<GgmlType T>() {
            if (rows == 1) launch<T, 1, 1>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else if (rows == 2) launch<T, 2, 1>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else if (rows <= 4) launch<T, 4, 2>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
            else launch<T, 8, 2>(w, rowStride, int(K), int(N), xs, rows, ys, stream);
        });
    }
}

} // namespace weir::cuda
