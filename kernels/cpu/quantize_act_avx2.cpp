// AVX2 versions of the activation conversions in quantize_act.cpp and
// row_float.cpp. They must produce the same bytes as the scalar code (the
// tests compare them): same f32 operations in the same order, round to
// nearest even everywhere.
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {

namespace {

using namespace blocks;
using namespace avx2;

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

inline __m256 absPs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// 32 int32 (four vectors, in element order) -> 32 int8 with saturation.
inline __m256i packInt8(__m256i a, __m256i b, __m256i c, __m256i d) {
    // packs works per 128-bit lane; the permute restores element order.
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline int hsumI32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

// One 32-element block scaled by amax: returns the four int32 vectors.
inline void quantize32(const float* x, __m256i q[4], float& d) {
    __m256 v[4];
    __m256 amaxV = _mm256_setzero_ps();
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        amaxV = _mm256_max_ps(amaxV, absPs(v[i]));
    }
    const float amax = hmax(amaxV);
    d = amax / 127.0f;
    const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], id), kRound));
}

} // namespace

void quantizeQ8_0Avx2(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<Q8_0*>(dst);
    for (int64_t b = 0; b < n / QK; ++b, x += QK) {
        __m256i q[4];
        float d;
        quantize32(x, q, d);
        y[b].d = _cvtss_sh(d, kRound);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), packInt8(q[0], q[1], q[2], q[3]));
    }
}

void quantizeQ8_1Avx2(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<Q8_1*>(dst);
    for (int64_t b = 0; b < n / QK; ++b, x += QK) {
        __m256i q[4];
        float d;
        quantize32(x, q, d);
        const __m256i packed = packInt8(q[0], q[1], q[2], q[3]);
        // Sum the saturated bytes, as the scalar code sums the stored int8 values.
        const __m256i lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(packed));
        const __m256i hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(packed, 1));
        const int sum = hsumI32(pairSum16(_mm256_add_epi16(lo, hi)));
        y[b].d = _cvtss_sh(d, kRound);
        y[b].s = _cvtss_sh(d * float(sum), kRound);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), packed);
    }
}

void quantizeQ8_KAvx2(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<Q8_K*>(dst);
    for (int64_t b = 0; b < n / QK_K; ++b, x += QK_K) {
        __m256 amaxV = _mm256_setzero_ps();
        for (int i = 0; i < QK_K; i += 8) amaxV = _mm256_max_ps(amaxV, absPs(_mm256_loadu_ps(x + i)));
        const float amax = hmax(amaxV);
        if (amax == 0.0f) {
            y[b] = Q8_K{};
            continue;
        }
        // The first element with |x| == amax fixes the sign (as the scalar scan does).
        float max = 0.0f;
        const __m256 amaxB = _mm256_set1_ps(amax);
        for (int i = 0; i < QK_K; i += 8) {
            const int mask = _mm256_movemask_ps(_mm256_cmp_ps(absPs(_mm256_loadu_ps(x + i)), amaxB, _CMP_EQ_OQ));
            if (mask) {
                max = x[i + __builtin_ctz(unsigned(mask))];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 is = _mm256_set1_ps(iscale), top = _mm256_set1_ps(127.0f);
        for (int i = 0; i < QK_K; i += 32) {
            __m256i q[4];
            #pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m256 r = _mm256_round_ps(_mm256_mul_ps(is, _mm256_loadu_ps(x + i + 8 * j)), kRound);
                q[j] = _mm256_cvtps_epi32(_mm256_min_ps(r, top));
            }
            y[b].bsums[i / 16] = int16_t(hsumI32(_mm256_add_epi32(q[0], q[1])));
            y[b].bsums[i / 16 + 1] = int16_t(hsumI32(_mm256_add_epi32(q[2], q[3])));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + i), packInt8(q[0], q[1], q[2], q[3]));
        }
        y[b].d = 1.0f / iscale;
    }
}

void convertRowF16Avx2(const float* x, void* dst, int64_t n) {
    auto* h = static_cast<uint16_t*>(dst);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), kRound));
    for (; i < n; ++i) h[i] = _cvtss_sh(x[i], kRound);
}

void convertRowBF16Avx2(const float* x, void* dst, int64_t n) {
    auto* h = static_cast<uint16_t*>(dst);
    int64_t i = 0;
    const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff), quiet = _mm256_set1_epi32(0x40);
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256i bits = _mm256_castps_si256(v);
        // Round to nearest even; NaN keeps its top bits and is made quiet.
        const __m256i rounded = _mm256_srli_epi32(
            _mm256_add_epi32(bits, _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(bits, 16), one))), 16);
        const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), quiet);
        const __m256i r = _mm256_blendv_epi8(rounded, nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), _mm256_castsi256_si128(packed));
    }
    for (; i < n; ++i) h[i] = f32ToBf16(x[i]);
}

} // namespace weir::kernels::detail
