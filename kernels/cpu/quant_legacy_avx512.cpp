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

// Rows w and w + wStride against NX activation rows (Q8_0 blocks, then f32
// scales, as actRowBytes lays them out, then the corrections of
// avx512PairCorrections: -kOffset * sum(x) per lane, the start of each lane's
// integer dot, so the correction costs a load instead of two instructions).
//
// Src says where a pair's blocks come from: RawPair unpacks the two rows'
// blocks on the fly, PackedPair reads what avx512PackPairs wrote once per
// matmul, which saves the unpacking for every 16 activation rows.
inline __m512 scalePair(float d0, float d1) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(d0))),
                                               _mm256_castps_pd(_mm256_set1_ps(d1)), 1));
}

template <class U>
struct RawPair {
    const typename U::Block *w0, *w1;
    RawPair(const void* w, size_t wStride)
        : w0(static_cast<const typename U::Block*>(w)),
          w1(reinterpret_cast<const typename U::Block*>(static_cast<const uint8_t*>(w) + wStride)) {}
    __m512i q(int64_t i) const { return _mm512_inserti64x4(_mm512_castsi256_si512(U::q(w0[i])), U::q(w1[i]), 1); }
    __m512 d(int64_t i) const { return scalePair(f16(w0[i].d), f16(w1[i].d)); }
    // The two rows are adjacent: block i of both is 2 blocks into the pair's bytes.
    void prefetch(int64_t i) const { prefetchWeights<2 * sizeof(typename U::Block)>(w0 + 2 * i); }
    static constexpr bool kActBiased = false;
};

// Per block: the two rows' 32 biased weight bytes each, then their scales as f32.
constexpr size_t kPackedBlockBytes = 64 + 8;

struct PackedPair {
    static constexpr bool kActBiased = false;
    const uint8_t* p;
    PackedPair(const void* w, size_t) : p(static_cast<const uint8_t*>(w)) {}
    void prefetch(int64_t i) const { prefetchWeights<kPackedBlockBytes>(p + kPackedBlockBytes * size_t(i)); }
    __m512i q(int64_t i) const { return _mm512_loadu_si512(p + kPackedBlockBytes * size_t(i)); }
    __m512 d(int64_t i) const {
        const float* s = reinterpret_cast<const float*>(p + kPackedBlockBytes * size_t(i) + 64);
        return scalePair(s[0], s[1]);
    }
};

// The layout of PackedPair with the weights as signed bytes (what
// avx512PackPairsSigned writes), for activation rows whose bytes are biased
// to unsigned instead (avx512BiasActivations): sum(x * q) = sum((x + 128) *
// q) - 128 * sum(q), the correction now a property of the weights, made once
// per block for all activation rows rather than loaded for each (12-15% of a
// prefill GEMM's time). The int32 lane sums, and so the results, are the
// other kernels'.
struct SignedPackedPair : PackedPair {
    static constexpr bool kActBiased = true;
    using PackedPair::PackedPair;
};

template <class Src, int NX>
void dotPair(const void* w, size_t wStride, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    const Src src(w, wStride);
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Q8_0)), corrAt = pairCorrectionsOffset(k);
    const auto* a = static_cast<const uint8_t*>(act);
    __m512 acc[NX];
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        if constexpr (NX <= kPrefetchMaxRows) src.prefetch(i);
        const __m512i q = src.q(i);
        const __m512 dw = src.d(i);
        __m512i weightCorr = _mm512_setzero_si512();
        if constexpr (Src::kActBiased)  // -128 x each lane's four weights
            weightCorr = _mm512_sub_epi32(weightCorr, _mm512_dpbusd_epi32(weightCorr, _mm512_set1_epi8(char(0x80)), q));
        #pragma GCC unroll 16
        for (int r = 0; r < NX; ++r) {
            const uint8_t* row = a + r * actStride;
            const __m512i x = _mm512_broadcast_i64x4(load(reinterpret_cast<const Q8_0*>(row)[i].qs));
            __m512i p;
            if constexpr (Src::kActBiased) {
                p = _mm512_dpbusd_epi32(weightCorr, x, q);
            } else {
                const __m512i corr = _mm512_broadcast_i64x4(load(row + corrAt + 32 * i));
                p = _mm512_dpbusd_epi32(corr, q, x);
            }
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

template <class Src, int N = kMaxVnniDotRows>
void dotPairRows(const void* w, size_t wStride, const void* act, size_t actStride, int nx, int64_t k, float* out,
                 size_t outStride) {
    if constexpr (N == 1) {
        dotPair<Src, 1>(w, wStride, act, actStride, k, out, outStride);
    } else {
        if (nx >= N) return dotPair<Src, N>(w, wStride, act, actStride, k, out, outStride);
        dotPairRows<Src, N - 1>(w, wStride, act, actStride, nx, k, out, outStride);
    }
}

// Pairs [pairBegin, pairEnd) in PackedPair's layout: biased bytes, or with
// Signed the signed weights SignedPackedPair reads.
template <class U, bool Signed>
void packPairs(const void* w, size_t rowStride, int64_t k, int64_t pairBegin, int64_t pairEnd, void* dst) {
    const int64_t nb = k / QK;
    for (int64_t pr = pairBegin; pr < pairEnd; ++pr) {
        const RawPair<U> src(static_cast<const uint8_t*>(w) + size_t(2 * pr) * rowStride, rowStride);
        uint8_t* o = static_cast<uint8_t*>(dst) + size_t(pr * nb) * kPackedBlockBytes;
        for (int64_t i = 0; i < nb; ++i, o += kPackedBlockBytes) {
            if constexpr (Signed) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), signedQ<U>(src.w0[i]));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 32), signedQ<U>(src.w1[i]));
            } else {
                _mm512_storeu_si512(o, src.q(i));
            }
            const float d[2] = {f16(src.w0[i].d), f16(src.w1[i].d)};
            std::memcpy(o + 64, d, sizeof d);
        }
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
    case GgmlType::Q4_0: return dotPairRows<RawPair<BiasedQ4_0>>;
    case GgmlType::Q5_0: return dotPairRows<RawPair<BiasedQ5_0>>;
    case GgmlType::Q8_0: return dotPairRows<RawPair<BiasedQ8_0>>;
    default: return nullptr;
    }
}

size_t avx512PackedPairBytes(int64_t k) { return size_t(k / QK) * kPackedBlockBytes; }

void avx512PackPairs(GgmlType type, const void* w, size_t rowStride, int64_t k, int64_t pairBegin, int64_t pairEnd,
                     void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return packPairs<BiasedQ4_0, false>(w, rowStride, k, pairBegin, pairEnd, dst);
    case GgmlType::Q5_0: return packPairs<BiasedQ5_0, false>(w, rowStride, k, pairBegin, pairEnd, dst);
    default: return packPairs<BiasedQ8_0, false>(w, rowStride, k, pairBegin, pairEnd, dst);
    }
}

PairDotFn avx512PackedPairDot() { return dotPairRows<PackedPair>; }

void avx512PackPairsSigned(GgmlType type, const void* w, size_t rowStride, int64_t k, int64_t pairBegin, int64_t pairEnd,
                           void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return packPairs<BiasedQ4_0, true>(w, rowStride, k, pairBegin, pairEnd, dst);
    case GgmlType::Q5_0: return packPairs<BiasedQ5_0, true>(w, rowStride, k, pairBegin, pairEnd, dst);
    default: return packPairs<BiasedQ8_0, true>(w, rowStride, k, pairBegin, pairEnd, dst);
    }
}

PairDotFn avx512SignedPackedPairDot() { return dotPairRows<SignedPackedPair>; }

void avx512BiasActivations(void* actRow, int64_t k) {
    auto* x = static_cast<Q8_0*>(actRow);
    const __m256i bias = _mm256_set1_epi8(char(0x80));
    for (int64_t i = 0; i < k / QK; ++i)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(x[i].qs), _mm256_xor_si256(load(x[i].qs), bias));
}

void avx512PairCorrections(GgmlType type, const void* actRow, int64_t k, void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return corrections<BiasedQ4_0>(actRow, k, dst);
    case GgmlType::Q5_0: return corrections<BiasedQ5_0>(actRow, k, dst);
    default: return corrections<BiasedQ8_0>(actRow, k, dst);
    }
}

} // namespace weir::kernels::detail
