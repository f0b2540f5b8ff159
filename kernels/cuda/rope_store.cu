#include "kernels/cuda/rope_store.h"

#include <cmath>

#include "kernels/cuda/kv_rows.cuh"

namespace weir::cuda {
namespace {

constexpr int kThreads = 256;

struct RopeArgs {
    bool neox;
    int32_t nRot;
    float step;        // base^(-2/nRot), as the CPU computes it
    float freqScale;
    const float* freqFactors;
};

__device__ __forceinline__ void storeRow(const float* x, uint8_t* dst, int n, GgmlType type) {
    const int tid = threadIdx.x;
    switch (type) {
    case GgmlType::F32:
        for (int i = tid; i < n; i += blockDim.x) reinterpret_cast<float*>(dst)[i] = x[i];
        break;
    case GgmlType::F16:
        for (int i = tid; i < n; i += blockDim.x) reinterpret_cast<__half*>(dst)[i] = __float2half_rn(x[i]);
        break;
    case GgmlType::Q8_0: {
        // A warp per block of 32: d = amax / 127 (f16), q = round-half-even(x * 127 / amax).
        const int warp = tid / kWarpSize, lane = tid % kWarpSize, warps = blockDim.x / kWarpSize;
        for (int b = warp; b < n / 32; b += warps) {
            const float v = x[b * 32 + lane];
            const float amax = warpMax(fabsf(v));
            const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
            uint8_t* blk = dst + b * 34;
            if (lane == 0) *reinterpret_cast<__half*>(blk) = __float2half_rn(d);
            blk[2 + lane] = uint8_t(int8_t(rintf(v * id)));
        }
        break;
    }
    default:  // E4M3_KV: nearest, ties to even, saturating at +-448; NaN -> 0x7F
        for (int i = tid; i < n; i += blockDim.x)
            dst[i] = uint8_t(__nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3));
        break;
    }
}

__global__ void __launch_bounds__(kThreads)
    ropeStoreKernel(float* q, float* k, const float* __restrict__ v, int nHead, int nHeadKv, int hdK, int hdV,
                    RopeArgs rope, float queryScale, const int32_t* __restrict__ positions, TokenTables tables,
                    PagedKvStore kv) {
    const int64_t t = blockIdx.x;
    const int32_t pos = positions[t];
    float* qt = q + t * int64_t(nHead) * hdK;
    float* kt = k + t * int64_t(nHeadKv) * hdK;
    const float* vt = v + t * int64_t(nHeadKv) * hdV;

    // RoPE: one thread per (head, pair); q heads first, then k heads.
    const int half = rope.nRot / 2;
    const int pairs = (nHead + nHeadKv) * half;
    for (int w = threadIdx.x; w < pairs; w += blockDim.x) {
        const int h = w / half, i = w - h * half;
        float theta = float(pos);
        for (int j = 0; j < i; ++j) theta *= rope.step;
        const float ff = rope.freqFactors ? rope.freqFactors[i] : 1.0f;
        const float a = rope.freqScale * (theta / ff);
        const float c = cosf(a), s = sinf(a);
        float* x = h < nHead ? qt + int64_t(h) * hdK : kt + int64_t(h - nHead) * hdK;
        const int i0 = rope.neox ? i : 2 * i, i1 = rope.neox ? i + half : 2 * i + 1;
        const float x0 = x[i0], x1 = x[i1];
        x[i0] = fmaf(x0, c, -(x1 * s));
        x[i1] = fmaf(x0, s, x1 * c);
    }
    __syncthreads();  // global writes of this block are visible to it after the barrier
    if (queryScale != 0.0f)
        for (int i = threadIdx.x; i < nHead * hdK; i += blockDim.x) qt[i] *= queryScale;

    const int64_t row = pagedRow(tables.words + tables.tableOffsets[t], pos, kv.pageSize);
    if (row < 0) return;  // uniform over the block
    storeRow(kt, kv.k + row * int64_t(kv.rowBytes), nHeadKv * hdK, kv.type);
    storeRow(vt, kv.v + row * int64_t(kv.rowBytes), nHeadKv * hdV, kv.type);
}

} // namespace

void ropeAndStore(float* q, float* k, const float* v, int64_t n, int32_t nHead, int32_t nHeadKv, int32_t hdK, int32_t hdV,
                  const RopeSpec& rope, float queryScale, const int32_t* positions, TokenTables tables,
                  const PagedKvStore& kv, cudaStream_t stream) {
    if (n <= 0) return;
    RopeArgs args;
    args.neox = rope.neox;
    args.nRot = rope.nRot;
    args.step = rope.nRot > 0 ? std::pow(rope.base, -2.0f / float(rope.nRot)) : 1.0f;
    args.freqScale = rope.freqScale;
    args.freqFactors = rope.freqFactors;
    ropeStoreKernel<<<unsigned(n), kThreads, 0, stream>>>(q, k, v, nHead, nHeadKv, hdK, hdV, args, queryScale, positions,
                                                          tables, kv);
}

} // namespace weir::cuda
