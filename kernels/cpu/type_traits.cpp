// Block geometry of every ggml type id and the half-precision conversions.
#include <cstring>

#include "kernels/cpu/ggml_types.h"

namespace weir::kernels {

const TypeTraits* typeTraits(uint32_t type) {
    // Sizes from the GGUF block layouts (see ggml-common.h for the facts).
    static const TypeTraits f32{"F32", 1, 4, true}, f16{"F16", 1, 2, true}, bf16{"BF16", 1, 2, true},
        q4_0{"Q4_0", 32, 18, true}, q4_1{"Q4_1", 32, 20, true}, q5_0{"Q5_0", 32, 22, true},
        q5_1{"Q5_1", 32, 24, true}, q8_0{"Q8_0", 32, 34, true}, q8_1{"Q8_1", 32, 36, false},
        q2_k{"Q2_K", 256, 84, false}, q3_k{"Q3_K", 256, 110, false}, q4_k{"Q4_K", 256, 144, true},
        q5_k{"Q5_K", 256, 176, true}, q6_k{"Q6_K", 256, 210, true}, q8_k{"Q8_K", 256, 292, false},
        iq4_nl{"IQ4_NL", 32, 18, false}, iq4_xs{"IQ4_XS", 256, 136, false};
    switch (type) {
    case 0: return &f32;
    case 1: return &f16;
    case 2: return &q4_0;
    case 3: return &q4_1;
    case 6: return &q5_0;
    case 7: return &q5_1;
    case 8: return &q8_0;
    case 9: return &q8_1;
    case 10: return &q2_k;
    case 11: return &q3_k;
    case 12: return &q4_k;
    case 13: return &q5_k;
    case 14: return &q6_k;
    case 15: return &q8_k;
    case 20: return &iq4_nl;
    case 23: return &iq4_xs;
    case 30: return &bf16;
    default: return nullptr;
    }
}

size_t rowBytes(GgmlType type, int64_t n) {
    const TypeTraits* t = typeTraits(type);
    if (!t || n % t->blockElems != 0) return 0;
    return size_t(n / t->blockElems) * size_t(t->blockBytes);
}

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
