// The decode kernel of quant_tiles_avx512.cpp (weights packed at load, 16
// rows per tile) on AMX-INT8 tiles, for steps of 2 to kMaxTileDotRows
// activation rows (a few sequences decoding together). The packed block is
// already tdpbusd's B tile; the A tile is the rows' 32 biased bytes of the
// block, read in place at the activation rows' stride. One tdpbusd gives all
// rows' block sums, where the VNNI kernel spends eight vpdpbusd per row; the
// rest (the -128 * sum(q) correction, one multiply-add per row and block, in
// block order) is the VNNI kernel's arithmetic, so the results are its bits.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/amx_tiles.h"  // TileConfig (and GCC 12's 512-bit warnings off)
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {

namespace {

using blocks::Q8_0;
using blocks::QK;

// The packed block (quant_tiles_avx512.cpp): B tile, 16 int16 sums, 16 f16 scales.
constexpr size_t kSumAt = 512, kScaleAt = 544, kBlockBytes = 576;

// tmm0: the sums (NX rows of 16 int32), tmm1: the activations (NX rows of 32
// bytes), tmm2: the block's weights (8 rows of 64 bytes).
void configure(int nx) {
    TileConfig cfg;
    cfg.rows[0] = uint8_t(nx), cfg.colsb[0] = 64;
    cfg.rows[1] = uint8_t(nx), cfg.colsb[1] = QK;
    cfg.rows[2] = QK / 4, cfg.colsb[2] = 64;
    _tile_loadconfig(&cfg);
}

template <int NX>
void dotTiles(const uint8_t* packed, int64_t t0, int64_t t1, int64_t n, const uint8_t* act, size_t actStride, int64_t k,
              float* y) {
    const int64_t nb = k / QK;
    const size_t tileBytes = size_t(nb) * kBlockBytes, scalesAt = actScalesOffset(nb, sizeof(Q8_0));
    alignas(64) int32_t sums[NX * 16];
    for (int64_t t = t0; t < t1; ++t) {
        const uint8_t* tile = packed + size_t(t) * tileBytes;
        __m512 acc[NX];
        #pragma GCC unroll 8
        for (int r = 0; r < NX; ++r) acc[r] = _mm512_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t* blk = tile + size_t(i) * kBlockBytes;
            avx2::prefetchWeights<kBlockBytes>(blk);
            _tile_zero(0);
            _tile_loadd(1, act + size_t(i) * sizeof(Q8_0) + offsetof(Q8_0, qs), long(actStride));
            _tile_loadd(2, blk, 64);
            _tile_dpbusd(0, 1, 2);
            _tile_stored(0, sums, 64);
            // (x + 128) . q - 128 * sum(q) = x . q, per weight row.
            const __m512i corr = _mm512_slli_epi32(
                _mm512_sub_epi32(_mm512_setzero_si512(),
                                 _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kSumAt)))),
                7);
            const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kScaleAt)));
            #pragma GCC unroll 8
            for (int r = 0; r < NX; ++r) {
                const float dx = reinterpret_cast<const float*>(act + r * actStride + scalesAt)[i];
                const __m512i s = _mm512_add_epi32(corr, _mm512_load_si512(sums + 16 * r));
                acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx)), _mm512_cvtepi32_ps(s), acc[r]);
            }
        }
        const int cols = int(std::min<int64_t>(16, n - t * 16));
        const __mmask16 mask = cols >= 16 ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
        #pragma GCC unroll 8
        for (int r = 0; r < NX; ++r) _mm512_mask_storeu_ps(y + r * n + t * 16, mask, acc[r]);
    }
}

} // namespace

void amxTileDotRange(const uint8_t* packed, int64_t tileBegin, int64_t tileEnd, int64_t n, const uint8_t* act,
                     size_t actStride, int nx, int64_t k, float* y) {
    configure(nx);
    switch (nx) {
    case 2: dotTiles<2>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    case 3: dotTiles<3>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    case 4: dotTiles<4>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    case 5: dotTiles<5>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    case 6: dotTiles<6>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    case 7: dotTiles<7>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    default: dotTiles<8>(packed, tileBegin, tileEnd, n, act, actStride, k, y); break;
    }
    _tile_release();
}

} // namespace weir::kernels::detail
