#pragma once
// The tiled attention kernel of attend_tile.h, written once and compiled
// twice: attend_tile_avx2.cpp (AVX2 + FMA + F16C, 16 vector registers) and
// attend_tile_avx512.cpp (AVX-512VL's 32 registers, which keep twice as many
// value chains in flight, and 512-bit registers where they give the same bits). Include only from those two
// files: everything here has internal linkage, so each gets its own copy built
// for its instruction set. Bit-identical to attendHead with F16 K and V: the
// comments at each step name the operation of attendHead / ops_avx2.cpp it
// reproduces.
#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/attend_tile_simd.h"
#include "kernels/cpu/expf_libm_simd.h"

namespace weir::kernels::attend_tile_kernel {
namespace {

// Positions whose K and V rows are converted to f32 together (8 KiB of each
// for 256-wide heads: both stay in L1 while every query of the tile uses them).
constexpr int kBlock = 8;

inline __m256 loadH(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline void storeH(uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
// What a store to f16 and a load back give, without the trip through memory.
inline __m256 roundF16(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }

#ifdef __AVX512F__
// The AVX-512 build also works in 512-bit registers where the lanes do the
// very same arithmetic as two 256-bit ones (an f16 conversion or a fused
// multiply-add is per lane): half the instructions, identical bits.
inline __m512 loadH16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
inline void storeH16(uint16_t* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
inline __m512 roundF16x16(__m512 v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
#endif

// The final reductions of ops_avx2.cpp's dot4x16 (kLanes16) and dot4x8, from
// their accumulators: part[j] holds the 8 lanes at offset 8j of each step.
inline float reduce16(const __m256* part) {
    // lo[a] = part[2a], hi[a] = part[2a + 1]
    const __m256 lo01 = _mm256_add_ps(_mm256_add_ps(part[0], part[4]), _mm256_add_ps(part[2], part[6]));
    const __m256 hi01 = _mm256_add_ps(_mm256_add_ps(part[1], part[5]), _mm256_add_ps(part[3], part[7]));
    const __m256 l8 = _mm256_add_ps(hi01, lo01);
    const __m128 l4 = _mm_add_ps(_mm256_extractf128_ps(l8, 1), _mm256_castps256_ps128(l8));
    float l[4];
    _mm_storeu_ps(l, l4);
    const double sum = double((l[0] + l[2]) + (l[1] + l[3]));  // dk % 64 == 0: no tail to add
    return float(sum);
}
inline float reduce8(const __m256* part) {
    const __m256 s02 = _mm256_add_ps(part[0], part[2]);
    const __m256 s13 = _mm256_add_ps(part[1], part[3]);
    const __m256 v = _mm256_add_ps(s02, s13);
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_hadd_ps(s, s);
    return _mm_cvtss_f32(_mm_hadd_ps(t, t));
}

// Scores of one query (qw: its f16 value widened) against 4 K rows (f32,
// consecutive at stride dk): each accumulator of the dot's lane order in
// turn, for the 4 rows at once, so one query load feeds 4 independent chains.
template <bool kLanes16>
inline void scores4(const float* kf, const float* qw, int64_t dk, float scale, float* s) {
    constexpr int kParts = kLanes16 ? 8 : 4;  // 8-lane accumulators per dot
    constexpr int kStep = 8 * kParts;         // elements per step of the dot
    __m256 part[4][kParts];
#pragma GCC unroll 16
    for (int j = 0; j < kParts; ++j) {
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (int64_t i = 8 * j; i < dk; i += kStep) {
            const __m256 q = _mm256_loadu_ps(qw + i);
            c0 = _mm256_fmadd_ps(_mm256_loadu_ps(kf + i), q, c0);
            c1 = _mm256_fmadd_ps(_mm256_loadu_ps(kf + dk + i), q, c1);
            c2 = _mm256_fmadd_ps(_mm256_loadu_ps(kf + 2 * dk + i), q, c2);
            c3 = _mm256_fmadd_ps(_mm256_loadu_ps(kf + 3 * dk + i), q, c3);
        }
        part[0][j] = c0;
        part[1][j] = c1;
        part[2][j] = c2;
        part[3][j] = c3;
    }
    for (int r = 0; r < 4; ++r) {
        const float dot = kLanes16 ? reduce16(part[r]) : reduce8(part[r]);
        s[r] = dot * scale;  // attendHead: s *= scale
    }
}

// Scores of one query against the 8 K rows of a block in the AVX-512 build's
// order (dot4x16): as scores4, then the 8 reductions done side by side. Per
// row, l4 = high + low half of its 8-lane sum and the score is
// (l0 + l2) + (l1 + l3), as in reduce16; here two rows' halves are paired in
// one register and the last two additions of 8 rows are 3 vector instructions.
inline void scores8Lanes16(const float* kf, const float* qw, int64_t dk, float scale, float* s) {
    __m256 a[4];  // a[k]: row 2k's l4 in the low 128 bits, row 2k+1's in the high
#ifdef __AVX512F__
    // wide[r][j] holds part[2j] (low half) and part[2j + 1] (high half) of
    // the 256-bit version below; lo01 and hi01 are then the halves of
    // (w0 + w2) + (w1 + w3).
    __m512 wide[8][4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        __m512 c[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) c[r] = _mm512_setzero_ps();
        for (int64_t i = 16 * j; i < dk; i += 64) {
            const __m512 q = _mm512_loadu_ps(qw + i);
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) c[r] = _mm512_fmadd_ps(_mm512_loadu_ps(kf + r * dk + i), q, c[r]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) wide[r][j] = c[r];
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        __m256 l8[2];
        for (int e = 0; e < 2; ++e) {
            const __m512* w = wide[2 * k + e];
            const __m512 t = _mm512_add_ps(_mm512_add_ps(w[0], w[2]), _mm512_add_ps(w[1], w[3]));
            const __m256 lo01 = _mm512_castps512_ps256(t);
            const __m256 hi01 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1));
            l8[e] = _mm256_add_ps(hi01, lo01);
        }
#else
    __m256 part[8][8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
        __m256 c[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) c[r] = _mm256_setzero_ps();
        for (int64_t i = 8 * j; i < dk; i += 64) {
            const __m256 q = _mm256_loadu_ps(qw + i);
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) c[r] = _mm256_fmadd_ps(_mm256_loadu_ps(kf + r * dk + i), q, c[r]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) part[r][j] = c[r];
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        __m256 l8[2];
        for (int e = 0; e < 2; ++e) {
            const __m256* pr = part[2 * k + e];
            const __m256 lo01 = _mm256_add_ps(_mm256_add_ps(pr[0], pr[4]), _mm256_add_ps(pr[2], pr[6]));
            const __m256 hi01 = _mm256_add_ps(_mm256_add_ps(pr[1], pr[5]), _mm256_add_ps(pr[3], pr[7]));
            l8[e] = _mm256_add_ps(hi01, lo01);
        }
#endif
        const __m256 lows = _mm256_permute2f128_ps(l8[0], l8[1], 0x20), highs = _mm256_permute2f128_ps(l8[0], l8[1], 0x31);
        a[k] = _mm256_add_ps(highs, lows);
    }
    // g: (l0 + l2, l1 + l3) of rows 0 and 2 (low half) and 1 and 3 (high half); h of rows 4..7.
    const __m256 g = _mm256_add_ps(_mm256_shuffle_ps(a[0], a[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(a[0], a[1], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 h = _mm256_add_ps(_mm256_shuffle_ps(a[2], a[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(a[2], a[3], _MM_SHUFFLE(3, 2, 3, 2)));
    // Rows 0, 2, 4, 6 then 1, 3, 5, 7; dk % 64 == 0, so reduce16's trip
    // through double changes nothing. attendHead: s *= scale.
    float t[8];
    _mm256_storeu_ps(t, _mm256_mul_ps(_mm256_hadd_ps(g, h), _mm256_set1_ps(scale)));
    for (int r = 0; r < 4; ++r) {
        s[2 * r] = t[r];
        s[2 * r + 1] = t[4 + r];
    }
}

// acc (f16, dv values) <- the value updates of positions [0, np) of a block:
// where grow[p], acc = f16(acc * ms[p]) (scaleF16), then always
// acc = f16(acc + V_p * vs[p]) (madF16). kW registers of 8 values at a time,
// kept in registers across the positions: 8 independent chains with AVX2's
// 16 registers, 16 where AVX-512 gives 32 (the f16 round trips are slow, and
// more chains in flight hide them better).
template <int kW>
inline void updateValues(uint16_t* acc, const float* vf, int64_t dv, int np, const bool* grow, const float* ms,
                         const float* vs) {
    for (int64_t c = 0; c < dv; c += 8 * kW) {
        // Unrolled so that a[] lives in registers (not rolled over the stack).
        __m256 a[kW];
#pragma GCC unroll 16
        for (int w = 0; w < kW; ++w) a[w] = loadH(acc + c + 8 * w);
        for (int p = 0; p < np; ++p) {
            if (grow[p]) {
                const __m256 m = _mm256_set1_ps(ms[p]);
#pragma GCC unroll 16
                for (int w = 0; w < kW; ++w) a[w] = roundF16(_mm256_mul_ps(a[w], m));
            }
            const __m256 s = _mm256_set1_ps(vs[p]);
            const float* row = vf + p * dv + c;
#pragma GCC unroll 16
            for (int w = 0; w < kW; ++w) a[w] = roundF16(_mm256_fmadd_ps(_mm256_loadu_ps(row + 8 * w), s, a[w]));
        }
#pragma GCC unroll 16
        for (int w = 0; w < kW; ++w) storeH(acc + c + 8 * w, a[w]);
    }
}

#ifdef __AVX512F__
// updateValues with kW registers of 16 values (dv % (16 * kW) == 0).
template <int kW>
inline void updateValues16(uint16_t* acc, const float* vf, int64_t dv, int np, const bool* grow, const float* ms,
                           const float* vs) {
    for (int64_t c = 0; c < dv; c += 16 * kW) {
        __m512 a[kW];
#pragma GCC unroll 16
        for (int w = 0; w < kW; ++w) a[w] = loadH16(acc + c + 16 * w);
        for (int p = 0; p < np; ++p) {
            if (grow[p]) {
                const __m512 m = _mm512_set1_ps(ms[p]);
#pragma GCC unroll 16
                for (int w = 0; w < kW; ++w) a[w] = roundF16x16(_mm512_mul_ps(a[w], m));
            }
            const __m512 s = _mm512_set1_ps(vs[p]);
            const float* row = vf + p * dv + c;
#pragma GCC unroll 16
            for (int w = 0; w < kW; ++w) a[w] = roundF16x16(_mm512_fmadd_ps(_mm512_loadu_ps(row + 16 * w), s, a[w]));
        }
#pragma GCC unroll 16
        for (int w = 0; w < kW; ++w) storeH16(acc + c + 16 * w, a[w]);
    }
}
#endif

// Rows of n f16 values widened to f32 (n % 8 == 0).
inline void widenRow(const uint16_t* src, float* dst, int64_t n) {
    int64_t e = 0;
#ifdef __AVX512F__
    for (; e + 16 <= n; e += 16) _mm512_storeu_ps(dst + e, loadH16(src + e));
#endif
    for (; e < n; e += 8) _mm256_storeu_ps(dst + e, loadH(src + e));
}

// Whether this build's exp8 gives std::exp's bits on this system (checked
// once; otherwise the softmax calls std::exp position by position).
inline bool vectorExpMatches() {
    static const bool ok = expf_libm::matchesLibm();
    return ok;
}

template <bool kLanes16, int kMaxW>
void attendTileImpl(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                    float scale, float* scratch) {
    float* qWide = scratch;                           // n x dk: each query rounded to f16, widened back
    float* kf = qWide + kAttendTileMaxQueries * dk;   // kBlock x dk: K rows as f32
    float* vf = kf + kBlock * dk;                     // kBlock x dv: V rows as f32
    auto* acc = reinterpret_cast<uint16_t*>(vf + kBlock * dv);  // n x dv: f16 accumulators
    float m[kAttendTileMaxQueries], sum[kAttendTileMaxQueries];

    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (int i = 0; i < n; ++i) {
        const AttendQuery& qi = queries[i];
        // attendHead: toF16Row then rowToF32 (ops_avx2 toF16 / fromF16).
        for (int64_t e = 0; e < dk; e += 8)
            _mm256_storeu_ps(qWide + i * dk + e, roundF16(_mm256_loadu_ps(qi.q + e)));
        m[i] = -std::numeric_limits<float>::infinity();
        sum[i] = 0.0f;
        std::memset(acc + i * dv, 0, size_t(dv) * 2);
        if (qi.first <= qi.last) {
            lo = std::min(lo, qi.first);
            hi = std::max(hi, qi.last);
        }
    }
    // Score groups of 4 may read rows past a block's end: keep them defined.
    std::memset(kf, 0, size_t(kBlock * dk) * 4);

    float s[kBlock], ms[kBlock], vs[kBlock];
    bool grow[kBlock];
    const bool vectorExp = vectorExpMatches();
    for (int64_t b0 = lo; b0 <= hi; b0 += kBlock) {
        const int np = int(std::min<int64_t>(kBlock, hi - b0 + 1));
        for (int p = 0; p < np; ++p) {
            const auto* kr = reinterpret_cast<const uint16_t*>(k.row(int32_t(b0 + p)));
            const auto* vr = reinterpret_cast<const uint16_t*>(v.row(int32_t(b0 + p)));
            widenRow(kr, kf + p * dk, dk);
            widenRow(vr, vf + p * dv, dv);
        }
        for (int i = 0; i < n; ++i) {
            const AttendQuery& qi = queries[i];
            const int pb = int(std::max<int64_t>(qi.first, b0) - b0);
            const int pe = int(std::min<int64_t>(qi.last, b0 + np - 1) - b0);  // inclusive
            if (pb > pe) continue;
            if (kLanes16 && pe - pb >= 4) scores8Lanes16(kf, qWide + i * dk, dk, scale, s);
            else
                for (int p = pb & ~3; p <= pe; p += 4) scores4<kLanes16>(kf + p * dk, qWide + i * dk, dk, scale, s + p);
            // attendHead's online softmax, position by position.
            float mi = m[i], si = sum[i];
            if (vectorExp) {
                // The same exp arguments in the same order, the exps of the
                // block at once, then the sums in order.
                float arg[kBlock] = {}, e[kBlock];
                for (int p = pb; p <= pe; ++p) {
                    grow[p] = s[p] > mi;
                    if (grow[p]) {
                        arg[p] = mi - s[p];
                        mi = s[p];
                    } else {
                        arg[p] = s[p] - mi;
                    }
                }
                expf_libm::exp8(arg, e);
                for (int p = pb; p <= pe; ++p) {
                    ms[p] = grow[p] ? e[p] : 1.0f;
                    vs[p] = grow[p] ? 1.0f : e[p];
                    si = std::fma(si, ms[p], vs[p]);
                }
            } else {
                for (int p = pb; p <= pe; ++p) {
                    ms[p] = 1.0f;
                    vs[p] = 1.0f;
                    grow[p] = s[p] > mi;
                    if (grow[p]) {
                        const float old = mi;
                        mi = s[p];
                        ms[p] = std::exp(old - mi);
                    } else {
                        vs[p] = std::exp(s[p] - mi);
                    }
                    si = std::fma(si, ms[p], vs[p]);
                }
            }
            m[i] = mi;
            sum[i] = si;
            const int cnt = pe - pb + 1;
#ifdef __AVX512F__
            if (dv % 256 == 0) {
                updateValues16<16>(acc + i * dv, vf + pb * dv, dv, cnt, grow + pb, ms + pb, vs + pb);
                continue;
            }
            if (dv % 128 == 0) {
                updateValues16<8>(acc + i * dv, vf + pb * dv, dv, cnt, grow + pb, ms + pb, vs + pb);
                continue;
            }
#endif
            if constexpr (kMaxW >= 16) {
                if (dv % 128 == 0) {
                    updateValues<16>(acc + i * dv, vf + pb * dv, dv, cnt, grow + pb, ms + pb, vs + pb);
                    continue;
                }
            }
            if (dv % 64 == 0) updateValues<8>(acc + i * dv, vf + pb * dv, dv, cnt, grow + pb, ms + pb, vs + pb);
            else updateValues<4>(acc + i * dv, vf + pb * dv, dv, cnt, grow + pb, ms + pb, vs + pb);
        }
    }
    for (int i = 0; i < n; ++i) {
        // attendHead: rowToF32 of the f16 accumulator, then * (1 / sum).
        const float inv = sum[i] == 0.0f ? 0.0f : 1.0f / sum[i];
        const __m256 iv = _mm256_set1_ps(inv);
        for (int64_t e = 0; e < dv; e += 8)
            _mm256_storeu_ps(queries[i].out + e, _mm256_mul_ps(loadH(acc + i * dv + e), iv));
    }
}


size_t scratchFloats(int64_t dk, int64_t dv) {
    return size_t(kAttendTileMaxQueries * dk + kBlock * dk + kBlock * dv + (kAttendTileMaxQueries * dv + 1) / 2 + 16);
}

} // namespace
} // namespace weir::kernels::attend_tile_kernel
