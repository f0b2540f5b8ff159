// AVX2 + FMA + F16C inner loops for ops.cpp (compiled with those flags; only
// called after opsHaveAvx2()).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops_simd.h"

namespace weir::kernels::ops_avx2 {

static inline float hsum(__m256 v) {
    const __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256 loadH(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
static inline void storeH(uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

float dotF16(const uint16_t* a, const uint16_t* b, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < n; i += 32) {
        s0 = _mm256_fmadd_ps(loadH(a + i), loadH(b + i), s0);
        s1 = _mm256_fmadd_ps(loadH(a + i + 8), loadH(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(loadH(a + i + 16), loadH(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(loadH(a + i + 24), loadH(b + i + 24), s3);
    }
    s0 = _mm256_add_ps(s0, s2);
    s1 = _mm256_add_ps(s1, s3);
    return hsum(_mm256_add_ps(s0, s1));
}

float dotF32(const float* a, const float* b, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    s0 = _mm256_add_ps(s0, s2);
    s1 = _mm256_add_ps(s1, s3);
    return hsum(_mm256_add_ps(s0, s1));
}

void madF16(uint16_t* y, const uint16_t* x, float v, int64_t n) {
    const __m256 vv = _mm256_set1_ps(v);
    for (int64_t i = 0; i < n; i += 8) storeH(y + i, _mm256_fmadd_ps(loadH(x + i), vv, loadH(y + i)));
}

void scaleF16(uint16_t* y, float v, int64_t n) {
    const __m256 vv = _mm256_set1_ps(v);
    for (int64_t i = 0; i < n; i += 8) storeH(y + i, _mm256_mul_ps(loadH(y + i), vv));
}

void madF32(float* y, const float* x, float v, int64_t n) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vv, _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] = std::fma(x[i], v, y[i]);
}

void toF16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) storeH(y + i, _mm256_loadu_ps(x + i));
}

void fromF16(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(y + i, loadH(x + i));
}

namespace {
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[32];
};
} // namespace

float dotQ8_0(const void* a, const void* b, int64_t n) {
    const auto* x = static_cast<const BlockQ8_0*>(a);
    const auto* y = static_cast<const BlockQ8_0*>(b);
    __m256 acc = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t blk = 0; blk < n / 32; ++blk) {
        const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[blk].qs));
        const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[blk].qs));
        // |x| * sign(y, x) keeps maddubs in its unsigned x signed form.
        const __m256i ax = _mm256_sign_epi8(qx, qx);
        const __m256i sy = _mm256_sign_epi8(qy, qx);
        const __m256i p16 = _mm256_maddubs_epi16(ax, sy);
        const __m256i p32 = _mm256_madd_epi16(p16, ones);
        const float d = _cvtsh_ss(x[blk].d) * _cvtsh_ss(y[blk].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(p32), acc);
    }
    return hsum(acc);
}

void quantizeQ8_0(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ8_0*>(dst);
    const __m256 signBit = _mm256_set1_ps(-0.0f);
    for (int64_t blk = 0; blk < n / 32; ++blk) {
        const float* v = x + blk * 32;
        __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8), v2 = _mm256_loadu_ps(v + 16),
               v3 = _mm256_loadu_ps(v + 24);
        __m256 mx = _mm256_max_ps(_mm256_andnot_ps(signBit, v0), _mm256_andnot_ps(signBit, v1));
        mx = _mm256_max_ps(mx, _mm256_max_ps(_mm256_andnot_ps(signBit, v2), _mm256_andnot_ps(signBit, v3)));
        __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(mx, 1), _mm256_castps256_ps128(mx));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        b[blk].d = _cvtss_sh(amax / 127.0f, _MM_FROUND_TO_NEAREST_INT);
        const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
        auto q = [&](__m256 t) {
            return _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(t, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        };
        const __m256i i0 = q(v0), i1 = q(v1), i2 = q(v2), i3 = q(v3);
        // Pack 32 int32 to int8 and undo the lane interleave of the packs.
        __m256i p01 = _mm256_packs_epi32(i0, i1), p23 = _mm256_packs_epi32(i2, i3);
        __m256i p = _mm256_packs_epi16(p01, p23);
        p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[blk].qs), p);
    }
}

void gegluF16Table(const float* gate, const float* up, float* y, int64_t n, const uint16_t* table) {
    alignas(32) uint16_t h[8];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_store_si128(reinterpret_cast<__m128i*>(h),
                        _mm256_cvtps_ph(_mm256_loadu_ps(gate + i), _MM_FROUND_TO_NEAREST_INT));
        for (int j = 0; j < 8; ++j) {
            const float g = gate[i + j];
            if (g <= -10.0f) y[i + j] = 0.0f;
            else if (g >= 10.0f) y[i + j] = g * up[i + j];
            else y[i + j] = _cvtsh_ss(table[h[j]]) * up[i + j];
        }
    }
    for (; i < n; ++i) {
        const float g = gate[i];
        if (g <= -10.0f) y[i] = 0.0f;
        else if (g >= 10.0f) y[i] = g * up[i];
        else y[i] = _cvtsh_ss(table[_cvtss_sh(g, _MM_FROUND_TO_NEAREST_INT)]) * up[i];
    }
}

} // namespace weir::kernels::ops_avx2
