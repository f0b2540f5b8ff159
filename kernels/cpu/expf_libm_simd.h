#pragma once
// expf, several at a time, with the bits of glibc's expf (2.28 and later; the
// x86-64 build with FMA, __expf_fma): attention's softmax calls std::exp once
// per position and query, as llama.cpp's does, and must keep its results.
// glibc computes in double: x * 32/ln2 = k + r (k rounded with the 1.5 * 2^52
// shift trick, r from a fused multiply-subtract), 2^(k/32) from a 32-entry
// table with k's high bits added to the exponent, a degree-3 polynomial in r,
// one rounding to float at the end. Each of those is an IEEE operation with
// one rounding, so doing them in vector lanes gives the same bits; the same
// fused multiply-adds are used where glibc's object code uses them. Inputs
// glibc treats apart (|x| >= 88, infinities, NaN) go to std::exp itself.
// Include only from the kernel files built for AVX2 or AVX-512
// (attend_tile_kernel.h); matchesLibm() checks the match at run time.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace weir::kernels::expf_libm {
namespace {

// 2^(i/32) as double bits minus i << 47, so that adding k << 47 yields
// 2^(k/32) (glibc's __exp2f_data.tab).
alignas(64) constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
constexpr double kShift = 0x1.8p+52;
constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;
// |x| with this top-12-bit exponent field or more is glibc's special case.
constexpr uint32_t kSpecialTop = 0x42b;

// Lanes of `x` that glibc does not compute with the common path.
inline int specialLanes8(__m256 x) {
    const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(int(kSpecialTop) - 1))));
}

#ifdef __AVX512F__
inline __m256 common8(__m256 x) {
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d kds = _mm512_fmadd_pd(_mm512_set1_pd(kInvLn2N), xd, _mm512_set1_pd(kShift));
    const __m512i ki = _mm512_castpd_si512(kds);
    const __m512d kd = _mm512_sub_pd(kds, _mm512_set1_pd(kShift));
    const __m512d r = _mm512_fmsub_pd(_mm512_set1_pd(kInvLn2N), xd, kd);
    const __m512i t = _mm512_i64gather_epi64(_mm512_and_si512(ki, _mm512_set1_epi64(31)), kTable, 8);
    const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
    const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
    const __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, r2, y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}
#else
inline __m128 common4(__m128 x) {
    const __m256d xd = _mm256_cvtps_pd(x);
    const __m256d kds = _mm256_fmadd_pd(_mm256_set1_pd(kInvLn2N), xd, _mm256_set1_pd(kShift));
    const __m256i ki = _mm256_castpd_si256(kds);
    const __m256d kd = _mm256_sub_pd(kds, _mm256_set1_pd(kShift));
    const __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(kInvLn2N), xd, kd);
    const __m256i t = _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kTable),
                                             _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    const __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
    const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
    const __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}
inline __m256 common8(__m256 x) {
    return _mm256_set_m128(common4(_mm256_extractf128_ps(x, 1)), common4(_mm256_castps256_ps128(x)));
}
#endif

// out[j] = std::exp(x[j]) for j < 8.
inline void exp8(const float* x, float* out) {
    const __m256 v = _mm256_loadu_ps(x);
    _mm256_storeu_ps(out, common8(v));
    if (int special = specialLanes8(v))
        for (int j = 0; j < 8; ++j)
            if (special >> j & 1) out[j] = std::exp(x[j]);
}

// Whether exp8 gives std::exp's bits here: a sweep over the arguments a
// softmax meets (about -104 to 0, every 16411th float), both signs near 0, the
// special-case boundaries and all 32 table entries' neighbourhoods.
inline bool matchesLibm() {
    auto same = [](const float* x) {
        float got[8];
        exp8(x, got);
        for (int j = 0; j < 8; ++j) {
            const float want = std::exp(x[j]);
            if (std::memcmp(&got[j], &want, 4) != 0) return false;
        }
        return true;
    };
    float x[8];
    int n = 0;
    auto add = [&](float v) {
        x[n++] = v;
        if (n == 8) {
            n = 0;
            return same(x);
        }
        return true;
    };
    for (uint32_t bits = 0; bits < 0x42d00000u; bits += 16411) {  // [0, 104] in magnitude
        float v;
        std::memcpy(&v, &bits, 4);
        if (!add(-v) || !add(v * 0.5f)) return false;
    }
    for (int k = -3400; k <= 2800; ++k)  // k / 32 ln 2 and halfway points: every table entry, both roundings of k
        if (!add(float(k * 0.0216608493924982909)) || !add(float((k + 0.5) * 0.0216608493924982909))) return false;
    for (float v : {88.0f, 88.7228317f, 88.73f, -87.9f, -103.2789f, -103.972076f, -103.98f, -150.0f})
        if (!add(v)) return false;
    while (n != 0)
        if (!add(0.0f)) return false;
    return true;
}

} // namespace
} // namespace weir::kernels::expf_libm
