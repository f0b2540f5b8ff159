#pragma once
// Attention for a tile of queries that read the same keys and values: several
// tokens of one sequence times the query heads of one GQA group. Each query
// gets exactly the bits attendHead (ops.h) would give it: the same f16
// rounding of the query, the same dot-product lane order, the same std::exp
// calls in position order and the same f16 rounding of the value accumulator
// after every step. What the tile saves is the work they share: each K and V
// row is converted to f32 once per tile instead of once per query, and the
// queries' independent chains run back to back, which hides their latency.
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ops.h"

namespace weir::kernels {

// One query of a tile: dk values in, dv values out, attending to the
// positions [first, last] (queries of one tile may have different ranges).
struct AttendQuery {
    const float* q = nullptr;
    float* out = nullptr;
    int32_t first = 0;
    int32_t last = -1;
};

// The most queries the kernel takes at once (attendTile splits larger tiles).
constexpr int kAttendTileMaxQueries = 64;

// Floats of scratch attendTile needs for up to kAttendTileMaxQueries queries
// with head sizes dk, dv.
size_t attendTileScratchFloats(int64_t dk, int64_t dv);

// Whether attendTile runs its own tiled kernel for K/V rows of these types and
// head sizes on this CPU (F16 K and V, the AVX2 path, dk a multiple of 64 (32
// without the AVX-512 variants), dv a multiple of 32). Otherwise it calls
// attendHead once per query, with the same result.
bool attendTileIsTiled(GgmlType kType, GgmlType vType, int64_t dk, int64_t dv);

// out = attendHead(q, ..., first, last, ...) for each of the n queries, all
// over the same K and V rows (kAttendTileMaxQueries at a time). `scratch`
// holds attendTileScratchFloats(dk, dv) floats.
void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, float* scratch);

} // namespace weir::kernels
