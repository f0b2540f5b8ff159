// AMX-INT8 GEMM for Q4_0/Q5_0/Q8_0 weights (amx_tiles.h): a unit is one
// 32-element block; the activations are Q8_0 rows (actRowBytes: blocks,
// then their f32 scales, which serve as the per-unit dx) biased to unsigned.
// Only called when amxActive().
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/quant_legacy_rows.h"

namespace weir::kernels::detail {
#ifdef WEIR_AMX_EMULATE
namespace emulated_amx {
#endif

namespace {

using Layout = UnitLayout<QK, false>;

size_t packedTileBytes(int64_t k) { return size_t(k / QK) * Layout::kPackedBytes; }

template <class U>
void packTiles(const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin, int64_t tileEnd, void* dst) {
    const int64_t nb = k / QK;
    alignas(64) int8_t q[kTile][QK];
    for (int64_t t = tileBegin; t < tileEnd; ++t) {
        uint8_t* o = static_cast<uint8_t*>(dst) + size_t(t) * packedTileBytes(k);
        for (int64_t i = 0; i < nb; ++i, o += Layout::kPackedBytes) {
            alignas(64) float d[kTile];
            for (int c = 0; c < kTile; ++c) {
                const int64_t n = t * kTile + c;
                __m256i v = _mm256_setzero_si256();
                d[c] = 0.0f;
                if (n < rows) {
                    const auto& b = reinterpret_cast<const typename U::Block*>(static_cast<const uint8_t*>(w) +
                                                                                size_t(n) * rowStride)[i];
                    v = signedQ<U>(b);
                    d[c] = f16(b.d);
                }
                _mm256_store_si256(reinterpret_cast<__m256i*>(q[c]), v);
            }
            packUnit<Layout>(&q[0][0], QK, 0, d, nullptr, o);
        }
    }
}

size_t actBytes(int64_t k) { return actRowBytes(GgmlType::Q8_0, k); }

void convertAct(const float* x, void* dst, int64_t k) {
    convertActQ8_0(x, dst, k);
    avx512BiasActivations(dst, k);
}

template <class Backend>
void gemmTilePair(const void* packedPair, const uint8_t* act, size_t actStride, int64_t mBegin, int64_t mEnd, int64_t M,
                  int64_t k, float* out, size_t outStride, int cols) {
    const int64_t nb = k / QK;
    auto actAt = [](int64_t u) { return size_t(u) * sizeof(Q8_0) + offsetof(Q8_0, qs); };
    gemmPair<Backend, Layout>(static_cast<const uint8_t*>(packedPair), nb, actAt, act, actStride, actScalesOffset(nb, sizeof(Q8_0)),
                     0, mBegin, mEnd, M, out, outStride, cols);
}

template <class U>
constexpr TileGemmOps kOps{packedTileBytes, packTiles<U>, actBytes, convertAct, gemmTilePair<AmxBackend>,
                      gemmTilePair<VnniBackend>};

} // namespace

const TileGemmOps* tileGemmLegacyOps(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return &kOps<BiasedQ4_0>;
    case GgmlType::Q5_0: return &kOps<BiasedQ5_0>;
    case GgmlType::Q8_0: return &kOps<BiasedQ8_0>;
    default: return nullptr;
    }
}

#ifdef WEIR_AMX_EMULATE
} // namespace emulated_amx
#endif
} // namespace weir::kernels::detail
