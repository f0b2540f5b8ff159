// AVX2 + FMA + F16C inner loops for ops.cpp (compiled with those flags; only
// called after opsHaveAvx2()).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops_simd.h"

namespace weir::kernels::ops_avx2 {

// Horizontal sum in llama.cpp's order: halves added, then (a0+a1) + (a2+a3).
// The order matters: attention rounds to f16 right after, and a different
// last bit changes which way it rounds.
static inline float hsum(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_hadd_ps(s, s);
    return _mm_cvtss_f32(_mm_hadd_ps(t, t));
}

static inline __m256 loadH(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
static inline void storeH(uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

static inline __m256 widen(const uint16_t* p) { return loadH(p); }
static inline __m256 widen(const float* p) { return _mm256_loadu_ps(p); }

// Sum of a[i] * b[i] in 4 x 8 f32 lanes, llama.cpp's order (n % 32 == 0).
template <class A, class B>
static inline float dot4x8(const A* a, const B* b, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < n; i += 32) {
        s0 = _mm256_fmadd_ps(widen(a + i), widen(b + i), s0);
        s1 = _mm256_fmadd_ps(widen(a + i + 8), widen(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(widen(a + i + 16), widen(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(widen(a + i + 24), widen(b + i + 24), s3);
    }
    s0 = _mm256_add_ps(s0, s2);
    s1 = _mm256_add_ps(s1, s3);
    return hsum(_mm256_add_ps(s0, s1));
}

static inline float toF32(uint16_t h) { return _cvtsh_ss(h); }
static inline float toF32(float f) { return f; }

// llama.cpp's AVX-512 order on 256-bit registers: 4 accumulators of 16 lanes
// (here a low and a high half each) over whole steps of 64; the accumulators
// added 0+2, 1+3, then together; the 16 lanes reduced as
// _mm512_reduce_add_ps does (high 8 + low 8, high 4 + low 4, then
// (l0 + l2) + (l1 + l3)); the rest of the elements added one by one in
// double, each product rounded to f32 first.
template <class A, class B>
static inline float dot4x16(const A* a, const B* b, int64_t n) {
    __m256 lo[4], hi[4];
    for (int j = 0; j < 4; ++j) lo[j] = hi[j] = _mm256_setzero_ps();
    const int64_t whole = n & ~int64_t(63);
    for (int64_t i = 0; i < whole; i += 64) {
        for (int j = 0; j < 4; ++j) {
            lo[j] = _mm256_fmadd_ps(widen(a + i + 16 * j), widen(b + i + 16 * j), lo[j]);
            hi[j] = _mm256_fmadd_ps(widen(a + i + 16 * j + 8), widen(b + i + 16 * j + 8), hi[j]);
        }
    }
    const __m256 lo01 = _mm256_add_ps(_mm256_add_ps(lo[0], lo[2]), _mm256_add_ps(lo[1], lo[3]));
    const __m256 hi01 = _mm256_add_ps(_mm256_add_ps(hi[0], hi[2]), _mm256_add_ps(hi[1], hi[3]));
    const __m256 l8 = _mm256_add_ps(hi01, lo01);
    const __m128 l4 = _mm_add_ps(_mm256_extractf128_ps(l8, 1), _mm256_castps256_ps128(l8));
    float l[4];
    _mm_storeu_ps(l, l4);
    double sum = double((l[0] + l[2]) + (l[1] + l[3]));
    for (int64_t i = whole; i < n; ++i) sum += double(toF32(a[i]) * toF32(b[i]));
    return float(sum);
}

float dotF16(const uint16_t* a, const uint16_t* b, int64_t n) { return dot4x8(a, b, n); }
float dotF16F32(const uint16_t* a, const float* b, int64_t n) { return dot4x8(a, b, n); }
float dotF32(const float* a, const float* b, int64_t n) { return dot4x8(a, b, n); }
float dotF16Lanes16(const uint16_t* a, const uint16_t* b, int64_t n) { return dot4x16(a, b, n); }
float dotF16F32Lanes16(const uint16_t* a, const float* b, int64_t n) { return dot4x16(a, b, n); }
float dotF32Lanes16(const float* a, const float* b, int64_t n) { return dot4x16(a, b, n); }

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

// expApprox (ops.cpp) on 8 lanes, same steps.
static inline __m256 expApprox8(__m256 x) {
    const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shifter);
    const __m256 n = _mm256_sub_ps(z, shifter);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 absN = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 big = _mm256_cmp_ps(absN, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    const __m256 normal = _mm256_fmadd_ps(j, k, k);
    if (!_mm256_movemask_ps(big)) return normal;
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32(int(0x82000000u)));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 huge = _mm256_cmp_ps(absN, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    const __m256 split = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
    const __m256 r = _mm256_blendv_ps(normal, split, big);
    return _mm256_blendv_ps(r, _mm256_mul_ps(s1, s1), huge);
}

int64_t swiglu(const float* gate, const float* up, float* y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = expApprox8(_mm256_sub_ps(_mm256_setzero_ps(), g));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
    }
    return i;
}

// expApprox512 on 8 lanes; `ok` is false where |n| > 126 (2^n not a normal
// float: those lanes are left to the scalar code).
static inline __m256 expApprox512x8(__m256 x, bool& ok) {
    const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shifter);
    const __m256 n = _mm256_sub_ps(z, shifter);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 absN = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    ok = _mm256_movemask_ps(_mm256_cmp_ps(absN, _mm256_set1_ps(126.0f), _CMP_GT_OQ)) == 0;
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    // 2^n exact; one rounding of j * 2^n, as scalef.
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(z), 23),
                                                          _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    return _mm256_mul_ps(j, k);
}

int64_t swiglu512(const float* gate, const float* up, float* y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        bool ok;
        const __m256 e = expApprox512x8(_mm256_sub_ps(_mm256_setzero_ps(), g), ok);
        if (!ok) break;
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
    }
    return i;
}

void ropeApply(float* x, int64_t nHeads, int64_t headDim, int32_t nRot, bool neox, const float* cs) {
    const int32_t half = nRot / 2;
    for (int64_t h = 0; h < nHeads; ++h) {
        float* v = x + h * headDim;
        if (neox) {
            int32_t i = 0;
            for (; i + 8 <= half; i += 8) {
                // cs holds (cos, sin) pairs: split 8 pairs into a cos and a sin vector.
                const __m256 p0 = _mm256_loadu_ps(cs + 2 * i), p1 = _mm256_loadu_ps(cs + 2 * i + 8);
                const __m256 ev = _mm256_shuffle_ps(p0, p1, _MM_SHUFFLE(2, 0, 2, 0));
                const __m256 od = _mm256_shuffle_ps(p0, p1, _MM_SHUFFLE(3, 1, 3, 1));
                const __m256 c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
                const __m256 s = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
                const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + i + half);
                _mm256_storeu_ps(v + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
                _mm256_storeu_ps(v + i + half, _mm256_fmadd_ps(a, s, _mm256_mul_ps(b, c)));
            }
            for (; i < half; ++i) {
                const float c = cs[2 * i], s = cs[2 * i + 1], a = v[i], b = v[i + half];
                v[i] = std::fma(a, c, -(b * s));
                v[i + half] = std::fma(a, s, b * c);
            }
        } else {
            for (int32_t i = 0; i < half; ++i) {
                const float c = cs[2 * i], s = cs[2 * i + 1], a = v[2 * i], b = v[2 * i + 1];
                v[2 * i] = std::fma(a, c, -(b * s));
                v[2 * i + 1] = std::fma(a, s, b * c);
            }
        }
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

void squareSums(const float* x, int64_t n, int64_t stride, double* sums) {
    // Lane r of `lo` is row r's chain, of `hi` row 4 + r's: one gathered
    // column of 4 rows at a time, squared in float, widened, added in order.
    const __m128i rows = _mm_setr_epi32(0, int(stride), int(2 * stride), int(3 * stride));
    const float* x4 = x + 4 * stride;
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (int64_t i = 0; i < n; ++i) {
        const __m128 a = _mm_i32gather_ps(x + i, rows, 4), b = _mm_i32gather_ps(x4 + i, rows, 4);
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm_mul_ps(a, a)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm_mul_ps(b, b)));
    }
    _mm256_storeu_pd(sums, lo);
    _mm256_storeu_pd(sums + 4, hi);
}

void scaleRow(const float* x, const float* w, float* y, int64_t n, float s) {
    const __m256 sv = _mm256_set1_ps(s);
    int64_t i = 0;
    if (w) {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), _mm256_loadu_ps(w + i)));
        for (; i < n; ++i) y[i] = (x[i] * s) * w[i];
    } else {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), sv));
        for (; i < n; ++i) y[i] = x[i] * s;
    }
}

float maxF32(const float* x, int64_t n) {
    // maxps returns its second operand when either is NaN: NaN inputs go first
    // and are dropped. Four accumulators so the loop is not one latency chain.
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
        m2 = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), m2);
        m3 = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), m3);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    float best = -INFINITY;
    for (float v : lanes) best = v > best ? v : best;
    for (; i < n; ++i) best = x[i] > best ? x[i] : best;
    return best;
}

int64_t findF32(const float* x, int64_t from, int64_t n, float v) {
    const __m256 target = _mm256_set1_ps(v);
    int64_t i = from;
    for (; i + 8 <= n; i += 8)
        if (const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), target, _CMP_EQ_OQ)))
            return i + __builtin_ctz(unsigned(mask));
    for (; i < n; ++i)
        if (x[i] == v) return i;
    return n;
}

} // namespace weir::kernels::ops_avx2
