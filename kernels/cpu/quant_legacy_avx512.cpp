// The Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 kernels of quant_legacy_rows.h with AVX-512
// VNNI's vpdpbusd on 256-bit registers for the integer dot product: one
// instruction where AVX2 needs maddubs + madd, the same int32 sums, so the
// same results. Only called when vnniActive() (cpu_features.h).
//
// And, for the signed types (Q4_0, Q5_0, Q8_0), a kernel that takes two
// weight rows at once in 512-bit registers: lanes 0-7 belong to the first
// row, 8-15 to the second, each doing exactly the arithmetic of the 256-bit
// kernel. One activation load, one int8 dot and one scale multiply then serve
// both rows, and the per-block scale product is a vector op instead of a
// scalar multiply and broadcast per row.
#include "kernels/cpu/quant_legacy_rows.h"

// GCC 12's 512-bit insert/extract/broadcast intrinsics start from
// _mm512_undefined_*, which -Wuninitialized reports where they are inlined
// (GCC bug 105593); nothing here reads an uninitialized value.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace weir::kernels::detail {

namespace {

struct VnniDot {
    static constexpr int kMaxRows = kMaxVnniDotRows;  // 32 ymm registers with AVX-512VL
    static __m256i i8i8(__m256i absW, __m256i w, __m256i x) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), absW, _mm256_sign_epi8(x, w));
    }
    static __m256i u8i8(__m256i w, __m256i x) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, x); }
};

// Signed weight types as unsigned bytes q + kOffset (vpdpbusd's first operand
// must be unsigned): sum(q * x) = sum((q + kOffset) * x) - kOffset * sum(x),
// exact in int32 lane by lane (4 products of at most 255 * 128 per lane).
struct BiasedQ4_0 {
    using Block = Q4_0;
    static constexpr int kOffset = 8;
    static __m256i q(const Block& b) { return nibbles32(b.qs); }
};
struct BiasedQ5_0 {
    using Block = Q5_0;
    static constexpr int kOffset = 16;
    static __m256i q(const Block& b) {
        return _mm256_or_si256(nibbles32(b.qs), _mm256_and_si256(bitsToBytes(loadU32(b.qh)), _mm256_set1_epi8(0x10)));
    }
};
struct BiasedQ8_0 {
    using Block = Q8_0;
    static constexpr int kOffset = 128;
    static __m256i q(const Block& b) { return _mm256_xor_si256(load(b.qs), _mm256_set1_epi8(char(0x80))); }
};

// Rows w and w + wStride against NX activation rows (Q8_0 blocks, then f32
// scales, as actRowBytes lays them out, then the corrections of
// avx512PairCorrections: -kOffset * sum(x) per lane, the start of each lane's
// integer dot, so the correction costs a load instead of two instructions).
template <class U, int NX>
void dotPair(const void* w, size_t wStride, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    const auto* w0 = static_cast<const typename U::Block*>(w);
    const auto* w1 = reinterpret_cast<const typename U::Block*>(static_cast<const uint8_t*>(w) + wStride);
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Q8_0)), corrAt = pairCorrectionsOffset(k);
    const auto* a = static_cast<const uint8_t*>(act);
    __m512 acc[NX];
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(U::q(w0[i])), U::q(w1[i]), 1);
        const __m512 dw = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(f16(w0[i].d)))),
                                                              _mm256_castps_pd(_mm256_set1_ps(f16(w1[i].d))), 1));
        #pragma GCC unroll 16
        for (int r = 0; r < NX; ++r) {
            const uint8_t* row = a + r * actStride;
            const __m512i x = _mm512_broadcast_i64x4(load(reinterpret_cast<const Q8_0*>(row)[i].qs));
            const __m512i corr = _mm512_broadcast_i64x4(load(row + corrAt + 32 * i));
            const __m512i p = _mm512_dpbusd_epi32(corr, q, x);
            const float xd = reinterpret_cast<const float*>(row + scalesAt)[i];
            acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(xd)), _mm512_cvtepi32_ps(p), acc[r]);
        }
    }
    // "+ 0.0f" as the 256-bit kernel adds its (zero) minimum term: -0 becomes +0 alike.
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) {
        out[r * outStride] = hsum(_mm512_castps512_ps256(acc[r])) + 0.0f;
        out[r * outStride + 1] = hsum(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r]), 1))) + 0.0f;
    }
}

template <class U, int N = kMaxVnniDotRows>
void dotPairRows(const void* w, size_t wStride, const void* act, size_t actStride, int nx, int64_t k, float* out,
                 size_t outStride) {
    if constexpr (N == 1) {
        dotPair<U, 1>(w, wStride, act, actStride, k, out, outStride);
    } else {
        if (nx >= N) return dotPair<U, N>(w, wStride, act, actStride, k, out, outStride);
        dotPairRows<U, N - 1>(w, wStride, act, actStride, nx, k, out, outStride);
    }
}

template <class U>
void corrections(const void* actRow, int64_t k, void* dst) {
    const auto* x = static_cast<const Q8_0*>(actRow);
    auto* out = static_cast<uint8_t*>(dst);
    const __m256i offset = _mm256_set1_epi8(char(U::kOffset));
    for (int64_t i = 0; i < k / QK; ++i) {
        const __m256i sum = _mm256_dpbusd_epi32(_mm256_setzero_si256(), offset, load(x[i].qs));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * i), _mm256_sub_epi32(_mm256_setzero_si256(), sum));
    }
}

} // namespace

RowDotFn avx512DotLegacy(GgmlType type) { return legacyRows<VnniDot>(type); }

PairDotFn avx512PairDotLegacy(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return dotPairRows<BiasedQ4_0>;
    case GgmlType::Q5_0: return dotPairRows<BiasedQ5_0>;
    case GgmlType::Q8_0: return dotPairRows<BiasedQ8_0>;
    default: return nullptr;
    }
}

void avx512PairCorrections(GgmlType type, const void* actRow, int64_t k, void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return corrections<BiasedQ4_0>(actRow, k, dst);
    case GgmlType::Q5_0: return corrections<BiasedQ5_0>(actRow, k, dst);
    default: return corrections<BiasedQ8_0>(actRow, k, dst);
    }
}

} // namespace weir::kernels::detail
