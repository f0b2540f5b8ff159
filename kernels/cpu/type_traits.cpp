// The half-precision conversions.
#include <cstring>

#include "kernels/cpu/ggml_types.h"

namespace weir::kernels {

float f16ToF32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            exp = 127 - 15 + 1;
            while (!(mant & 0x400)) { mant <<= 1; --exp; }
            mant &= 0x3ff;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32ToF16(float f) {
    // Round to nearest even, with overflow to inf and subnormals handled.
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t absx = x & 0x7fffffff;
    if (absx > 0x7f800000) return uint16_t(sign | 0x7e00 | ((absx >> 13) & 0x3ff));  // quiet NaN, payload kept as F16C does
    if (absx == 0x7f800000) return uint16_t(sign | 0x7c00);
    if (absx >= 0x477ff000) return uint16_t(sign | 0x7c00);  // rounds past the largest half
    if (absx < 0x38800000) {  // below the smallest normal half: subnormal or zero
        if (absx < 0x33000000) return uint16_t(sign);
        const uint32_t e = absx >> 23;
        const uint32_t m = (absx & 0x7fffff) | 0x800000;
        const uint32_t shift = 126 - e;  // 14 - (e - 127) + 10 - 23 + ... = bits to drop
        uint32_t half = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) ++half;
        return uint16_t(sign | half);
    }
    uint32_t h = ((absx >> 13) - ((127 - 15) << 10));
    const uint32_t rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
    return uint16_t(sign | h);
}

float bf16ToF32(uint16_t h) {
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32ToBf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // keep NaN a NaN
    x += 0x7fff + ((x >> 16) & 1);  // round to nearest even
    return uint16_t(x >> 16);
}

} // namespace weir::kernels
