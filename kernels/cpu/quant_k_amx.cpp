// AMX-INT8 GEMM for Q4_K and Q6_K weights (amx_tiles.h). A unit is a
// sub-block: 32 elements with a 6-bit scale and minimum (Q4_K: weight =
// d * sc * q - dmin * m, q in 0..15) or 16 elements with a signed 8-bit
// scale (Q6_K: d * sc * (q - 32), packed as the signed q - 32). The
// activations are Q8_K rows biased to unsigned, followed by each unit's dx
// (its super-block's scale) and, for Q4_K, dx * sum(x) over the unit, from
// Q8_K's exact 16-element sums, for the minimum's term. Only called when
// amxActive().
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {
#ifdef WEIR_AMX_EMULATE
namespace emulated_amx {
#endif

namespace {

using namespace blocks;
using namespace avx2;

// Per weight type: the unit layout and how a super-block decodes to 256
// signed weights plus a scale (and minimum) per unit.
struct AmxQ4_K {
    using Block = Q4_K;
    using Layout = UnitLayout<32, true>;
    static void decode(const Block& b, int8_t* q, float* scale, float* minimum) {
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        for (int j = 0; j < 4; ++j) {  // qs[32j + l]: element 64j + l (low nibble), 64j + 32 + l (high)
            const __m256i v = load(b.qs + 32 * j);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 64 * j), _mm256_and_si256(v, low4));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 64 * j + 32),
                                _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
        }
        uint64_t sc, m;
        kScalesMins(b.scales, sc, m);
        const float d = f16(b.d), dmin = f16(b.dmin);
        for (int g = 0; g < 8; ++g) {
            scale[g] = d * float((sc >> (8 * g)) & 0xff);
            minimum[g] = dmin * float((m >> (8 * g)) & 0xff);
        }
    }
};

struct AmxQ6_K {
    using Block = Q6_K;
    using Layout = UnitLayout<16, false>;
    static void decode(const Block& b, int8_t* q, float* scale, float*) {
        const __m256i low4 = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(0x03), offset = _mm256_set1_epi8(32);
        for (int h = 0; h < 2; ++h) {
            const __m256i l0 = load(b.ql + 64 * h), l1 = load(b.ql + 64 * h + 32), hb = load(b.qh + 32 * h);
            const __m256i parts[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(hb, two), 4)),
                _mm256_or_si256(_mm256_and_si256(l1, low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), two), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), two), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), two), 4)),
            };
            for (int p = 0; p < 4; ++p)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 128 * h + 32 * p), _mm256_sub_epi8(parts[p], offset));
        }
        const float d = f16(b.d);
        for (int g = 0; g < 16; ++g) scale[g] = d * float(b.scales[g]);
    }
};

template <class T>
constexpr int kUnitsPerBlock = QK_K / T::Layout::kBytes;

template <class T>
size_t packedTileBytes(int64_t k) {
    return size_t(k / T::Layout::kBytes) * T::Layout::kPackedBytes;
}

template <class T>
void packTiles(const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin, int64_t tileEnd, void* dst) {
    constexpr int G = kUnitsPerBlock<T>, S = T::Layout::kBytes;
    const int64_t nsb = k / QK_K;
    alignas(64) int8_t q[kTile][QK_K];
    alignas(64) float scale[G][kTile], minimum[G][kTile];
    for (int64_t t = tileBegin; t < tileEnd; ++t) {
        uint8_t* o = static_cast<uint8_t*>(dst) + size_t(t) * packedTileBytes<T>(k);
        for (int64_t s = 0; s < nsb; ++s) {
            for (int c = 0; c < kTile; ++c) {
                const int64_t n = t * kTile + c;
                float sc[G], mn[G] = {};
                if (n < rows) {
                    const auto& b = reinterpret_cast<const typename T::Block*>(static_cast<const uint8_t*>(w) +
                                                                                size_t(n) * rowStride)[s];
                    T::decode(b, q[c], sc, mn);
                } else {
                    std::memset(q[c], 0, QK_K);
                    std::fill(sc, sc + G, 0.0f);
                }
                for (int g = 0; g < G; ++g) scale[g][c] = sc[g], minimum[g][c] = mn[g];
            }
            for (int g = 0; g < G; ++g, o += T::Layout::kPackedBytes)
                packUnit<typename T::Layout>(&q[0][0], QK_K, size_t(S * g), scale[g], minimum[g], o);
        }
    }
}

// Activation rows: the Q8_K blocks, then from dxAt a f32 dx per unit, then
// (with a minimum) a f32 dx * sum(x) per unit.
template <class T>
size_t dxAt(int64_t k) {
    return (size_t(k / QK_K) * sizeof(Q8_K) + 63) & ~size_t(63);
}
template <class T>
size_t dxSumAt(int64_t k) {
    return dxAt<T>(k) + size_t(k / T::Layout::kBytes) * 4;
}
template <class T>
size_t actBytes(int64_t k) {
    return dxSumAt<T>(k) + (T::Layout::kMin ? size_t(k / T::Layout::kBytes) * 4 : 0);
}

template <class T>
void convertAct(const float* x, void* dst, int64_t k) {
    constexpr int G = kUnitsPerBlock<T>, S = T::Layout::kBytes;
    typeOps(GgmlType::Q4_K)->convert(x, dst, k);  // Q8_K, as for every K-quant
    auto* row = static_cast<uint8_t*>(dst);
    auto* dx = reinterpret_cast<float*>(row + dxAt<T>(k));
    auto* dxSum = reinterpret_cast<float*>(row + dxSumAt<T>(k));
    auto* b = reinterpret_cast<Q8_K*>(row);
    for (int64_t s = 0; s < k / QK_K; ++s) {
        for (int g = 0; g < G; ++g) {
            dx[s * G + g] = b[s].d;
            if constexpr (T::Layout::kMin) {
                int sum = 0;
                for (int h = 0; h < S / 16; ++h) sum += b[s].bsums[g * (S / 16) + h];
                dxSum[s * G + g] = b[s].d * float(sum);
            }
        }
        for (int j = 0; j < QK_K; j += 32)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[s].qs + j),
                                _mm256_xor_si256(load(b[s].qs + j), _mm256_set1_epi8(char(0x80))));
    }
}

template <class T, class Backend>
void gemmTilePair(const void* packedPair, const uint8_t* act, size_t actStride, int64_t mBegin, int64_t mEnd, int64_t M,
                  int64_t k, float* out, size_t outStride, int cols) {
    constexpr int G = kUnitsPerBlock<T>, S = T::Layout::kBytes;
    auto actAt = [](int64_t u) { return size_t(u / G) * sizeof(Q8_K) + offsetof(Q8_K, qs) + size_t(u % G) * S; };
    gemmPair<Backend, typename T::Layout>(static_cast<const uint8_t*>(packedPair), k / S, actAt, act, actStride, dxAt<T>(k),
                                 dxSumAt<T>(k), mBegin, mEnd, M, out, outStride, cols);
}

template <class T>
constexpr TileGemmOps kOps{packedTileBytes<T>, packTiles<T>, actBytes<T>, convertAct<T>, gemmTilePair<T, AmxBackend>,
                      gemmTilePair<T, VnniBackend>};

} // namespace

const TileGemmOps* tileGemmKOps(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_K: return &kOps<AmxQ4_K>;
    case GgmlType::Q6_K: return &kOps<AmxQ6_K>;
    default: return nullptr;
    }
}

#ifdef WEIR_AMX_EMULATE
} // namespace emulated_amx
#endif
} // namespace weir::kernels::detail
