// AVX2 row-dot kernels for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0/Q8_1
// activations (math in quant_legacy.cpp; the kernels in quant_legacy_rows.h).
// The integer dot here is AVX2's maddubs + madd; on CPUs with AVX-512 VNNI
// the same kernels run with vpdpbusd (quant_legacy_avx512.cpp).
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quant_legacy_rows.h"

namespace weir::kernels::detail {

namespace {

struct MaddubsDot {
    static constexpr int kMaxRows = kMaxLegacyDotRows;  // 16 ymm registers: 8 accumulators fit
    static __m256i i8i8(__m256i absW, __m256i w, __m256i x) { return dotI8I8(absW, w, x); }
    static __m256i u8i8(__m256i w, __m256i x) { return dotU8I8(w, x); }
};

} // namespace

float dotQ8_0RowsAvx2(const void* a, const void* b, int64_t n) {
    const auto* x = static_cast<const Q8_0*>(a);
    const auto* y = static_cast<const Q8_0*>(b);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / QK; ++i) {
        const __m256i qx = load(x[i].qs);
        const __m256i p = dotI8I8(_mm256_sign_epi8(qx, qx), qx, load(y[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(x[i].d) * f16(y[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum(acc);
}

int avx2MaxDotRows(GgmlType type) {
    if (!legacyRows<MaddubsDot>(type)) return kMaxDotRows;
    return vnniActive() ? kMaxVnniDotRows : kMaxLegacyDotRows;
}

RowDotFn avx2DotLegacy(GgmlType type) {
    if (vnniActive())
        if (RowDotFn f = avx512DotLegacy(type)) return f;
    return legacyRows<MaddubsDot>(type);
}

} // namespace weir::kernels::detail
