// attend_tile_kernel.h built for AVX2 + FMA + F16C: 8 value chains in 16 registers.
// Only called when attendTileIsTiled().
#include "kernels/cpu/attend_tile_kernel.h"

namespace weir::kernels::attend_avx2 {

size_t scratchFloats(int64_t dk, int64_t dv) { return attend_tile_kernel::scratchFloats(dk, dv); }

void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, bool lanes16, float* scratch) {
    if (lanes16) attend_tile_kernel::attendTileImpl<true, 8>(queries, n, dk, dv, k, v, scale, scratch);
    else attend_tile_kernel::attendTileImpl<false, 8>(queries, n, dk, dv, k, v, scale, scratch);
}

void exp8(const float* x, float* out) { expf_libm::exp8(x, out); }
bool expMatchesLibm() { return attend_tile_kernel::vectorExpMatches(); }

} // namespace weir::kernels::attend_avx2
