// The Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 kernels of quant_legacy_rows.h with AVX-512
// VNNI's vpdpbusd on 256-bit registers for the integer dot product: one
// instruction where AVX2 needs maddubs + madd, the same int32 sums, so the
// same results. Only called when vnniActive() (cpu_features.h).
#include "kernels/cpu/quant_legacy_rows.h"

namespace weir::kernels::detail {

namespace {

struct VnniDot {
    static constexpr int kMaxRows = kMaxVnniDotRows;  // 32 ymm registers with AVX-512VL
    static __m256i i8i8(__m256i absW, __m256i w, __m256i x) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), absW, _mm256_sign_epi8(x, w));
    }
    static __m256i u8i8(__m256i w, __m256i x) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, x); }
};

} // namespace

RowDotFn avx512DotLegacy(GgmlType type) { return legacyRows<VnniDot>(type); }

} // namespace weir::kernels::detail
