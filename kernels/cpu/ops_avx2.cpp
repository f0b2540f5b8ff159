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
