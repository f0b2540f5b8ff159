// attendTile (attend_tile.h): the tile kernel where it applies (with AVX-512's
// registers where the AVX-512 kernels are on), else attendHead once per query.
#include "kernels/cpu/attend_tile.h"

#include <algorithm>

#include "kernels/cpu/attend_tile_simd.h"
#include "kernels/cpu/cpu_features.h"

namespace weir::kernels {

size_t attendTileScratchFloats(int64_t dk, int64_t dv) {
    return std::max(attendScratchFloats(dk, dv), attend_avx2::scratchFloats(dk, dv));  // both builds: the same layout
}

bool attendTileIsTiled(GgmlType kType, GgmlType vType, int64_t dk, int64_t dv) {
    if (activeKernelPath() != KernelPath::Avx2) return false;
    if (kType != GgmlType::F16 || vType != GgmlType::F16) return false;
    if (dk <= 0 || dv <= 0 || dv % 32 != 0) return false;
    return dk % (avx512VariantsActive() ? 64 : 32) == 0;
}

void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, float* scratch) {
    // One query shares nothing: attendHead is a little faster for it.
    if (n > 1 && attendTileIsTiled(k.type, v.type, dk, dv)) {
        const bool lanes16 = avx512VariantsActive();
        const auto tile = vnniActive() ? attend_avx512::attendTile : attend_avx2::attendTile;
        for (int i = 0; i < n; i += kAttendTileMaxQueries)
            tile(queries + i, std::min(n - i, kAttendTileMaxQueries), dk, dv, k, v, scale, lanes16, scratch);
        return;
    }
    for (int i = 0; i < n; ++i)
        attendHead(queries[i].q, dk, dv, k, v, queries[i].first, queries[i].last, scale, queries[i].out, scratch);
}

} // namespace weir::kernels
