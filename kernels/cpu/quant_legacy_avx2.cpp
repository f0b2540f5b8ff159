// AVX2 row-dot kernels for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0/Q8_1
// activations (math in quant_legacy.cpp). One weight block is unpacked to 32
// bytes once and multiplied with the matching block of each activation row.
#include <type_traits>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {

namespace {

using namespace blocks;
using namespace avx2;

// Per weight type: unpack a block to 32 bytes (signed values, or unsigned for
// the types with a minimum) plus its scale and minimum.
struct UnpackQ4_0 {
    using Block = Q4_0;
    static constexpr bool kSigned = true;
    static __m256i q(const Block& b) { return _mm256_sub_epi8(nibbles32(b.qs), _mm256_set1_epi8(8)); }
    static float m(const Block&) { return 0.0f; }
};
struct UnpackQ4_1 {
    using Block = Q4_1;
    static constexpr bool kSigned = false;
    static __m256i q(const Block& b) { return nibbles32(b.qs); }
    static float m(const Block& b) { return f16(b.m); }
};
struct UnpackQ5_0 {
    using Block = Q5_0;
    static constexpr bool kSigned = true;
    // nibble + 16 * bit - 16: where the bit is clear, set the top nibble
    // (0xf0 | nibble == nibble - 16 as int8).
    static __m256i q(const Block& b) {
        const __m256i hi = _mm256_andnot_si256(bitsToBytes(loadU32(b.qh)), _mm256_set1_epi8(char(0xf0)));
        return _mm256_or_si256(nibbles32(b.qs), hi);
    }
    static float m(const Block&) { return 0.0f; }
};
struct UnpackQ5_1 {
    using Block = Q5_1;
    static constexpr bool kSigned = false;
    static __m256i q(const Block& b) {
        const __m256i hi = _mm256_and_si256(bitsToBytes(loadU32(b.qh)), _mm256_set1_epi8(0x10));
        return _mm256_or_si256(nibbles32(b.qs), hi);
    }
    static float m(const Block& b) { return f16(b.m); }
};
struct UnpackQ8_0 {
    using Block = Q8_0;
    static constexpr bool kSigned = true;
    static __m256i q(const Block& b) { return load(b.qs); }
    static float m(const Block&) { return 0.0f; }
};

// Activation rows as in actRowBytes: blocks, then f32 scales d[nb] (and s[nb]).
template <class U, int NX>
void dot(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    using Act = std::conditional_t<U::kSigned, Q8_0, Q8_1>;
    const auto* wb = static_cast<const typename U::Block*>(w);
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Act));
    const Act* xb[NX];
    const float* xd[NX];
    __m256 acc[NX];
    float summ[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        const uint8_t* row = static_cast<const uint8_t*>(act) + r * actStride;
        xb[r] = reinterpret_cast<const Act*>(row);
        xd[r] = reinterpret_cast<const float*>(row + scalesAt);
        acc[r] = _mm256_setzero_ps();
        summ[r] = 0.0f;
    }
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i qw = U::q(wb[i]);
        const float dw = f16(wb[i].d);
        if constexpr (U::kSigned) {
            const __m256i absW = _mm256_sign_epi8(qw, qw);
            #pragma GCC unroll 4
            for (int r = 0; r < NX; ++r) {
                const __m256i p = dotI8I8(absW, qw, load(xb[r][i].qs));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * xd[r][i]), _mm256_cvtepi32_ps(p), acc[r]);
            }
        } else {
            const float mw = U::m(wb[i]);
            #pragma GCC unroll 4
            for (int r = 0; r < NX; ++r) {
                const __m256i p = dotU8I8(qw, load(xb[r][i].qs));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * xd[r][i]), _mm256_cvtepi32_ps(p), acc[r]);
                summ[r] += mw * xd[r][nb + i];
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) out[r * outStride] = hsum(acc[r]) + summ[r];
}

template <class U>
void dotRows(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dot<U, 1>(w, act, actStride, k, out, outStride); break;
    case 2: dot<U, 2>(w, act, actStride, k, out, outStride); break;
    case 3: dot<U, 3>(w, act, actStride, k, out, outStride); break;
    default: dot<U, 4>(w, act, actStride, k, out, outStride); break;
    }
}

} // namespace

float dotQ8_0RowsAvx2(const void* a, const void* b, int64_t n) {
    const auto* x = static_cast<const Q8_0*>(a);
    const auto* y = static_cast<const Q8_0*>(b);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / QK; ++i) {
        const __m256i qx = load(x[i].qs);
        const __m256i p = dotI8I8(_mm256_sign_epi8(qx, qx), qx, load(y[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(x[i].d) * f16(y[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum(acc);
}

RowDotFn avx2DotLegacy(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return dotRows<UnpackQ4_0>;
    case GgmlType::Q4_1: return dotRows<UnpackQ4_1>;
    case GgmlType::Q5_0: return dotRows<UnpackQ5_0>;
    case GgmlType::Q5_1: return dotRows<UnpackQ5_1>;
    case GgmlType::Q8_0: return dotRows<UnpackQ8_0>;
    default: return nullptr;
    }
}

} // namespace weir::kernels::detail
