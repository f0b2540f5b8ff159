#pragma once
// Causal attention over a paged KV cache on the device, for decode steps and
// prefill chunks alike: every query token reads its sequence's keys from the
// cache (a prefill chunk's own K/V rows are stored before attention runs).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/rope_store.h"

namespace weir::cuda {

struct PagedKvRead {
    const uint8_t* k = nullptr;
    const uint8_t* v = nullptr;
    GgmlType type = GgmlType::F16;  // F16, Q8_0, F32 or E4M3_KV
    size_t rowBytes = 0;
    int32_t pageSize = 0;
};

struct AttendShape {
    int32_t nHead = 0, nHeadKv = 0;  // GQA: query head h reads KV head h / (nHead / nHeadKv)
    int32_t headDimK = 0, headDimV = 0;  // each at most kMaxAttendHeadDim
    int32_t window = 0;              // > 0: a token at p sees [max(0, p - window + 1), p]; 0: [0, p]
    float scale = 1.0f;              // scores = scale * q.k
};

inline constexpr int32_t kMaxAttendHeadDim = 256;

// Key splits of a launch (flash-decoding: each token's keys are cut in this
// many ranges, handled by separate blocks and combined). Depends only on the
// shape, never on positions, so a captured graph keeps its launches.
int32_t attendSplits(int64_t tokens, const AttendShape& shape);
// Device scratch bytes pagedAttention needs for these shapes.
size_t attendScratchBytes(int64_t tokens, const AttendShape& shape);

// out[i] (nHead x headDimV floats) = softmax(scale * q_i . k_p) . v_p over the
// positions p of token i's window, for the n tokens of q (nHead x headDimK
// floats each). Online softmax in f32; K and V are read in their cache type.
// positions, tables: as ropeAndStore. scratch: attendScratchBytes bytes.
void pagedAttention(const float* q, float* out, int64_t n, const int32_t* positions, TokenTables tables,
                    const PagedKvRead& kv, const AttendShape& shape, float* scratch, cudaStream_t stream);

} // namespace weir::cuda
