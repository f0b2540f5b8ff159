#include "engine/models/synthetic_weights.h"

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cpu/ggml_types.h"
#include "weir/base/error.h"

namespace weir {

namespace {

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Random bytes for one row: splitmix64 from a state that depends only on
// (seed, row), eight bytes per step.
void randomBytes(uint64_t seed, uint64_t row, uint8_t* out, uint64_t n) {
    uint64_t s = mix(seed * 0x9e3779b97f4a7c15ull + row + 1);
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint64_t v = mix(s += 0x9e3779b97f4a7c15ull);
        std::memcpy(out + i, &v, 8);
    }
    if (i < n) {
        const uint64_t v = mix(s += 0x9e3779b97f4a7c15ull);
        std::memcpy(out + i, &v, size_t(n - i));
    }
}

void putF16(uint8_t* at, float v) {
    const uint16_t h = kernels::f32ToF16(v);
    std::memcpy(at, &h, 2);
}

// Standard deviation of a block's values in units of its scale d, for the
// quant fields as fixRow leaves them (uniform random quants; sub-block
// scales masked small so d stays a normal f16 even for wide rows):
//   Q8_0: int8 in [-128, 127]                      sqrt(5461.5)  = 73.9
//   Q4_0: q - 8, q in [0, 15]                      sqrt(21.5)    = 4.64
//   Q4_1: q + m/d with m = -7.5 d (centred)        sqrt(21.25)   = 4.61
//   Q5_0: q - 16, q in [0, 31]                     sqrt(85.5)    = 9.25
//   Q4_K: sc*q - (dmin/d)*m, sc, m in [0, 15], dmin = 7.5 d        63.5
//   Q5_K: the same with q in [0, 31], dmin = 15.5 d                 129.7
//   Q6_K: sc*(q - 32), q in [0, 63], sc in [1, 8]                   93.3
double valueSpread(GgmlType t) {
    switch (t) {
    case GgmlType::Q8_0: return 73.9;
    case GgmlType::Q4_0: return 4.64;
    case GgmlType::Q4_1: return 4.61;
    case GgmlType::Q5_0: return 9.25;
    case GgmlType::Q4_K: return 63.5;
    case GgmlType::Q5_K: return 129.7;
    case GgmlType::Q6_K: return 93.3;
    default: return 1.0;
    }
}

// Overwrites the scale fields of every block in a row of random bytes.
void fixRow(GgmlType t, double scale, uint8_t* row, uint64_t rowBytes) {
    const TypeTraits* traits = typeTraits(t);
    const uint64_t bb = uint64_t(traits->blockBytes);
    const float d = float(scale / valueSpread(t));
    // The symmetric types' quants average -0.5 (e.g. q - 8 for q in [0, 15]):
    // alternating the sign of d between blocks centres their values.
    uint8_t dh[2], dhNeg[2], mh[2] = {0, 0};
    putF16(dh, d);
    putF16(dhNeg, -d);
    switch (t) {
    case GgmlType::Q4_1: putF16(mh, -7.5f * d); break;
    case GgmlType::Q4_K: putF16(mh, 7.5f * d); break;
    case GgmlType::Q5_K: putF16(mh, 15.5f * d); break;
    default: break;
    }
    bool odd = false;
    for (uint8_t* b = row; b < row + rowBytes; b += bb, odd = !odd) {
        switch (t) {
        case GgmlType::Q8_0:
        case GgmlType::Q4_0:
        case GgmlType::Q5_0: std::memcpy(b, odd ? dhNeg : dh, 2); break;
        case GgmlType::Q4_1: std::memcpy(b, dh, 2); std::memcpy(b + 2, mh, 2); break;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
            // d, dmin, then 12 bytes of packed 6-bit scales and mins: clearing
            // the top bits of the first 8 (and their upper nibble) keeps all
            // 16 values in [0, 15].
            std::memcpy(b, dh, 2);
            std::memcpy(b + 2, mh, 2);
            for (int j = 4; j < 12; ++j) b[j] &= 0x0f;
            break;
        case GgmlType::Q6_K:  // ql[128], qh[64], int8 scales[16], d
            for (int j = 192; j < 208; ++j) b[j] = uint8_t(1 + (b[j] & 7));
            std::memcpy(b + 208, odd ? dhNeg : dh, 2);
            break;
        default: break;
        }
    }
}

} // namespace

bool tameFillSupports(GgmlType t) {
    switch (t) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0:
    case GgmlType::Q8_0: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K: return true;
    default: return false;
    }
}

void fillTameRows(GgmlType type, double scale, uint64_t seed, uint64_t rowBytes, uint64_t offset, uint8_t* out,
                  uint64_t size) {
    if (!tameFillSupports(type)) {
        const TypeTraits* t = typeTraits(type);
        throw Error(std::string("synthetic weights: no tame filler for type ") + (t ? t->name : "?"));
    }
    if (rowBytes == 0 || offset % rowBytes || size % rowBytes)
        throw Error("synthetic weights: the range to fill is not whole rows");
    if (type == GgmlType::F32) {
        const float v = float(scale);
        for (uint64_t i = 0; i + 4 <= size; i += 4) std::memcpy(out + i, &v, 4);
        return;
    }
    for (uint64_t r = 0; r < size / rowBytes; ++r) {
        uint8_t* row = out + r * rowBytes;
        const uint64_t rowIndex = offset / rowBytes + r;
        if (type == GgmlType::F16) {
            // Uniform in +-sqrt(3) scale: standard deviation `scale`.
            for (uint64_t i = 0; i < rowBytes; i += 2) {
                const uint64_t v = mix(seed * 0x9e3779b97f4a7c15ull + rowIndex * 0x100000001b3ull + i);
                const double u = double(v >> 11) * (1.0 / 9007199254740992.0);
                putF16(row + i, float((2.0 * u - 1.0) * std::sqrt(3.0) * scale));
            }
            continue;
        }
        randomBytes(seed, rowIndex, row, rowBytes);
        fixRow(type, scale, row, rowBytes);
    }
}

} // namespace weir
