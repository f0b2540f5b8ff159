// attend_tile_kernel.h built with AVX-512 (VL: 32 vector registers): 16 value
// chains. Only called when attendTileIsTiled() and vnniActive().
// GCC 12's 512-bit cast/extract intrinsics start from _mm512_undefined_*,
// which -Wmaybe-uninitialized reports where they are inlined (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/cpu/attend_tile_kernel.h"

namespace weir::kernels::attend_avx512 {

size_t scratchFloats(int64_t dk, int64_t dv) { return attend_tile_kernel::scratchFloats(dk, dv); }

void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, bool lanes16, float* scratch) {
    if (lanes16) attend_tile_kernel::attendTileImpl<true, 16>(queries, n, dk, dv, k, v, scale, scratch);
    else attend_tile_kernel::attendTileImpl<false, 16>(queries, n, dk, dv, k, v, scale, scratch);
}

void exp8(const float* x, float* out) { expf_libm::exp8(x, out); }
bool expMatchesLibm() { return attend_tile_kernel::vectorExpMatches(); }

} // namespace weir::kernels::attend_avx512
