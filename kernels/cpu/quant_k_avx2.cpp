// AVX2 row-dot kernels for Q4_K, Q5_K, Q6_K against Q8_K activations (math
// in quant_k.cpp). Per super-block: unsigned weight bytes times signed
// activation bytes (maddubs), weighted by the integer sub-block scales
// (madd), summed in int32; the minima (Q4_K/Q5_K) and Q6_K's -32 offset come
// from the activation block's bsums.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {

namespace {

using namespace blocks;
using namespace avx2;

const Q8_K* actRow(const void* act, size_t actStride, int r) {
    return reinterpret_cast<const Q8_K*>(static_cast<const uint8_t*>(act) + r * actStride);
}

// Exact sum of the first n int32 lanes (n = 4 or 8).
inline int32_t hsumInt(__m256i v, int n = 8) {
    alignas(32) int32_t t[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
    int32_t s = 0;
    for (int j = 0; j < n; ++j) s += t[j];
    return s;
}

// Sums of the activation block's bsums in pairs: 8 int16, one per 32-element sub-block.
inline __m128i subBlockSums(const Q8_K& x) {
    const __m256i b = load(x.bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

// Q4_K and Q5_K share everything but the fifth bit. kOrder picks the float
// arithmetic to reproduce: 0 = llama.cpp's plain row-dot (8 float lanes,
// summed at the end); llama.cpp's interleaved Q4_K kernels (used there for
// Q4_K matrices whose row count is a multiple of 8) instead turn integer sums
// into one float each and accumulate them with one fused multiply-add apiece,
// scales and minima apart, minima subtracted at the end: per super-block in
// its single-row kernel (1), per pair of sub-blocks in its four-row kernel (2).
// 3: llama.cpp's tiled kernel (K-quant matrices it does not repack, batches of
// 8+ rows): per super-block r = dw*isum - dmin*imin (fused), acc = fma(r, dx, acc).
template <class Block, int NX, int kOrder = 0>
void dotScaleMin(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    constexpr bool kFiveBits = std::is_same_v<Block, Q5_K>;
    const auto* wb = static_cast<const Block*>(w);
    const Q8_K* xb[NX];
    __m256 acc[NX];
    float accS[NX], accM[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        xb[r] = actRow(act, actStride, r);
        acc[r] = _mm256_setzero_ps();
        accS[r] = accM[r] = 0.0f;
    }
    __m128 accS4 = _mm_setzero_ps(), accM4 = _mm_setzero_ps();  // orders 1 and 2, four rows: accS, accM by lane
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const Block& b = wb[i];
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<sizeof(Block)>(&b);
        uint64_t scBytes, mBytes;
        kScalesMins(b.scales, scBytes, mBytes);
        const __m128i mins = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(mBytes)));
        // The 8 scales as int16 in both 128-bit lanes; sub-block s's scale is
        // broadcast with a byte shuffle picking bytes 2s, 2s+1.
        const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(scBytes))));
        __m256i pickLo = _mm256_set1_epi16(0x0100), pickHi = _mm256_set1_epi16(0x0302);
        const float dw = f16(b.d), dminw = f16(b.dmin);

        __m256i sumi[NX];
        // kOrder 2 wants each pair's sum on its own: the pair sums of c = 0, 1
        // and of c = 2, 3 are folded with hadd as they come (exact integers).
        __m256i half01[NX], even[NX];
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) sumi[r] = _mm256_setzero_si256();
        __m256i hbits;
        if constexpr (kFiveBits) hbits = load(b.qh);
        #pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles) and 2c+1 (high)
            const __m256i bits = load(b.qs + 32 * c);
            __m256i lo = _mm256_and_si256(bits, low4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
            if constexpr (kFiveBits) {
                // Bit s of qh[l] moves to bit 4 of the byte (the 16-bit shifts never
                // carry a neighbour's bit into position 4).
                const __m256i b4 = _mm256_set1_epi8(0x10);
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * c), 4), b4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(hbits, 2 * c + 1), 4), b4));
            }
            const __m256i scLo = _mm256_shuffle_epi8(scales, pickLo), scHi = _mm256_shuffle_epi8(scales, pickHi);
            pickLo = _mm256_add_epi16(pickLo, _mm256_set1_epi16(0x0404));
            pickHi = _mm256_add_epi16(pickHi, _mm256_set1_epi16(0x0404));
            #pragma GCC unroll 4
            for (int r = 0; r < NX; ++r) {
                const int8_t* q8 = xb[r][i].qs + 64 * c;
                const __m256i pLo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load(q8)), scLo);
                const __m256i pHi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load(q8 + 32)), scHi);
                if constexpr (kOrder == 2) {
                    const __m256i pair = _mm256_add_epi32(pLo, pHi);
                    if (c == 0 || c == 2) even[r] = pair;
                    else if (c == 1) half01[r] = _mm256_hadd_epi32(even[r], pair);
                    else sumi[r] = _mm256_hadd_epi32(half01[r], _mm256_hadd_epi32(even[r], pair));
                } else {
                    sumi[r] = _mm256_add_epi32(sumi[r], _mm256_add_epi32(pLo, pHi));
                }
            }
        }
        if constexpr (kOrder == 2 && NX == 4) {
            // Four rows: as below, transposed so that lane r is row r and one
            // vector fused multiply-add per pair serves all four rows.
            __m128 sv[4], mv[4];
            #pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) {
                sv[r] = _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(sumi[r]), _mm256_extracti128_si256(sumi[r], 1)));
                mv[r] = _mm_cvtepi32_ps(_mm_madd_epi16(mins, subBlockSums(xb[r][i])));
            }
            _MM_TRANSPOSE4_PS(sv[0], sv[1], sv[2], sv[3]);
            _MM_TRANSPOSE4_PS(mv[0], mv[1], mv[2], mv[3]);
            const __m128 dx = _mm_setr_ps(xb[0][i].d, xb[1][i].d, xb[2][i].d, xb[3][i].d);
            const __m128 sw = _mm_mul_ps(_mm_set1_ps(dw), dx), mw = _mm_mul_ps(_mm_set1_ps(dminw), dx);
            #pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                accS4 = _mm_fmadd_ps(sv[c], sw, accS4);
                accM4 = _mm_fmadd_ps(mv[c], mw, accM4);
            }
            continue;
        }
        if constexpr (kOrder == 1 && NX == 4) {
            // Four rows: the integer sums side by side (exact in any order), then
            // lane r does row r's two fused multiply-adds of the code below.
            const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(sumi[0], sumi[1]), _mm256_hadd_epi32(sumi[2], sumi[3]));
            const __m128i isum = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            __m128i m32[4];
            #pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) m32[r] = _mm_madd_epi16(mins, subBlockSums(xb[r][i]));
            const __m128i imin = _mm_hadd_epi32(_mm_hadd_epi32(m32[0], m32[1]), _mm_hadd_epi32(m32[2], m32[3]));
            const __m128 dx = _mm_setr_ps(xb[0][i].d, xb[1][i].d, xb[2][i].d, xb[3][i].d);
            accS4 = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm_set1_ps(dw), dx), accS4);
            accM4 = _mm_fmadd_ps(_mm_cvtepi32_ps(imin), _mm_mul_ps(_mm_set1_ps(dminw), dx), accM4);
            continue;
        }
        if constexpr (kOrder == 2) {
            // sumi holds the four pair sums per 128-bit lane; fold the lanes, then
            // one fused multiply-add per pair and row, pairs in order.
            #pragma GCC unroll 4
            for (int r = 0; r < NX; ++r) {
                const float dx = xb[r][i].d;
                const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sumi[r]), _mm256_extracti128_si256(sumi[r], 1));
                alignas(16) float s[4], m[4];
                _mm_store_ps(s, _mm_cvtepi32_ps(s4));
                _mm_store_ps(m, _mm_cvtepi32_ps(_mm_madd_epi16(mins, subBlockSums(xb[r][i]))));
                const float sw = dw * dx, mw = dminw * dx;
                for (int c = 0; c < 4; ++c) {
                    accS[r] = std::fma(s[c], sw, accS[r]);
                    accM[r] = std::fma(m[c], mw, accM[r]);
                }
            }
            continue;
        }
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) {
            const float dx = xb[r][i].d;
            const __m128i m32 = _mm_madd_epi16(mins, subBlockSums(xb[r][i]));  // 4 int32
            if constexpr (kOrder == 3) {
                const float res = std::fma(-dminw, float(hsumInt(_mm256_castsi128_si256(m32), 4)), dw * float(hsumInt(sumi[r])));
                accS[r] = std::fma(res, dx, accS[r]);
            } else if constexpr (kOrder == 1) {
                accS[r] = std::fma(float(hsumInt(sumi[r])), dw * dx, accS[r]);
                accM[r] = std::fma(float(hsumInt(_mm256_castsi128_si256(m32), 4)), dminw * dx, accM[r]);
            } else {
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dx * dw), _mm256_cvtepi32_ps(sumi[r]), acc[r]);
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(-dx * dminw), _mm256_zextps128_ps256(_mm_cvtepi32_ps(m32)), acc[r]);
            }
        }
    }
    if constexpr ((kOrder == 1 || kOrder == 2) && NX == 4) {
        _mm_storeu_ps(accS, accS4);
        _mm_storeu_ps(accM, accM4);
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) out[r * outStride] = kOrder ? accS[r] - accM[r] : hsum(acc[r]);  // accM = 0 for order 3
}

// kOrder: 0 = llama.cpp's row-dot (float lanes), 3 = its tiled kernel
// (batches of 8+ rows): per super-block acc = fma(dw * isum, dx, acc).
template <int NX, int kOrder = 0>
void dotQ6(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    const auto* wb = static_cast<const Q6_K*>(w);
    const Q8_K* xb[NX];
    __m256 acc[NX];
    float accS[NX], accM[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        xb[r] = actRow(act, actStride, r);
        acc[r] = _mm256_setzero_ps();
        accS[r] = accM[r] = 0.0f;
    }
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const Q6_K& b = wb[i];
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<sizeof(Q6_K)>(&b);
        const float dw = f16(b.d);
        const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));

        __m256i sumi[NX];
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) sumi[r] = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {  // halves of 128 elements
            const __m256i ql0 = load(b.ql + 64 * h), ql1 = load(b.ql + 64 * h + 32);
            const __m256i qh = load(b.qh + 32 * h);
            // This half's 8 scales as int16 in both lanes; part p needs scale 2p in
            // lanes 0-7 and 2p+1 in lanes 8-15: a byte shuffle picking bytes 4p, 4p+1
            // in the low 128 bits and 4p+2, 4p+3 in the high ones.
            const __m256i halfScales = h ? _mm256_permute2x128_si256(scales16, scales16, 0x11)
                                         : _mm256_permute2x128_si256(scales16, scales16, 0x00);
            __m256i pick = _mm256_set_m128i(_mm_set1_epi16(0x0302), _mm_set1_epi16(0x0100));
            // Part p (32 elements): low nibbles of ql0/ql1 for p = 0/1, high nibbles
            // for p = 2/3; bits 2p, 2p+1 of qh on top.
            for (int part = 0; part < 4; ++part) {
                const __m256i bits = part & 1 ? ql1 : ql0;
                const __m256i low = _mm256_and_si256(part < 2 ? bits : _mm256_srli_epi16(bits, 4), low4);
                const __m256i high = _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(qh, 2 * part), 4), _mm256_set1_epi8(0x30));
                const __m256i q = _mm256_or_si256(low, high);
                // 32 elements = groups 8h+2p and 8h+2p+1 (int16 lanes 0-7 and 8-15).
                const __m256i sc = _mm256_shuffle_epi8(halfScales, pick);
                pick = _mm256_add_epi16(pick, _mm256_set1_epi16(0x0404));
                #pragma GCC unroll 4
                for (int r = 0; r < NX; ++r) {
                    const __m256i p = _mm256_maddubs_epi16(q, load(xb[r][i].qs + 128 * h + 32 * part));
                    sumi[r] = _mm256_add_epi32(sumi[r], _mm256_madd_epi16(p, sc));
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) {
            // q - 32: subtract 32 * sum_g scale_g * bsum_g.
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load(xb[r][i].bsums)), 5);
            if constexpr (kOrder == 3) {
                accS[r] = std::fma(dw * float(hsumInt(_mm256_sub_epi32(sumi[r], offset))), xb[r][i].d, accS[r]);
            } else {
                const __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(sumi[r], offset));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(xb[r][i].d * dw), v, acc[r]);
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) out[r * outStride] = kOrder ? accS[r] : hsum(acc[r]);
}

template <class Block, int kOrder = 0>
void dotRowsScaleMin(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dotScaleMin<Block, 1, kOrder>(w, act, actStride, k, out, outStride); break;
    case 2: dotScaleMin<Block, 2, kOrder>(w, act, actStride, k, out, outStride); break;
    case 3: dotScaleMin<Block, 3, kOrder>(w, act, actStride, k, out, outStride); break;
    default: dotScaleMin<Block, 4, kOrder>(w, act, actStride, k, out, outStride); break;
    }
}

template <int kOrder = 0>
void dotRowsQ6(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dotQ6<1, kOrder>(w, act, actStride, k, out, outStride); break;
    case 2: dotQ6<2, kOrder>(w, act, actStride, k, out, outStride); break;
    case 3: dotQ6<3, kOrder>(w, act, actStride, k, out, outStride); break;
    default: dotQ6<4, kOrder>(w, act, actStride, k, out, outStride); break;
    }
}

} // namespace

RowDotFn avx2DotK(GgmlType type) {
    if (vnniActive())
        if (RowDotFn f = avx512DotK(type)) return f;
    switch (type) {
    case GgmlType::Q4_K: return dotRowsScaleMin<Q4_K>;
    case GgmlType::Q5_K: return dotRowsScaleMin<Q5_K>;
    case GgmlType::Q6_K: return dotRowsQ6<0>;
    default: return nullptr;
    }
}

RowDotFn avx2DotQ4_KInterleaved(bool fourRowKernel) {
    return fourRowKernel ? dotRowsScaleMin<Q4_K, 2> : dotRowsScaleMin<Q4_K, 1>;
}

RowDotFn avx2DotKTiled(GgmlType type) {
    if (vnniActive())
        if (RowDotFn f = avx512DotKTiled(type)) return f;
    switch (type) {
    case GgmlType::Q4_K: return dotRowsScaleMin<Q4_K, 3>;
    case GgmlType::Q5_K: return dotRowsScaleMin<Q5_K, 3>;
    case GgmlType::Q6_K: return dotRowsQ6<3>;
    default: return nullptr;
    }
}

} // namespace weir::kernels::detail
