// A decode kernel for weights packed once at load (weight_tiles.h), on
// AVX-512 VNNI: 16 weight rows at a time, one int32 lane per row. A 32-element
// block of 16 rows is stored as tdpbusd's B tile: 8 rows of 64 bytes, row j
// holding elements 4j..4j+3 of each weight row. Eight vpdpbusd, each against
// 4 activation bytes broadcast to every lane, give the 16 rows' whole block
// sums at once; one multiply-add then scales them. The two-row kernel
// (quant_legacy_avx512.cpp) needs a multiply-add per 2 rows and block and
// activation row, which made the output head compute-bound once a step
// carries a few sequences.
//
// The block sums are exact integers as in every kernel; the float sum runs
// over blocks in order (as the AMX kernels do), not in 8 lanes as llama.cpp's
// AVX2 kernel: results differ from the unpacked kernels in rounding, never
// by the number of activation rows.
#include <cstring>

#include "kernels/cpu/quant_legacy_rows.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace weir::kernels::detail {

namespace {

constexpr int kTile = 16;
// Per block of a tile: the B tile (512 bytes), sum(q) of each row as int16,
// each row's scale as the block's own f16 bits.
constexpr size_t kBAt = 0, kSumAt = 512, kScaleAt = 544, kBlockBytes = 576;

template <class U>
void pack(const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin, int64_t tileEnd, void* dst) {
    const int64_t nb = k / QK;
    alignas(64) int8_t q[kTile][QK];
    const __m512i rowStarts = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 _mm512_set1_epi32(QK / 4));
    for (int64_t t = tileBegin; t < tileEnd; ++t) {
        uint8_t* o = static_cast<uint8_t*>(dst) + size_t(t * nb) * kBlockBytes;
        for (int64_t i = 0; i < nb; ++i, o += kBlockBytes) {
            alignas(32) uint16_t d[kTile];
            for (int c = 0; c < kTile; ++c) {
                const int64_t n = t * kTile + c;
                __m256i v = _mm256_setzero_si256();
                d[c] = 0;
                if (n < rows) {
                    const auto& b = reinterpret_cast<const typename U::Block*>(static_cast<const uint8_t*>(w) +
                                                                                size_t(n) * rowStride)[i];
                    v = signedQ<U>(b);
                    d[c] = b.d;
                }
                _mm256_store_si256(reinterpret_cast<__m256i*>(q[c]), v);
            }
            __m512i sum = _mm512_setzero_si512();  // sum(q) per row: 4 bytes per lane at a time
            for (int r = 0; r < QK / 4; ++r) {
                const __m512i v = _mm512_i32gather_epi32(_mm512_add_epi32(rowStarts, _mm512_set1_epi32(r)), q, 4);
                _mm512_storeu_si512(o + kBAt + 64 * r, v);
                sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), v);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + kSumAt), _mm512_cvtepi32_epi16(sum));
            std::memcpy(o + kScaleAt, d, sizeof d);
        }
    }
}

// One tile against NX activation rows (Q8_0 rows biased to unsigned, f32
// scales at actScalesOffset): out[r * outStride + c] for c < cols.
template <int NX>
void dotTile(const uint8_t* tile, const uint8_t* act, size_t actStride, int64_t k, float* out, size_t outStride, int cols) {
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Q8_0));
    __m512 acc[NX];
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* blk = tile + size_t(i) * kBlockBytes;
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<kBlockBytes>(blk);
        __m512i b[QK / 4];
        #pragma GCC unroll 8
        for (int j = 0; j < QK / 4; ++j) b[j] = _mm512_loadu_si512(blk + kBAt + 64 * j);
        // (x + 128) . q - 128 * sum(q) = x . q, per row.
        const __m512i corr = _mm512_slli_epi32(
            _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_cvtepi16_epi32(load(blk + kSumAt))), 7);
        const __m512 dw = _mm512_cvtph_ps(load(blk + kScaleAt));
        #pragma GCC unroll 16
        for (int r = 0; r < NX; ++r) {
            const uint8_t* x = act + r * actStride + size_t(i) * sizeof(Q8_0) + offsetof(Q8_0, qs);
            // Two dependency chains, not one of eight (integer sums: same result).
            __m512i s[2] = {corr, _mm512_setzero_si512()};
            #pragma GCC unroll 8
            for (int j = 0; j < QK / 4; ++j) {
                int32_t four;
                std::memcpy(&four, x + 4 * j, 4);
                s[j & 1] = _mm512_dpbusd_epi32(s[j & 1], _mm512_set1_epi32(four), b[j]);
            }
            const float dx = reinterpret_cast<const float*>(act + r * actStride + scalesAt)[i];
            acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx)), _mm512_cvtepi32_ps(_mm512_add_epi32(s[0], s[1])), acc[r]);
        }
    }
    const __mmask16 mask = cols >= kTile ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) _mm512_mask_storeu_ps(out + r * outStride, mask, acc[r]);
}

template <int N = kMaxTileDotRows>
void dotTileRows(const uint8_t* tile, const uint8_t* act, size_t actStride, int nx, int64_t k, float* out,
                 size_t outStride, int cols) {
    if constexpr (N == 1) {
        dotTile<1>(tile, act, actStride, k, out, outStride, cols);
    } else {
        if (nx >= N) return dotTile<N>(tile, act, actStride, k, out, outStride, cols);
        dotTileRows<N - 1>(tile, act, actStride, nx, k, out, outStride, cols);
    }
}

} // namespace

size_t avx512TileBytes(int64_t k) { return size_t(k / QK) * kBlockBytes; }

bool avx512TilesSupport(GgmlType type) {
    return type == GgmlType::Q4_0 || type == GgmlType::Q5_0 || type == GgmlType::Q8_0;
}

void avx512PackTiles(GgmlType type, const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin,
                     int64_t tileEnd, void* dst) {
    switch (type) {
    case GgmlType::Q4_0: return pack<BiasedQ4_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    case GgmlType::Q5_0: return pack<BiasedQ5_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    default: return pack<BiasedQ8_0>(w, rowStride, rows, k, tileBegin, tileEnd, dst);
    }
}

void avx512TileDot(const uint8_t* tile, const uint8_t* act, size_t actStride, int nx, int64_t k, float* out,
                   size_t outStride, int cols) {
    dotTileRows(tile, act, actStride, nx, k, out, outStride, cols);
}

} // namespace weir::kernels::detail
