#pragma once
// Internal to the *_amx.cpp kernels: the tile GEMM driver they share, on
// AMX-INT8 tiles (AmxBackend) or AVX-512 VNNI over the same layout
// (VnniBackend, for CPUs without AMX; the same integer sums, so the same
// results bit for bit).
//
// The weights are cut into units of S = 16 or 32 consecutive elements that
// share one scale (a legacy block, a K-quant sub-block). Per unit, tdpbusd
// multiplies a 16 x S tile of unsigned bytes (16 activation rows biased by
// +128) with an S x 16 tile of signed bytes (16 weight rows, stored as S/4
// rows of 16 x 4 consecutive bytes: the "VNNI" layout the instruction reads)
// into 16 x 16 int32 sums. Adding the weights' -128 * sum(q) makes each sum
// exactly sum(x * q), the integer the other kernels compute for the unit; it
// is then scaled in float and added in unit order. One unit per tdpbusd (not
// the 64 bytes a tile row could hold) because each unit has its own scales.
//
// A packed weight tile is, per unit: the B tile (S * 16 bytes), the 16 rows'
// -128 * sum(q) (int32), their scales (f32) and, for types with a minimum,
// their minimums (f32). An activation row holds, besides its biased bytes, a
// f32 scale per unit (dx) and, for types with a minimum, dx * sum(x) per unit.
//
// GCC 12's 512-bit intrinsics start from _mm512_undefined_*, which
// -Wuninitialized reports where they are inlined (GCC bug 105593); nothing
// here reads an uninitialized value. (Only the *_amx.cpp files include this.)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

#ifdef WEIR_AMX_EMULATE  // a test's second build of the *_amx.cpp files
#include "kernels/cpu/amx_emulation.h"
#endif

namespace weir::kernels::detail {
#ifdef WEIR_AMX_EMULATE
namespace emulated_amx {
#endif
namespace {

constexpr int kTile = 16;          // rows of a tile, activations or weights
constexpr int kPair = 2 * kTile;   // rows of each per call

template <int S, bool Min>
struct UnitLayout {
    static constexpr int kBytes = S;
    static constexpr bool kMin = Min;
    static constexpr size_t kCorrAt = size_t(S) * kTile, kScaleAt = kCorrAt + 64, kMinAt = kScaleAt + 64;
    static constexpr size_t kPackedBytes = kMinAt + (Min ? 64 : 0);
};

struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t startRow = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// tmm0-3: the sums of activation tile a times weight tile b at 2a + b
// (16 x 16 int32 each); tmm4, tmm5: the two activation tiles (16 rows x S
// bytes); tmm6, tmm7: the two weight tiles (S/4 rows x 64 bytes). Four
// products per two loads of each operand.
inline void configureTiles(int S) {
    TileConfig cfg;
    for (int t = 0; t < 4; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    for (int t : {4, 5}) cfg.rows[t] = 16, cfg.colsb[t] = uint16_t(S);
    for (int t : {6, 7}) cfg.rows[t] = uint8_t(S / 4), cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

// Packs one unit of a tile from q: 16 rows of signed weights, `qStride`
// bytes apart, the unit's S bytes at q + at. Dword c * (qStride / 4) + r of
// q + at is row c's bytes 4r..4r+3: gathering r of every row gives row r of
// the B tile.
template <class L>
inline void packUnit(const int8_t* q, size_t qStride, size_t at, const float* scale, const float* minimum, uint8_t* o) {
    const __m512i rowStarts = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 _mm512_set1_epi32(int(qStride / 4)));
    __m512i sum128 = _mm512_setzero_si512();  // 128 * sum(q) per weight row
    for (int r = 0; r < L::kBytes / 4; ++r) {
        const __m512i v = _mm512_i32gather_epi32(_mm512_add_epi32(rowStarts, _mm512_set1_epi32(r)), q + at, 4);
        _mm512_storeu_si512(o + 64 * r, v);
        sum128 = _mm512_dpbusd_epi32(sum128, _mm512_set1_epi8(char(0x80)), v);
    }
    _mm512_storeu_si512(o + L::kCorrAt, _mm512_sub_epi32(_mm512_setzero_si512(), sum128));
    _mm512_storeu_ps(o + L::kScaleAt, _mm512_loadu_ps(scale));
    if constexpr (L::kMin) _mm512_storeu_ps(o + L::kMinAt, _mm512_loadu_ps(minimum));
}

// Unit sums for 32 activation rows (a, rows `stride` apart) and two packed
// weight tiles: s[(2a + b) * 256 + 16 r + c] for activation tile a's row r
// and weight tile b's row c, before corrections. On AMX tiles:
struct AmxBackend {
    static void begin(int S) { configureTiles(S); }
    static void end() { _tile_release(); }
    template <int S>
    static void multiplyUnit(const uint8_t* a, long stride, const uint8_t* w0, const uint8_t* w1, int32_t* s);
};

// The same sums with AVX-512 VNNI, for CPUs without AMX: a weight tile's S/4
// rows of 64 bytes in registers, and per activation row S/4 vpdpbusd against
// its bytes four at a time broadcast to every lane (lane c: weight row c).
// The integer sums are the tiles', so the results are bit for bit AMX's.
struct VnniBackend {
    static void begin(int) {}
    static void end() {}
    template <int S>
    static void multiplyUnit(const uint8_t* a, long stride, const uint8_t* w0, const uint8_t* w1, int32_t* s) {
        __m512i b0[S / 4], b1[S / 4];
        #pragma GCC unroll 8
        for (int j = 0; j < S / 4; ++j) {
            b0[j] = _mm512_loadu_si512(w0 + 64 * j);
            b1[j] = _mm512_loadu_si512(w1 + 64 * j);
        }
        for (int ta = 0; ta < 2; ++ta) {
            #pragma GCC unroll 2
            for (int r = 0; r < kTile; ++r) {
                const uint8_t* x = a + (kTile * ta + r) * stride;
                __m512i c0 = _mm512_setzero_si512(), c1 = _mm512_setzero_si512();
                #pragma GCC unroll 8
                for (int j = 0; j < S / 4; ++j) {
                    int32_t four;
                    std::memcpy(&four, x + 4 * j, 4);
                    const __m512i xb = _mm512_set1_epi32(four);
                    c0 = _mm512_dpbusd_epi32(c0, xb, b0[j]);
                    c1 = _mm512_dpbusd_epi32(c1, xb, b1[j]);
                }
                _mm512_store_si512(s + ((2 * ta) * kTile + r) * kTile, c0);
                _mm512_store_si512(s + ((2 * ta + 1) * kTile + r) * kTile, c1);
            }
        }
    }
};

template <int S>
inline void AmxBackend::multiplyUnit(const uint8_t* a, long stride, const uint8_t* w0, const uint8_t* w1, int32_t* s) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, a, stride);
    _tile_loadd(5, a + kTile * stride, stride);
    _tile_loadd(6, w0, 64);
    _tile_loadd(7, w1, 64);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
    _tile_stored(0, s, 64);
    _tile_stored(1, s + kTile * kTile, 64);
    _tile_stored(2, s + 2 * kTile * kTile, 64);
    _tile_stored(3, s + 3 * kTile * kTile, 64);
}

// acc (laid out as s) += (scale * dx) * (s + correction) [- minimum * dxSum]
// for unit u, whose packed weights are w0 and w1.
template <class L>
inline void addUnit(float* acc, const int32_t* s, const uint8_t* w0, const uint8_t* w1, const float* const (&dx)[kPair],
                    const float* const (&dxSum)[kPair], int64_t u) {
    for (int b = 0; b < 2; ++b) {
        const uint8_t* w = b ? w1 : w0;
        const __m512i corr = _mm512_loadu_si512(w + L::kCorrAt);
        const __m512 scale = _mm512_loadu_ps(w + L::kScaleAt);
        __m512 minimum = _mm512_setzero_ps();
        if constexpr (L::kMin) minimum = _mm512_loadu_ps(w + L::kMinAt);
        for (int a = 0; a < 2; ++a) {
            const int t = 2 * a + b;
            #pragma GCC unroll 16
            for (int r = 0; r < kTile; ++r) {
                float* row = acc + (t * kTile + r) * kTile;
                const __m512 sum = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_load_si512(s + (t * kTile + r) * kTile), corr));
                __m512 v = _mm512_fmadd_ps(_mm512_mul_ps(scale, _mm512_set1_ps(dx[kTile * a + r][u])), sum, _mm512_load_ps(row));
                if constexpr (L::kMin) v = _mm512_fnmadd_ps(minimum, _mm512_set1_ps(dxSum[kTile * a + r][u]), v);
                _mm512_store_ps(row, v);
            }
        }
    }
}

// One pair of packed weight tiles (w0, w1 = w0 + units * kPackedBytes)
// times activation rows [mBegin, mEnd) (multiples of 32; rows `actStride`
// apart, unit u's bytes at row + actAt(u), its dx at row + dxAt + 4u and its
// dx * sum(x) at row + dxSumAt + 4u) into out[m * outStride + j] for m < M
// and j < cols.
template <class Backend, class L, class ActAt>
void gemmPair(const uint8_t* w0, int64_t units, ActAt actAt, const uint8_t* act, size_t actStride, size_t dxAt,
              size_t dxSumAt, int64_t mBegin, int64_t mEnd, int64_t M, float* out, size_t outStride, int cols) {
    const uint8_t* w1 = w0 + size_t(units) * L::kPackedBytes;
    const long stride = long(actStride);
    __mmask16 colMask[2];
    for (int b = 0; b < 2; ++b) colMask[b] = __mmask16((1u << std::clamp(cols - kTile * b, 0, kTile)) - 1);
    alignas(64) int32_t sums[2][4 * kTile * kTile];  // two units in flight: one on the tiles, one being scaled
    alignas(64) float acc[4 * kTile * kTile];
    Backend::begin(L::kBytes);
    auto unitW = [&](const uint8_t* w, int64_t u) { return w + size_t(u) * L::kPackedBytes; };
    for (int64_t m0 = mBegin; m0 < mEnd; m0 += kPair) {
        const uint8_t* a = act + size_t(m0) * actStride;
        const float* dx[kPair];
        const float* dxSum[kPair];
        for (int r = 0; r < kPair; ++r) {
            dx[r] = reinterpret_cast<const float*>(a + size_t(r) * actStride + dxAt);
            dxSum[r] = reinterpret_cast<const float*>(a + size_t(r) * actStride + dxSumAt);
        }
        std::memset(acc, 0, sizeof acc);
        Backend::template multiplyUnit<L::kBytes>(a + actAt(0), stride, w0, w1, sums[0]);
        for (int64_t u = 1; u < units; ++u) {
            Backend::template multiplyUnit<L::kBytes>(a + actAt(u), stride, unitW(w0, u), unitW(w1, u), sums[u & 1]);
            addUnit<L>(acc, sums[(u - 1) & 1], unitW(w0, u - 1), unitW(w1, u - 1), dx, dxSum, u - 1);
        }
        addUnit<L>(acc, sums[(units - 1) & 1], unitW(w0, units - 1), unitW(w1, units - 1), dx, dxSum, units - 1);
        for (int ta = 0; ta < 2; ++ta)
            for (int r = 0; r < kTile && m0 + kTile * ta + r < M; ++r)
                for (int b = 0; b < 2; ++b)
                    if (colMask[b])
                        _mm512_mask_storeu_ps(out + size_t(m0 + kTile * ta + r) * outStride + kTile * b, colMask[b],
                                              _mm512_load_ps(acc + ((2 * ta + b) * kTile + r) * kTile));
    }
    Backend::end();
}

} // namespace
#ifdef WEIR_AMX_EMULATE
} // namespace emulated_amx
#endif
} // namespace weir::kernels::detail
