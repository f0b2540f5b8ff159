#pragma once
// AVX2 building blocks. Include ONLY from *_avx2.cpp files (compiled with
// -mavx2 -mfma -mf16c); everything is static so no AVX2 code can leak into
// a baseline caller through the linker.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace weir::kernels::avx2 {

static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float f16(uint16_t h) { return _cvtsh_ss(h); }

// Decode steps stream each weight once, and the hardware prefetcher alone kept
// too few cache lines in flight for that: a 1-thread decode step stalled on
// the weight loads, far below the machine's bandwidth. A kernel that reads
// `bytes` of weights at `at` asks here, in its loop, for the same amount this
// far ahead, which keeps the memory busy (the distance was chosen by
// measurement: tests/bench/RESULTS.md). Prefetches never fault, so reading
// past the matrix end is harmless.
constexpr size_t kWeightPrefetchAhead = 4096;

template <size_t kBytes>
static inline void prefetchWeights(const void* at) {
    const char* p = static_cast<const char*>(at) + kWeightPrefetchAhead;
    #pragma GCC unroll 8
    for (size_t off = 0; off < kBytes; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

static inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Sum of adjacent int16 pairs widened to int32.
static inline __m256i pairSum16(__m256i v) { return _mm256_madd_epi16(v, _mm256_set1_epi16(1)); }

// 8 int32 partial sums of a[i] * b[i], a unsigned (0..255), b signed.
static inline __m256i dotU8I8(__m256i a, __m256i b) { return pairSum16(_mm256_maddubs_epi16(a, b)); }

// 8 int32 partial sums of a[i] * b[i], both signed; absA = |a|. Moves a's
// sign onto b so the unsigned x signed instruction applies; b must not hold
// -128 (activations stay within +-127), a may.
static inline __m256i dotI8I8(__m256i absA, __m256i a, __m256i b) {
    return dotU8I8(absA, _mm256_sign_epi8(b, a));
}

// 16 bytes of packed nibbles -> 32 bytes: low nibbles first, then high nibbles.
static inline __m256i nibbles32(const uint8_t* qs) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

// 32 bits -> 32 bytes, 0xff where bit j of `bits` is set.
static inline __m256i bitsToBytes(uint32_t bits) {
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(int(bits)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,   // byte j takes source byte j / 8
                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i mask = _mm256_set1_epi64x(0x8040201008040201LL);        // and tests bit j % 8
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

} // namespace weir::kernels::avx2
