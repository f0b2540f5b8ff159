#pragma once
// Internal to quant_legacy_avx2.cpp and quant_legacy_avx512.cpp, which are
// compiled for different ISAs and include this once each: the row-dot
// kernels for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0/Q8_1 activations,
// templated on the integer dot product. One weight block is unpacked to 32
// bytes once and multiplied with the matching block of several activation
// rows (Dot::kMaxRows: as many accumulators as the ISA has registers for). The float arithmetic is the same whatever the policy, so results are
// bit-identical between them (the integer sums cannot saturate: |w| <= 128,
// |x| <= 127, two products per int16 stay below 32767).
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

// Signed weight types as unsigned bytes q + kOffset (for the AVX-512 and AMX
// kernels, whose vpdpbusd / tdpbusd take one unsigned operand):
// sum(q * x) = sum((q + kOffset) * x) - kOffset * sum(x), exact in int32
// lane by lane (4 products of at most 255 * 128 per lane).
struct BiasedQ4_0 {
    using Block = Q4_0;
    static constexpr int kOffset = 8;
    static __m256i q(const Block& b) { return nibbles32(b.qs); }
};
struct BiasedQ5_0 {
    using Block = Q5_0;
    static constexpr int kOffset = 16;
    static __m256i q(const Block& b) {
        return _mm256_or_si256(nibbles32(b.qs), _mm256_and_si256(bitsToBytes(loadU32(b.qh)), _mm256_set1_epi8(0x10)));
    }
};
struct BiasedQ8_0 {
    using Block = Q8_0;
    static constexpr int kOffset = 128;
    static __m256i q(const Block& b) { return _mm256_xor_si256(load(b.qs), _mm256_set1_epi8(char(0x80))); }
};

// A block's weights as signed bytes: the biased bytes minus the bias, wrapping
// (Q8_0's -128 included).
template <class U>
inline __m256i signedQ(const typename U::Block& b) {
    return _mm256_sub_epi8(U::q(b), _mm256_set1_epi8(char(U::kOffset)));
}

// Activation rows as in actRowBytes: blocks, then f32 scales d[nb] (and s[nb]).
// Dot is the integer dot product: Dot::i8i8(|w|, w, x) and Dot::u8i8(w, x)
// give 8 int32 sums of 4 byte products each (lane j: bytes 4j..4j+3).
template <class Dot, class U, int NX>
void dot(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    using Act = std::conditional_t<U::kSigned, Q8_0, Q8_1>;
    const auto* wb = static_cast<const typename U::Block*>(w);
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Act));
    const Act* xb[NX];
    const float* xd[NX];
    __m256 acc[NX];
    float summ[NX];
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) {
        const uint8_t* row = static_cast<const uint8_t*>(act) + r * actStride;
        xb[r] = reinterpret_cast<const Act*>(row);
        xd[r] = reinterpret_cast<const float*>(row + scalesAt);
        acc[r] = _mm256_setzero_ps();
        summ[r] = 0.0f;
    }
    for (int64_t i = 0; i < nb; ++i) {
        if constexpr (NX <= kPrefetchMaxRows) prefetchWeights<sizeof(typename U::Block)>(wb + i);
        const __m256i qw = U::q(wb[i]);
        const float dw = f16(wb[i].d);
        if constexpr (U::kSigned) {
            const __m256i absW = _mm256_sign_epi8(qw, qw);
            #pragma GCC unroll 16
            for (int r = 0; r < NX; ++r) {
                const __m256i p = Dot::i8i8(absW, qw, load(xb[r][i].qs));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * xd[r][i]), _mm256_cvtepi32_ps(p), acc[r]);
            }
        } else {
            const float mw = U::m(wb[i]);
            #pragma GCC unroll 16
            for (int r = 0; r < NX; ++r) {
                const __m256i p = Dot::u8i8(qw, load(xb[r][i].qs));
                acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * xd[r][i]), _mm256_cvtepi32_ps(p), acc[r]);
                summ[r] += mw * xd[r][nb + i];
            }
        }
    }
    #pragma GCC unroll 16
    for (int r = 0; r < NX; ++r) out[r * outStride] = hsum(acc[r]) + summ[r];
}

// One weight row against nx (1..Dot::kMaxRows) activation rows: the block
// is unpacked once for all of them.
template <class Dot, class U, int N = Dot::kMaxRows>
void dotRows(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    if constexpr (N == 1) {
        dot<Dot, U, 1>(w, act, actStride, k, out, outStride);
    } else {
        if (nx >= N) return dot<Dot, U, N>(w, act, actStride, k, out, outStride);
        dotRows<Dot, U, N - 1>(w, act, actStride, nx, k, out, outStride);
    }
}

// The kernel table of one integer-dot policy.
template <class Dot>
RowDotFn legacyRows(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return dotRows<Dot, UnpackQ4_0>;
    case GgmlType::Q4_1: return dotRows<Dot, UnpackQ4_1>;
    case GgmlType::Q5_0: return dotRows<Dot, UnpackQ5_0>;
    case GgmlType::Q5_1: return dotRows<Dot, UnpackQ5_1>;
    case GgmlType::Q8_0: return dotRows<Dot, UnpackQ8_0>;
    default: return nullptr;
    }
}

} // namespace
} // namespace weir::kernels::detail
