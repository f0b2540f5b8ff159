// AVX2 row-dot kernels for F32, F16 and BF16 weights (activations already in
// the same format, see row_float.cpp), plus the AVX2 kernel registry.
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/simd_avx2.h"

namespace weir::kernels::detail {

RowDotFn avx2DotLegacy(GgmlType type);  // quant_legacy_avx2.cpp
RowDotFn avx2DotK(GgmlType type);       // quant_k_avx2.cpp

namespace {

using namespace avx2;

// Eight elements of each format as f32.
struct LoadF32 {
    using Elem = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static float one(float v) { return v; }
};
struct LoadF16 {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static float one(uint16_t v) { return f16(v); }
};
struct LoadBF16 {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float one(uint16_t v) {
        const __m128i bits = _mm_cvtsi32_si128(int(uint32_t(v) << 16));
        return _mm_cvtss_f32(_mm_castsi128_ps(bits));
    }
};

// Two accumulators per activation row (16 elements a step) so that even a
// single row keeps two FMA chains in flight.
template <class L, int NX>
void dot(const void* w, const void* act, size_t actStride, int64_t k, float* out, size_t outStride) {
    using Elem = typename L::Elem;
    const auto* wr = static_cast<const Elem*>(w);
    const Elem* xr[NX];
    __m256 acc0[NX], acc1[NX];
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        xr[r] = reinterpret_cast<const Elem*>(static_cast<const uint8_t*>(act) + r * actStride);
        acc0[r] = _mm256_setzero_ps();
        acc1[r] = _mm256_setzero_ps();
    }
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const __m256 w0 = L::load8(wr + i), w1 = L::load8(wr + i + 8);
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) {
            acc0[r] = _mm256_fmadd_ps(w0, L::load8(xr[r] + i), acc0[r]);
            acc1[r] = _mm256_fmadd_ps(w1, L::load8(xr[r] + i + 8), acc1[r]);
        }
    }
    if (i + 8 <= k) {
        const __m256 w0 = L::load8(wr + i);
        #pragma GCC unroll 4
        for (int r = 0; r < NX; ++r) acc0[r] = _mm256_fmadd_ps(w0, L::load8(xr[r] + i), acc0[r]);
        i += 8;
    }
    #pragma GCC unroll 4
    for (int r = 0; r < NX; ++r) {
        float sum = hsum(_mm256_add_ps(acc0[r], acc1[r]));
        for (int64_t j = i; j < k; ++j) sum += L::one(wr[j]) * L::one(xr[r][j]);
        out[r * outStride] = sum;
    }
}

template <class L>
void dotRows(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out, size_t outStride) {
    switch (nx) {
    case 1: dot<L, 1>(w, act, actStride, k, out, outStride); break;
    case 2: dot<L, 2>(w, act, actStride, k, out, outStride); break;
    case 3: dot<L, 3>(w, act, actStride, k, out, outStride); break;
    default: dot<L, 4>(w, act, actStride, k, out, outStride); break;
    }
}

} // namespace

RowDotFn avx2Dot(GgmlType type) {
    switch (type) {
    case GgmlType::F32: return dotRows<LoadF32>;
    case GgmlType::F16: return dotRows<LoadF16>;
    case GgmlType::BF16: return dotRows<LoadBF16>;
    default:
        if (RowDotFn f = avx2DotLegacy(type)) return f;
        return avx2DotK(type);
    }
}

} // namespace weir::kernels::detail
