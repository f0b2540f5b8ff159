// Activation quantizers (formulas in quantize.h): the scalar reference code
// here, an AVX2 twin writing the same bytes in quantize_act_avx2.cpp.
#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace weir::kernels {

namespace {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 pushes the
// fraction bits out of the f32 mantissa under the default rounding mode.
// This is what _mm256_round_ps(_MM_FROUND_TO_NEAREST_INT) does in llama.cpp.
inline float roundEven(float v) {
    constexpr float magic = 12582912.0f;  // 1.5 * 2^23
    return (v + magic) - magic;  // not folded: we never build with -ffast-math
}

inline float blockAbsMax(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float ax = std::fabs(x[j]);
        amax = ax > amax ? ax : amax;
    }
    return amax;
}

inline int8_t toInt8(float r) {
    // Saturate like the packing instructions; |r| <= 127 in practice.
    if (r > 127.0f) return 127;
    if (!(r >= -128.0f)) return -128;  // NaN too, as cvtps+packs do (and no UB)
    return int8_t(r);
}

void quantizeQ8_0Scalar(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<blocks::Q8_0*>(dst);
    for (int64_t b = 0; b < n / blocks::QK; ++b, x += blocks::QK) {
        const float amax = blockAbsMax(x, blocks::QK);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[b].d = f32ToF16(d);
        for (int j = 0; j < blocks::QK; ++j) y[b].qs[j] = toInt8(roundEven(x[j] * id));
    }
}

void quantizeQ8_1Scalar(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<blocks::Q8_1*>(dst);
    for (int64_t b = 0; b < n / blocks::QK; ++b, x += blocks::QK) {
        const float amax = blockAbsMax(x, blocks::QK);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < blocks::QK; ++j) {
            y[b].qs[j] = toInt8(roundEven(x[j] * id));
            sum += y[b].qs[j];
        }
        y[b].d = f32ToF16(d);
        y[b].s = f32ToF16(d * float(sum));
    }
}

void quantizeQ8_KScalar(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<blocks::Q8_K*>(dst);
    for (int64_t b = 0; b < n / blocks::QK_K; ++b, x += blocks::QK_K) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < blocks::QK_K; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            y[b] = blocks::Q8_K{};
            continue;
        }
        // The sign flip (d negative when the largest element is positive) is
        // llama.cpp's choice; it keeps the largest element at exactly -127.
        const float iscale = -127.0f / max;
        for (int j = 0; j < blocks::QK_K; ++j) {
            const float r = roundEven(iscale * x[j]);
            y[b].qs[j] = toInt8(r > 127.0f ? 127.0f : r);
        }
        for (int g = 0; g < blocks::QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += y[b].qs[16 * g + j];
            y[b].bsums[g] = int16_t(sum);
        }
        y[b].d = 1.0f / iscale;
    }
}

} // namespace

namespace detail {

size_t actScalesOffset(int64_t nBlocks, size_t blockBytes) { return (size_t(nBlocks) * blockBytes + 31) & ~size_t(31); }

size_t actRowBytes(GgmlType actType, int64_t n) {
    const int64_t nb = n / blocks::QK;
    if (actType == GgmlType::Q8_0) return actScalesOffset(nb, kQ8_0BlockBytes) + size_t(nb) * 4;
    if (actType == GgmlType::Q8_1) return actScalesOffset(nb, kQ8_1BlockBytes) + size_t(nb) * 8;
    return rowBytes(actType, n);
}

size_t pairCorrectionsOffset(int64_t k) { return (actRowBytes(GgmlType::Q8_0, k) + 31) & ~size_t(31); }
size_t pairCorrectionsBytes(int64_t k) { return size_t(k / blocks::QK) * 32; }

void convertActQ8_0(const float* x, void* dst, int64_t n) {
    quantizeRowQ8_0(x, dst, n);
    const int64_t nb = n / blocks::QK;
    const auto* b = static_cast<const blocks::Q8_0*>(dst);
    auto* d = reinterpret_cast<float*>(static_cast<uint8_t*>(dst) + actScalesOffset(nb, kQ8_0BlockBytes));
    for (int64_t i = 0; i < nb; ++i) d[i] = f16ToF32(b[i].d);
}

void convertActQ8_1(const float* x, void* dst, int64_t n) {
    quantizeRowQ8_1(x, dst, n);
    const int64_t nb = n / blocks::QK;
    const auto* b = static_cast<const blocks::Q8_1*>(dst);
    auto* d = reinterpret_cast<float*>(static_cast<uint8_t*>(dst) + actScalesOffset(nb, kQ8_1BlockBytes));
    for (int64_t i = 0; i < nb; ++i) {
        d[i] = f16ToF32(b[i].d);
        d[nb + i] = f16ToF32(b[i].s);
    }
}

} // namespace detail

void quantizeRowQ8_0(const float* x, void* dst, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return detail::quantizeQ8_0Avx2(x, dst, n);
    quantizeQ8_0Scalar(x, dst, n);
}

void quantizeRowQ8_1(const float* x, void* dst, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return detail::quantizeQ8_1Avx2(x, dst, n);
    quantizeQ8_1Scalar(x, dst, n);
}

void quantizeRowQ8_K(const float* x, void* dst, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return detail::quantizeQ8_KAvx2(x, dst, n);
    quantizeQ8_KScalar(x, dst, n);
}

} // namespace weir::kernels
