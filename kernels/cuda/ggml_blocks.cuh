#pragma once
// Dequantization of GGUF weight blocks on the device, read in place (the
// layouts of kernels/cpu/quant_blocks.h). Every type gives eight consecutive
// elements at a time: chunk i8 of a row is elements [8 i8, 8 i8 + 8). A warp
// whose lanes take consecutive chunks reads 256 consecutive elements (one
// K-quant super-block, eight legacy blocks) with neighbouring lanes on
// neighbouring bytes.
//
// Alignment the loads rely on (rows as GGUF stores them, device allocations
// 256-byte aligned): F32/F16/BF16 rows of a multiple of 8 elements are
// 16-byte aligned; Q4_K/Q5_K blocks (144/176 bytes) 16-byte aligned; Q4_1
// blocks (20) 4-byte, Q5_1 (24) 8-byte; Q4_0/Q5_0/Q8_0/Q6_K only 2-byte.
#include <cstdint>

#include "kernels/cuda/device_common.cuh"
#include "weir/base/ggml_type.h"

namespace weir::cuda {

template <GgmlType T>
struct Blocks;

// Element j of the chunk is byte j of (lo, hi) shifted right by `shift`, a nibble.
WEIR_HD uint32_t nibble(uint32_t lo, uint32_t hi, int j, int shift) {
    const uint32_t word = j < 4 ? lo : hi;
    return (word >> (8 * (j & 3) + shift)) & 0xFu;
}

template <>
struct Blocks<GgmlType::F32> {
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const float4* p = reinterpret_cast<const float4*>(row) + 2 * i8;
        const float4 a = p[0], b = p[1];
        w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
    }
};

template <>
struct Blocks<GgmlType::F16> {
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint4 u = reinterpret_cast<const uint4*>(row)[i8];
        const uint32_t v[4] = {u.x, u.y, u.z, u.w};
WEIR_UNROLL
        for (int j = 0; j < 4; ++j) {
            w[2 * j] = halfBits(uint16_t(v[j]));
            w[2 * j + 1] = halfBits(uint16_t(v[j] >> 16));
        }
    }
};

template <>
struct Blocks<GgmlType::BF16> {
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint4 u = reinterpret_cast<const uint4*>(row)[i8];
        const uint32_t v[4] = {u.x, u.y, u.z, u.w};
WEIR_UNROLL
        for (int j = 0; j < 4; ++j) {
            w[2 * j] = bitsToFloat(v[j] << 16);
            w[2 * j + 1] = bitsToFloat(v[j] & 0xffff0000u);
        }
    }
};

// Legacy 32-element blocks: chunk part p = i8 % 4 of block i8 / 4 holds
// elements 8p..8p+7, the low nibbles of qs[0..8) / qs[8..16) for p = 0 / 1
// and their high nibbles for p = 2 / 3.
template <>
struct Blocks<GgmlType::Q4_0> {  // 18 bytes: d, qs[16]; y = (q - 8) d
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 2) * 18;
        const int part = i8 & 3;
        const float d = halfBits(loadU16(b));
        const uint8_t* qs = b + 2 + (part & 1) * 8;
        const uint32_t lo = loadU32Align2(qs), hi = loadU32Align2(qs + 4);
        const int shift = (part >> 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) w[j] = smallToFloatMinus(nibble(lo, hi, j, shift), 8.0f) * d;
    }
};

template <>
struct Blocks<GgmlType::Q4_1> {  // 20 bytes: d, m, qs[16]; y = q d + m
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 2) * 20;
        const int part = i8 & 3;
        const uint32_t dm = loadU32(b);
        const float d = halfBits(uint16_t(dm)), m = halfBits(uint16_t(dm >> 16));
        const uint8_t* qs = b + 4 + (part & 1) * 8;
        const uint32_t lo = loadU32(qs), hi = loadU32(qs + 4);
        const int shift = (part >> 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) w[j] = fmaf(smallToFloat(nibble(lo, hi, j, shift)), d, m);
    }
};

template <>
struct Blocks<GgmlType::Q5_0> {  // 22 bytes: d, qh[4], qs[16]; y = (q - 16) d
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 2) * 22;
        const int part = i8 & 3;
        const float d = halfBits(loadU16(b));
        const uint32_t qh = loadU32Align2(b + 2) >> (8 * part);  // bit j: bit 4 of element 8 part + j
        const uint8_t* qs = b + 6 + (part & 1) * 8;
        const uint32_t lo = loadU32Align2(qs), hi = loadU32Align2(qs + 4);
        const int shift = (part >> 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) {
            const uint32_t q = nibble(lo, hi, j, shift) | (((qh >> j) & 1u) << 4);
            w[j] = smallToFloatMinus(q, 16.0f) * d;
        }
    }
};

template <>
struct Blocks<GgmlType::Q5_1> {  // 24 bytes: d, m, qh[4], qs[16]; y = q d + m
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 2) * 24;
        const int part = i8 & 3;
        const uint32_t dm = loadU32(b);
        const float d = halfBits(uint16_t(dm)), m = halfBits(uint16_t(dm >> 16));
        const uint32_t qh = loadU32(b + 4) >> (8 * part);
        const uint8_t* qs = b + 8 + (part & 1) * 8;
        const uint32_t lo = loadU32(qs), hi = loadU32(qs + 4);
        const int shift = (part >> 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) {
            const uint32_t q = nibble(lo, hi, j, shift) | (((qh >> j) & 1u) << 4);
            w[j] = fmaf(smallToFloat(q), d, m);
        }
    }
};

template <>
struct Blocks<GgmlType::Q8_0> {  // 34 bytes: d, int8 qs[32]; y = q d
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 2) * 34;
        const float d = halfBits(loadU16(b));
        const uint8_t* qs = b + 2 + (i8 & 3) * 8;
        const uint32_t lo = loadU32Align2(qs) ^ 0x80808080u, hi = loadU32Align2(qs + 4) ^ 0x80808080u;  // q + 128
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) {
            const uint32_t word = j < 4 ? lo : hi;
            w[j] = smallToFloatMinus((word >> (8 * (j & 3))) & 0xFFu, 128.0f) * d;
        }
    }
};

// K-quants: chunk l = i8 % 32 of super-block i8 / 32 holds elements 8l..8l+7.
// Scale and min of sub-block s (32 elements) of a Q4_K/Q5_K block, 6 bits
// each (quant_blocks.h kScaleMin).
WEIR_HD void kScaleMin(const uint8_t* scales, int s, float& sc, float& m) {
    const uint32_t w0 = loadU32(scales), w1 = loadU32(scales + 4), w2 = loadU32(scales + 8);
    const uint32_t sh = 8 * (s & 3);
    uint32_t a, b;
    if (s < 4) {
        a = (w0 >> sh) & 63u;
        b = (w1 >> sh) & 63u;
    } else {
        a = ((w2 >> sh) & 15u) | (((w0 >> sh) >> 6 & 3u) << 4);
        b = ((w2 >> sh) >> 4 & 15u) | (((w1 >> sh) >> 6 & 3u) << 4);
    }
    sc = smallToFloat(a);
    m = smallToFloat(b);
}

template <>
struct Blocks<GgmlType::Q4_K> {  // 144 bytes: d, dmin, scales[12], qs[128]; y = d sc q - dmin m
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 5) * 144;
        const int l = i8 & 31;
        const uint32_t dm = loadU32(b);
        float sc, m;
        kScaleMin(b + 4, l >> 2, sc, m);
        const float d = halfBits(uint16_t(dm)) * sc, dmin = halfBits(uint16_t(dm >> 16)) * m;
        // Element 64c + j: low nibble of qs[32c + j] (j < 32) or high nibble of qs[32c + j - 32].
        const uint2 q = *reinterpret_cast<const uint2*>(b + 16 + 32 * (l >> 3) + 8 * (l & 3));
        const int shift = ((l >> 2) & 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) w[j] = fmaf(smallToFloat(nibble(q.x, q.y, j, shift)), d, -dmin);
    }
};

template <>
struct Blocks<GgmlType::Q5_K> {  // 176 bytes: d, dmin, scales[12], qh[32], qs[128]
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 5) * 176;
        const int l = i8 & 31;
        const uint32_t dm = loadU32(b);
        const int s = l >> 2;
        float sc, m;
        kScaleMin(b + 4, s, sc, m);
        const float d = halfBits(uint16_t(dm)) * sc, dmin = halfBits(uint16_t(dm >> 16)) * m;
        // Bit s (= e / 32) of qh[e % 32] is bit 4 of element e.
        const uint2 h = *reinterpret_cast<const uint2*>(b + 16 + 8 * (l & 3));
        const uint2 q = *reinterpret_cast<const uint2*>(b + 48 + 32 * (l >> 3) + 8 * (l & 3));
        const int shift = ((l >> 2) & 1) * 4;
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) {
            const uint32_t hb = (((j < 4 ? h.x : h.y) >> (8 * (j & 3) + s)) & 1u) << 4;
            w[j] = fmaf(smallToFloat(nibble(q.x, q.y, j, shift) | hb), d, -dmin);
        }
    }
};

template <>
struct Blocks<GgmlType::Q6_K> {  // 210 bytes: ql[128], qh[64], int8 scales[16], d; y = d sc (q - 32)
    WEIR_HD static void load8(const uint8_t* row, int i8, float w[8]) {
        const uint8_t* b = row + (i8 >> 5) * 210;
        const int l = i8 & 31;
        const int half = l >> 4, quarter = (l & 15) >> 2, li = 8 * (l & 3);
        // Quarter k of half h: low (k = 0, 1) or high (k = 2, 3) nibbles of
        // ql[64h + 32 (k & 1) + i], bits 2k, 2k+1 of qh[32h + i].
        const uint8_t* ql = b + 64 * half + 32 * (quarter & 1) + li;
        const uint8_t* qh = b + 128 + 32 * half + li;
        const uint32_t l0 = loadU32Align2(ql), l1 = loadU32Align2(ql + 4);
        const uint32_t h0 = loadU32Align2(qh), h1 = loadU32Align2(qh + 4);
        const int lowShift = (quarter >> 1) * 4, highShift = 2 * quarter;
        const float d = halfBits(loadU16(b + 208)) * float(int8_t(b[192 + (l >> 1)]));
WEIR_UNROLL
        for (int j = 0; j < 8; ++j) {
            const uint32_t hw = j < 4 ? h0 : h1;
            const uint32_t q = nibble(l0, l1, j, lowShift) | (((hw >> (8 * (j & 3) + highShift)) & 3u) << 4);
            w[j] = smallToFloatMinus(q, 32.0f) * d;
        }
    }
};

// Calls fn.template operator()<T>() for a weight type the kernels read
// (returns false for others). Keeps each launcher's type switch in one place.
template <class Fn>
bool dispatchWeightType(GgmlType t, Fn&& fn) {
    switch (t) {
    case GgmlType::F32: fn.template operator()<GgmlType::F32>(); return true;
    case GgmlType::F16: fn.template operator()<GgmlType::F16>(); return true;
    case GgmlType::BF16: fn.template operator()<GgmlType::BF16>(); return true;
    case GgmlType::Q4_0: fn.template operator()<GgmlType::Q4_0>(); return true;
    case GgmlType::Q4_1: fn.template operator()<GgmlType::Q4_1>(); return true;
    case GgmlType::Q5_0: fn.template operator()<GgmlType::Q5_0>(); return true;
    case GgmlType::Q5_1: fn.template operator()<GgmlType::Q5_1>(); return true;
    case GgmlType::Q8_0: fn.template operator()<GgmlType::Q8_0>(); return true;
    case GgmlType::Q4_K: fn.template operator()<GgmlType::Q4_K>(); return true;
    case GgmlType::Q5_K: fn.template operator()<GgmlType::Q5_K>(); return true;
    case GgmlType::Q6_K: fn.template operator()<GgmlType::Q6_K>(); return true;
    default: return false;
    }
}

} // namespace weir::cuda
