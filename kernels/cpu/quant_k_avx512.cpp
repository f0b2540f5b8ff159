// AVX-512 VNNI variants of the Q4_K, Q5_K (and Q6_K, below) kernels of
// quant_k_avx2.cpp in the float orders of llama.cpp's row dot and tiled kernel
// (kOrder 0 and 3 there). Its Q4_K four-row and one-row orders stay with the
// AVX2 kernels, which are faster for them here: they need each pair's sum on
// its own, and folding 512-bit registers costs more than VNNI saves. A 512-bit register holds the
// 64 elements of sub-blocks 2c and 2c+1 (low and high nibbles of qs[32c..]),
// which are 64 consecutive activation bytes: one vpdpbusd gives 16 int32 sums
// of four products (lanes 0-7 sub-block 2c, 8-15 sub-block 2c+1, the lane
// layout of AVX2's maddubs + madd), and one vpdpwssd weights them with the
// sub-block scales: each sum is below 2^15 in magnitude (4 * 31 * 128), so as
// int16 pairs it reads (sum, sign), and times (scale, 0) that gives sum * scale.
// The integer sums are those of the AVX2 kernels and the float operations are
// the same, so results are bit-identical. Only called when vnniActive().
#include <cmath>
#include <type_traits>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

// GCC 12's 512-bit insert/extract intrinsics start from _mm512_undefined_*,
// which -Wuninitialized reports where they are inlined (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace weir::kernels::detail {

namespace {

using namespace blocks;
using namespace avx2;

const Q8_K* actRow(const void* act, size_t actStride, int r) {
    return reinterpret_cast<const Q8_K*>(static_cast<const uint8_t*>(act) + r * actStride);
}

inline __m256i lo256(__m512i v) { return _mm512_castsi512_si256(v); }
inline __m256i hi256(__m512i v) { return _mm512_extracti64x4_epi64(v, 1); }

// Exact sum of the four int32 lanes.
inline int32_t hsum4(__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4e));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xb1));
    return _mm_cvtsi128_si32(v);
}

// Sums of the activation block's bsums in pairs: 8 int16, one per 32-element sub-block.
inline __m128i subBlockSums(const Q8_K& x) {
    const __m256i b = load(x.bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

template <class Block, int NX, int kOrder>
void dotScaleMin(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    constexpr bool kFiveBits = std::is_same_v<Block, Q5_K>;
    const auto* wb = static_cast<const Block*>(w);
    const Q8_K* xb[NX];
    __m256 acc[NX];
    float accS[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        xb[r] = actRow(act, actStride, r);
        acc[r] = _mm256_setzero_ps();
        accS[r] = 0.0f;
    }
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const Block& b = wb[i];
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<sizeof(Block)>(&b);
        uint64_t scBytes, mBytes;
        kScalesMins(b.scales, scBytes, mBytes);
        const __m128i mins = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(mBytes)));
        const __m512i sc32 = _mm512_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(scBytes)));
        const float dw = f16(b.d), dminw = f16(b.dmin);

        __m512i isum[NX];
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) isum[r] = _mm512_setzero_si512();
        __m256i hbits;
        if constexpr (kFiveBits) hbits = load(b.qh);
        #pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m256i bits = load(b.qs + 32 * c);
            __m256i lo = _mm256_and_si256(bits, low4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
            if constexpr (kFiveBits) {
                const __m256i b4 = _mm256_set1_epi8(0x10);
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * c), 4), b4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * c + 1), 4), b4));
            }
            const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
            // Scales of sub-blocks 2c (lanes 0-7) and 2c+1 (lanes 8-15) as int32.
            const __m512i sc = _mm512_permutexvar_epi32(
                _mm512_setr_epi32(2 * c, 2 * c, 2 * c, 2 * c, 2 * c, 2 * c, 2 * c, 2 * c, 2 * c + 1, 2 * c + 1, 2 * c + 1,
                                  2 * c + 1, 2 * c + 1, 2 * c + 1, 2 * c + 1, 2 * c + 1),
                sc32);
            #pragma GCC unroll 4
            for (int r = 0; r < NX; ++r) {
                const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_loadu_si512(xb[r][i].qs + 64 * c));
                isum[r] = _mm512_dpwssd_epi32(isum[r], p, sc);
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) {
            const float dx = xb[r][i].d;
            const __m128i m32 = _mm_madd_epi16(mins, subBlockSums(xb[r][i]));  // 4 int32
            if constexpr (kOrder == 3) {
                const float res = std::fma(-dminw, float(hsum4(m32)), dw * float(_mm512_reduce_add_epi32(isum[r])));
                accS[r] = std::fma(res, dx, accS[r]);
            } else {
                const __m256i sumi = _mm256_add_epi32(lo256(isum[r]), hi256(isum[r]));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dx * dw), _mm256_cvtepi32_ps(sumi), acc[r]);
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(-dx * dminw), _mm256_zextps128_ps256(_mm_cvtepi32_ps(m32)), acc[r]);
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) out[r * outStride] = kOrder ? accS[r] : hsum(acc[r]);
}

// Q6_K: a 512-bit register holds 64 consecutive elements (parts 2j and 2j+1
// of half h in quant_k_avx2.cpp's terms), four groups of 16 with their own
// signed scales; sums stay below 2^15 (4 * 63 * 128). kOrder: 0 = row-dot
// (float lanes), 3 = tiled.
template <int NX, int kOrder>
void dotQ6(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    const auto* wb = static_cast<const Q6_K*>(w);
    const Q8_K* xb[NX];
    __m256 acc[NX];
    float accS[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        xb[r] = actRow(act, actStride, r);
        acc[r] = _mm256_setzero_ps();
        accS[r] = 0.0f;
    }
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const Q6_K& b = wb[i];
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<sizeof(Q6_K)>(&b);
        const float dw = f16(b.d);
        const __m128i scales8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
        const __m256i scales16 = _mm256_cvtepi8_epi16(scales8);
        // As int16 pairs (scale, 0): the high half must be 0, not the sign.
        const __m512i sc32 = _mm512_and_si512(_mm512_cvtepi8_epi32(scales8), _mm512_set1_epi32(0xffff));
        __m512i isum[NX];
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) isum[r] = _mm512_setzero_si512();
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = load(b.ql + 64 * h), ql1 = load(b.ql + 64 * h + 32);
            const __m256i qh = load(b.qh + 32 * h);
            #pragma GCC unroll 2
            for (int j = 0; j < 2; ++j) {  // parts 2j (low 256 bits) and 2j + 1
                const __m256i n0 = _mm256_and_si256(j ? _mm256_srli_epi16(ql0, 4) : ql0, low4);
                const __m256i n1 = _mm256_and_si256(j ? _mm256_srli_epi16(ql1, 4) : ql1, low4);
                const __m256i q0 = _mm256_or_si256(n0, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(qh, 4 * j), 4), bits45));
                const __m256i q1 = _mm256_or_si256(n1, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(qh, 4 * j + 2), 4), bits45));
                const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
                const int g = 8 * h + 4 * j;  // groups g .. g + 3, four lanes each
                const __m512i sc = _mm512_permutexvar_epi32(
                    _mm512_setr_epi32(g, g, g, g, g + 1, g + 1, g + 1, g + 1, g + 2, g + 2, g + 2, g + 2, g + 3, g + 3,
                                      g + 3, g + 3),
                    sc32);
                #pragma GCC unroll 4
                for (int r = 0; r < NX; ++r) {
                    const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q,
                                                          _mm512_loadu_si512(xb[r][i].qs + 128 * h + 64 * j));
                    isum[r] = _mm512_dpwssd_epi32(isum[r], p, sc);
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) {
            // q - 32: subtract 32 * sum_g scale_g * bsum_g, lane by lane as the AVX2 kernel does.
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load(xb[r][i].bsums)), 5);
            const __m256i sumi = _mm256_sub_epi32(_mm256_add_epi32(lo256(isum[r]), hi256(isum[r])), offset);
            if constexpr (kOrder == 3) {
                accS[r] = std::fma(dw * float(hsum4(_mm_add_epi32(_mm256_castsi256_si128(sumi), _mm256_extracti128_si256(sumi, 1)))),
                                   xb[r][i].d, accS[r]);
            } else {
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(xb[r][i].d * dw), _mm256_cvtepi32_ps(sumi), acc[r]);
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) out[r * outStride] = kOrder ? accS[r] : hsum(acc[r]);
}

template <int kOrder>
void dotRowsQ6(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dotQ6<1, kOrder>(w, act, actStride, k, out, outStride); break;
    case 2: dotQ6<2, kOrder>(w, act, actStride, k, out, outStride); break;
    case 3: dotQ6<3, kOrder>(w, act, actStride, k, out, outStride); break;
    default: dotQ6<4, kOrder>(w, act, actStride, k, out, outStride); break;
    }
}

template <class Block, int kOrder>
void dotRowsScaleMin(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dotScaleMin<Block, 1, kOrder>(w, act, actStride, k, out, outStride); break;
    case 2: dotScaleMin<Block, 2, kOrder>(w, act, actStride, k, out, outStride); break;
    case 3: dotScaleMin<Block, 3, kOrder>(w, act, actStride, k, out, outStride); break;
    default: dotScaleMin<Block, 4, kOrder>(w, act, actStride, k, out, outStride); break;
    }
}

} // namespace

RowDotFn avx512DotK(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_K: return dotRowsScaleMin<Q4_K, 0>;
    case GgmlType::Q5_K: return dotRowsScaleMin<Q5_K, 0>;
    case GgmlType::Q6_K: return dotRowsQ6<0>;
    default: return nullptr;
    }
}

RowDotFn avx512DotKTiled(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_K: return dotRowsScaleMin<Q4_K, 3>;
    case GgmlType::Q5_K: return dotRowsScaleMin<Q5_K, 3>;
    case GgmlType::Q6_K: return dotRowsQ6<3>;
    default: return nullptr;
    }
}

} // namespace weir::kernels::detail
