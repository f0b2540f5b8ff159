#include "kernels/cpu/fp8_e4m3.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace weir::kernels {
namespace {

float decode(uint8_t v) {
    const int sign = v >> 7, exp = (v >> 3) & 0xF, man = v & 7;
    if (exp == 0xF && man == 7) return std::nanf("");
    const float mag = exp == 0 ? std::ldexp(float(man) / 8.0f, -6)          // subnormal: 2^-6 * m/8
                               : std::ldexp(1.0f + float(man) / 8.0f, exp - 7);
    return sign ? -mag : mag;
}

const std::array<float, 256>& table() {
    static const std::array<float, 256> t = [] {
        std::array<float, 256> out{};
        for (int i = 0; i < 256; ++i) out[size_t(i)] = decode(uint8_t(i));
        return out;
    }();
    return t;
}

} // namespace

float e4m3ToF32(uint8_t v) { return table()[v]; }

uint8_t f32ToE4M3(float x) {
    if (std::isnan(x)) return 0x7F;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    float a = std::fabs(x);
    if (a >= kE4M3Max) return sign | 0x7E;  // saturate (no infinities in e4m3fn)
    // Spacing of representable values around a: 2^-9 below 2^-6 (subnormals),
    // else 2^(e-3) for a in [2^e, 2^(e+1)). Round a to that grid, ties to even.
    int e = 0;
    std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): a in [2^(e-1), 2^e)
    const int exp2 = std::max(e - 1, -6);
    const float step = std::ldexp(1.0f, exp2 - 3);
    const float q = std::nearbyint(a / step);  // default rounding mode: ties to even
    a = q * step;
    if (a >= kE4M3Max) return sign | 0x7E;
    if (a == 0.0f) return sign;
    // Encode the rounded value exactly (rounding may have carried into the next binade).
    std::frexp(a, &e);
    const int unbiased = e - 1;
    if (unbiased < -6) return sign | uint8_t(std::lround(a / std::ldexp(1.0f, -9)));  // subnormal
    const int man = int(std::lround((a / std::ldexp(1.0f, unbiased) - 1.0f) * 8.0f));
    return sign | uint8_t((unbiased + 7) << 3) | uint8_t(man);
}

void toE4M3Row(const float* x, uint8_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f32ToE4M3(x[i]);
}

void fromE4M3Row(const uint8_t* src, float* dst, int64_t n) {
    const auto& t = table();
    for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

float dotE4M3(const uint8_t* row, const float* x, int64_t n) {
    const auto& t = table();
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s = std::fma(t[row[i]], x[i], s);
    return s;
}

} // namespace weir::kernels
