// Prefill GEMM for Q4_0/Q5_0/Q8_0 weights on AMX-INT8 tiles (kernel_table.h:
// amxGemmTile). tdpbusd multiplies a 16 x 32-byte tile of unsigned bytes (16
// activation rows, one block each, biased by +128) with a 32 x 16 tile of
// signed bytes (one block of 16 weight rows, stored as 8 rows of 16 x 4
// consecutive bytes: the "VNNI" layout the instruction reads) into 16 x 16
// int32 sums. Starting from a tile of -128 * sum(q) per weight row makes
// each sum exactly sum(x * q), the integer the other kernels compute for the
// block; it is then scaled by both blocks' scales and added in block order.
// One block per tdpbusd (not the 64 bytes a tile row could hold) because
// every block has its own scales. Only called when amxActive().
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels/cpu/quant_legacy_rows.h"

#ifdef WEIR_AMX_EMULATE  // a test's second build of this file (amx_emulation.h)
#include "kernels/cpu/amx_emulation.h"
#endif

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace weir::kernels::detail {
#ifdef WEIR_AMX_EMULATE
namespace emulated_amx {
#endif

namespace {

constexpr int kTile = kAmxTileRows;
// Per block of a packed tile: the B tile (8 rows x 64 bytes), the 16 rows'
// -128 * sum(q) as int32, their scales as f32.
constexpr size_t kBTileBytes = 512;
constexpr size_t kCorrAt = kBTileBytes, kScalesAt = kBTileBytes + 64, kPackedBlockBytes = kBTileBytes + 128;

struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t startRow = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// tmm0-3: the sums of activation tile a times weight tile b at 2a + b
// (16 x 16 int32 each); tmm4, tmm5: the two activation tiles (16 rows x 32
// bytes); tmm6, tmm7: the two weight tiles (8 rows x 64 bytes). Four
// products per two loads of each operand.
void configureTiles() {
    TileConfig cfg;
    for (int t = 0; t < 4; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    for (int t : {4, 5}) cfg.rows[t] = 16, cfg.colsb[t] = 32;
    for (int t : {6, 7}) cfg.rows[t] = 8, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

template <class U>
void packTiles(const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin, int64_t tileEnd, void* dst) {
    const int64_t nb = k / QK;
    alignas(64) int8_t q[kTile][QK];
    // Dword c * 8 + r of q is row c's bytes 4r..4r+3: gathering r of each row
    // gives row r of the B tile.
    const __m512i rowStarts = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 _mm512_set1_epi32(QK / 4));
    for (int64_t t = tileBegin; t < tileEnd; ++t) {
        uint8_t* o = static_cast<uint8_t*>(dst) + size_t(t) * amxPackedTileBytes(k);
        for (int64_t i = 0; i < nb; ++i, o += kPackedBlockBytes) {
            alignas(64) float d[kTile];
            for (int c = 0; c < kTile; ++c) {
                const int64_t n = t * kTile + c;
                if (n < rows) {
                    const auto& b = reinterpret_cast<const typename U::Block*>(static_cast<const uint8_t*>(w) +
                                                                                size_t(n) * rowStride)[i];
                    _mm256_store_si256(reinterpret_cast<__m256i*>(q[c]), signedQ<U>(b));
                    d[c] = f16(b.d);
                } else {
                    _mm256_store_si256(reinterpret_cast<__m256i*>(q[c]), _mm256_setzero_si256());
                    d[c] = 0.0f;
                }
            }
            __m512i sum128 = _mm512_setzero_si512();  // 128 * sum(q) per weight row
            for (int r = 0; r < QK / 4; ++r) {
                const __m512i v = _mm512_i32gather_epi32(_mm512_add_epi32(rowStarts, _mm512_set1_epi32(r)), q, 4);
                _mm512_storeu_si512(o + 64 * r, v);
                sum128 = _mm512_dpbusd_epi32(sum128, _mm512_set1_epi8(char(0x80)), v);
            }
            _mm512_storeu_si512(o + kCorrAt, _mm512_sub_epi32(_mm512_setzero_si512(), sum128));
            _mm512_storeu_ps(o + kScalesAt, _mm512_load_ps(d));
        }
    }
}

constexpr int kPair = 2 * kTile;  // rows of activations, and of weights, per call

// Block i's integer sums for 32 activation rows (a, rows `stride` apart)
// and two packed weight tiles: s[(2a + b) * 256 + 16 r + c] for activation
// tile a's row r and weight tile b's row c, before corrections.
inline void multiplyBlock(const uint8_t* a, long stride, const uint8_t* w0, const uint8_t* w1, int32_t* s) {
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

// acc (laid out as s) += (dw * dx) * (s + the weights' -128 * sum(q)) for block i.
inline void addBlock(float* acc, const int32_t* s, const uint8_t* w0, const uint8_t* w1, const float* const (&dx)[kPair],
                     int64_t i) {
    for (int b = 0; b < 2; ++b) {
        const uint8_t* w = b ? w1 : w0;
        const __m512i corr = _mm512_loadu_si512(w + kCorrAt);
        const __m512 dw = _mm512_loadu_ps(w + kScalesAt);
        for (int a = 0; a < 2; ++a) {
            const int t = 2 * a + b;
            #pragma GCC unroll 16
            for (int r = 0; r < kTile; ++r) {
                float* row = acc + (t * kTile + r) * kTile;
                const __m512 sum = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_load_si512(s + (t * kTile + r) * kTile), corr));
                _mm512_store_ps(row, _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx[kTile * a + r][i])), sum,
                                                     _mm512_load_ps(row)));
            }
        }
    }
}

} // namespace

bool amxSupports(GgmlType type) {
    return type == GgmlType::Q4_0 || type == GgmlType::Q5_0 || type == GgmlType::Q8_0;
}

size_t amxPackedTileBytes(int64_t k) { return size_t(k / QK) * kPackedBlockBytes; }

void amxPackTiles(GgmlType type, const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin,
                  int64_t tileEnd, void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return packTiles<BiasedQ4_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    case GgmlType::Q5_0: return packTiles<BiasedQ5_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    default: return packTiles<BiasedQ8_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    }
}

void amxGemmTilePair(const void* packedPair, const uint8_t* act, size_t actStride, int64_t mBegin, int64_t mEnd,
                     int64_t M, int64_t k, float* out, size_t outStride, int cols) {
    const int64_t nb = k / QK;
    const auto* w0 = static_cast<const uint8_t*>(packedPair);
    const uint8_t* w1 = w0 + amxPackedTileBytes(k);
    const size_t scalesAt = actScalesOffset(nb, sizeof(Q8_0));
    const long stride = long(actStride);
    __mmask16 colMask[2];
    for (int b = 0; b < 2; ++b) {
        const int n = std::clamp(cols - kTile * b, 0, kTile);
        colMask[b] = __mmask16((1u << n) - 1);
    }
    alignas(64) int32_t sums[2][4 * kTile * kTile];  // two blocks in flight: one on the tiles, one being scaled
    alignas(64) float acc[4 * kTile * kTile];
    configureTiles();
    for (int64_t m0 = mBegin; m0 < mEnd; m0 += kPair) {
        const uint8_t* a = act + size_t(m0) * actStride + offsetof(Q8_0, qs);
        const float* dx[kPair];
        for (int r = 0; r < kPair; ++r) dx[r] = reinterpret_cast<const float*>(act + size_t(m0 + r) * actStride + scalesAt);
        std::memset(acc, 0, sizeof acc);
        multiplyBlock(a, stride, w0, w1, sums[0]);
        for (int64_t i = 1; i < nb; ++i) {
            multiplyBlock(a + size_t(i) * sizeof(Q8_0), stride, w0 + size_t(i) * kPackedBlockBytes,
                          w1 + size_t(i) * kPackedBlockBytes, sums[i & 1]);
            addBlock(acc, sums[(i - 1) & 1], w0 + size_t(i - 1) * kPackedBlockBytes, w1 + size_t(i - 1) * kPackedBlockBytes,
                     dx, i - 1);
        }
        addBlock(acc, sums[(nb - 1) & 1], w0 + size_t(nb - 1) * kPackedBlockBytes, w1 + size_t(nb - 1) * kPackedBlockBytes,
                 dx, nb - 1);
        for (int ta = 0; ta < 2; ++ta)
            for (int r = 0; r < kTile && m0 + kTile * ta + r < M; ++r)
                for (int b = 0; b < 2; ++b)
                    if (colMask[b])
                        _mm512_mask_storeu_ps(out + size_t(m0 + kTile * ta + r) * outStride + kTile * b, colMask[b],
                                              _mm512_load_ps(acc + ((2 * ta + b) * kTile + r) * kTile));
    }
    _tile_release();
}

#ifdef WEIR_AMX_EMULATE
} // namespace emulated_amx
#endif
} // namespace weir::kernels::detail
