// One block per (token, KV head, group of up to 8 query heads, key split).
// Keys are taken in tiles of 32: each warp scores some of a tile's keys for
// all the block's query heads (lanes over the head dimension, a shuffle
// reduction per head), one warp per head updates that head's running max and
// sum and turns scores into weights, and every thread accumulates its value
// dimensions over the tile's V rows. With one split the block writes the
// normalised output; with several it writes (max, sum, unnormalised
// accumulator) and a second kernel combines the splits.
#include "kernels/cuda/paged_attention.h"

#include <algorithm>

#include "kernels/cuda/kv_rows.cuh"

namespace weir::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kTile = 32;                 // keys per tile (one per lane in the softmax update)
constexpr int kHeadsPerBlock = 8;         // query heads sharing a block's K/V reads
constexpr int kDimsPerLane = kMaxAttendHeadDim / kWarpSize;      // q.k: lane covers d = lane + 32 j
constexpr int kDimsPerThread = kMaxAttendHeadDim / kThreads;     // v: thread covers d = tid + 128 j
constexpr int kMaxSplits = 32;
constexpr int kTargetBlocks = 4 * 132;    // about four blocks per SM of an H100/H200

int headChunks(const AttendShape& s) {
    const int group = s.nHead / s.nHeadKv;
    return (group + kHeadsPerBlock - 1) / kHeadsPerBlock;
}

struct AttendArgs {
    const float* q;
    float* out;
    const int32_t* positions;
    TokenTables tables;
    PagedKvRead kv;
    AttendShape shape;
    int32_t splits;
    float* partial;  // splits > 1: per (token, head, split): max, sum, headDimV accumulators
};

template <GgmlType T>
__global__ void __launch_bounds__(kThreads) attendKernel(AttendArgs a) {
    __shared__ float qs[kHeadsPerBlock][kMaxAttendHeadDim];
    __shared__ float sc[kHeadsPerBlock][kTile];
    __shared__ int64_t rowOf[kTile];
    __shared__ float runMax[kHeadsPerBlock], runSum[kHeadsPerBlock], rescale[kHeadsPerBlock];

    const AttendShape& sh = a.shape;
    const int tid = threadIdx.x, warp = tid / kWarpSize, lane = tid % kWarpSize;
    const int64_t tok = blockIdx.x;
    const int group = sh.nHead / sh.nHeadKv, chunks = (group + kHeadsPerBlock - 1) / kHeadsPerBlock;
    const int kvh = blockIdx.y / chunks, chunk = blockIdx.y % chunks;
    const int h0 = kvh * group + chunk * kHeadsPerBlock;
    const int heads = min(kHeadsPerBlock, group - chunk * kHeadsPerBlock);
    const int dk = sh.headDimK, dv = sh.headDimV;

    const int32_t pos = a.positions[tok];
    const int32_t first = sh.window > 0 ? max(0, pos - sh.window + 1) : 0;
    const int32_t len = pos - first + 1;
    // This split's keys [start, end): equal shares rounded up to whole tiles.
    int32_t share = (len + a.splits - 1) / a.splits;
    share = (share + kTile - 1) / kTile * kTile;
    const int32_t start = first + int32_t(blockIdx.z) * share;
    const int32_t end = min(pos + 1, start + share);
    const int32_t* table = a.tables.words + a.tables.tableOffsets[tok];
    const uint8_t* kBase = a.kv.k + kvBytes(T, int64_t(kvh) * dk);
    const uint8_t* vBase = a.kv.v + kvBytes(T, int64_t(kvh) * dv);

    const float* qt = a.q + (tok * sh.nHead + h0) * dk;
    for (int i = tid; i < heads * dk; i += kThreads) qs[i / dk][i % dk] = qt[i];
    if (tid < kHeadsPerBlock) {
        runMax[tid] = -INFINITY;
        runSum[tid] = 0.0f;
    }
    float acc[kHeadsPerBlock][kDimsPerThread];
#pragma unroll
    for (int g = 0; g < kHeadsPerBlock; ++g)
#pragma unroll
        for (int j = 0; j < kDimsPerThread; ++j) acc[g][j] = 0.0f;
    __syncthreads();

    for (int32_t t0 = start; t0 < end; t0 += kTile) {
        // Scores of the tile's keys (missing keys: -inf).
        for (int kk = warp; kk < kTile; kk += kWarps) {
            const int32_t p = t0 + kk;
            const int64_t row = p < end ? pagedRow(table, p, a.kv.pageSize) : -1;  // uniform over the warp
            if (lane == 0) rowOf[kk] = row;
            if (row < 0) {
                if (lane < heads) sc[lane][kk] = -INFINITY;
                continue;
            }
            const uint8_t* kr = kBase + row * int64_t(a.kv.rowBytes);
            float kv[kDimsPerLane];
#pragma unroll
            for (int j = 0; j < kDimsPerLane; ++j) {
                const int d = lane + kWarpSize * j;
                kv[j] = d < dk ? kvAt<T>(kr, d) : 0.0f;
            }
#pragma unroll
            for (int g = 0; g < kHeadsPerBlock; ++g) {
                if (g >= heads) break;
                float s = 0.0f;
#pragma unroll
                for (int j = 0; j < kDimsPerLane; ++j) {
                    const int d = lane + kWarpSize * j;
                    if (d < dk) s = fmaf(qs[g][d], kv[j], s);
                }
                s = warpSum(s);
                if (lane == 0) sc[g][kk] = s * sh.scale;
            }
        }
        __syncthreads();
        // Online softmax, a warp per head, a lane per key.
        for (int g = warp; g < heads; g += kWarps) {
            const float s = sc[g][lane];
            const float mOld = runMax[g];
            // -inf only while every key so far had a released page (never in
            // a valid step): then nothing is accumulated and nothing rescaled.
            const float mNew = fmaxf(mOld, warpMax(s));
            const float p = s == -INFINITY ? 0.0f : expf(s - mNew);
            const float alpha = mNew == -INFINITY ? 1.0f : expf(mOld - mNew);  // 0 while mOld is -inf
            const float sum = warpSum(p);
            sc[g][lane] = p;
            if (lane == 0) {
                runMax[g] = mNew;
                runSum[g] = runSum[g] * alpha + sum;
                rescale[g] = alpha;
            }
        }
        __syncthreads();
        const int keys = min(kTile, end - t0);
#pragma unroll
        for (int j = 0; j < kDimsPerThread; ++j) {
            const int d = tid + kThreads * j;
            if (d >= dv) break;
#pragma unroll
            for (int g = 0; g < kHeadsPerBlock; ++g)
                if (g < heads) acc[g][j] *= rescale[g];
            for (int kk = 0; kk < keys; ++kk) {
                const int64_t row = rowOf[kk];
                if (row < 0) continue;
                const float v = kvAt<T>(vBase + row * int64_t(a.kv.rowBytes), d);
#pragma unroll
                for (int g = 0; g < kHeadsPerBlock; ++g)
                    if (g < heads) acc[g][j] = fmaf(sc[g][kk], v, acc[g][j]);
            }
        }
        __syncthreads();  // the next tile rewrites sc and rowOf
    }

    if (a.splits == 1) {
#pragma unroll
        for (int g = 0; g < kHeadsPerBlock; ++g) {
            if (g >= heads) break;
            const float l = runSum[g], inv = l > 0.0f ? 1.0f / l : 0.0f;
            float* o = a.out + (tok * sh.nHead + h0 + g) * dv;
#pragma unroll
            for (int j = 0; j < kDimsPerThread; ++j) {
                const int d = tid + kThreads * j;
                if (d < dv) o[d] = acc[g][j] * inv;
            }
        }
        return;
    }
#pragma unroll
    for (int g = 0; g < kHeadsPerBlock; ++g) {
        if (g >= heads) break;
        float* part = a.partial + ((tok * sh.nHead + h0 + g) * a.splits + blockIdx.z) * int64_t(dv + 2);
        if (tid == 0) {
            part[0] = runMax[g];
            part[1] = runSum[g];
        }
#pragma unroll
        for (int j = 0; j < kDimsPerThread; ++j) {
            const int d = tid + kThreads * j;
            if (d < dv) part[2 + d] = acc[g][j];
        }
    }
}

// One block per (token, head): the splits' partial results, each weighted by
// e^(its max - the overall max).
__global__ void combineKernel(const float* __restrict__ partial, float* __restrict__ out, int nHead, int dv, int splits) {
    const int64_t th = int64_t(blockIdx.x) * nHead + blockIdx.y;
    const float* parts = partial + th * splits * int64_t(dv + 2);
    float m = -INFINITY;
    for (int s = 0; s < splits; ++s)
        if (parts[s * (dv + 2) + 1] > 0.0f) m = fmaxf(m, parts[s * (dv + 2)]);
    float total = 0.0f;
    for (int s = 0; s < splits; ++s) {
        const float l = parts[s * (dv + 2) + 1];
        if (l > 0.0f) total += l * expf(parts[s * (dv + 2)] - m);
    }
    const float inv = total > 0.0f ? 1.0f / total : 0.0f;
    for (int d = threadIdx.x; d < dv; d += blockDim.x) {
        float o = 0.0f;
        for (int s = 0; s < splits; ++s) {
            const float* p = parts + s * (dv + 2);
            if (p[1] > 0.0f) o = fmaf(p[2 + d], expf(p[0] - m), o);
        }
        out[th * dv + d] = o * inv;
    }
}

} // namespace

int32_t attendSplits(int64_t tokens, const AttendShape& shape) {
    if (tokens <= 0 || shape.nHeadKv <= 0) return 1;
    const int64_t blocks = tokens * shape.nHeadKv * headChunks(shape);
    return int32_t(std::clamp<int64_t>(kTargetBlocks / blocks, 1, kMaxSplits));
}

size_t attendScratchBytes(int64_t tokens, const AttendShape& shape) {
    const int32_t splits = attendSplits(tokens, shape);
    if (splits == 1) return 0;
    return size_t(tokens) * size_t(shape.nHead) * size_t(splits) * size_t(shape.headDimV + 2) * sizeof(float);
}

void pagedAttention(const float* q, float* out, int64_t n, const int32_t* positions, TokenTables tables,
                    const PagedKvRead& kv, const AttendShape& shape, float* scratch, cudaStream_t stream) {
    if (n <= 0 || shape.nHead <= 0 || shape.nHeadKv <= 0) return;
    AttendArgs a{q, out, positions, tables, kv, shape, attendSplits(n, shape), scratch};
    const dim3 grid(unsigned(n), unsigned(shape.nHeadKv * headChunks(shape)), unsigned(a.splits));
    switch (kv.type) {
    case GgmlType::F32: attendKernel<GgmlType::F32><<<grid, kThreads, 0, stream>>>(a); break;
    case GgmlType::F16: attendKernel<GgmlType::F16><<<grid, kThreads, 0, stream>>>(a); break;
    case GgmlType::Q8_0: attendKernel<GgmlType::Q8_0><<<grid, kThreads, 0, stream>>>(a); break;
    default: attendKernel<GgmlType::E4M3_KV><<<grid, kThreads, 0, stream>>>(a); break;
    }
    if (a.splits > 1)
        combineKernel<<<dim3(unsigned(n), unsigned(shape.nHead)), 128, 0, stream>>>(scratch, out, shape.nHead,
                                                                                  shape.headDimV, a.splits);
}

} // namespace weir::cuda
