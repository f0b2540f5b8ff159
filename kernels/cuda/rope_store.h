#pragma once
// The attention layer's per-token preparation on the device: rotary
// embedding of q and k, query scaling, and the K and V rows into the paged
// cache at each token's position.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::cuda {

struct RopeSpec {
    bool neox = true;                    // pairs (i, i + nRot/2); false: (2i, 2i+1)
    int32_t nRot = 0;                    // rotated dimensions per head
    float base = 10000.0f;
    float freqScale = 1.0f;
    const float* freqFactors = nullptr;  // nRot/2 divisors in device memory, or null
};

// Where K and V rows go: position p of a sequence is row
// table[p / pageSize] * pageSize + p % pageSize of k (and v), rowBytes apart.
struct PagedKvStore {
    uint8_t* k = nullptr;
    uint8_t* v = nullptr;
    GgmlType type = GgmlType::F16;       // F16, Q8_0, F32 or E4M3_KV
    size_t rowBytes = 0;
    int32_t pageSize = 0;
};

// Each token's sequence page table: the table of token i starts at
// words[tableOffsets[i]] (device int32 arrays).
struct TokenTables {
    const int32_t* words = nullptr;
    const int32_t* tableOffsets = nullptr;
};

// For each of n tokens: q (nHead x hdK floats) and k (nHeadKv x hdK) rotated
// in place at positions[i] with the angles of kernels::ropeAngles (theta
// stepped by repeated f32 multiplication, so they match the CPU's), q *=
// queryScale unless it is 0, then k and v (nHeadKv x hdV) stored in the
// cache (Q8_0 needs row widths that are multiples of 32). A token whose page
// is released (-1) is not stored.
void ropeAndStore(float* q, float* k, const float* v, int64_t n, int32_t nHead, int32_t nHeadKv, int32_t hdK, int32_t hdV,
                  const RopeSpec& rope, float queryScale, const int32_t* positions, TokenTables tables,
                  const PagedKvStore& kv, cudaStream_t stream);

} // namespace weir::cuda
