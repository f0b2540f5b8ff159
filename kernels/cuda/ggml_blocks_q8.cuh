#pragma once
// GGUF weight blocks as packed small integers for dot products with int8
// activations (__dp4a): chunk i8 of a row (elements [8 i8, 8 i8 + 8), as in
// ggml_blocks.cuh) gives two words of four byte-sized values q_j and two
// factors with w_j = d * q_j + m. Its dot product with activations x_j =
// dx * a_j (int8 a_j) is then dx * (d * sum q_j a_j + m * sum a_j).
#include <cstdint>

#include "kernels/cuda/ggml_blocks.cuh"

namespace weir::cuda {

struct Q8Chunk {
    int q[2];   // bytes j of q[0] / q[1]: values of elements 0-3 / 4-7
    float d, m;
};

// Bits 0-3 of b moved to bit 4 of bytes 0-3 (the fifth bit of Q5 values).
WEIR_HD int fifthBits(uint32_t b) { return int(((b & 0xFu) * 0x00204081u & 0x01010101u) << 4); }

template <GgmlType T>
struct Q8Dot;  // load(row, i8) -> Q8Chunk; kOffset: whether m can be non-zero

template <>
struct Q8Dot<GgmlType::Q4_0> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 2) * 18;
        const int part = i8 & 3, shift = (part >> 1) * 4;
        const float d = halfBits(loadU16(b));
        const uint8_t* qs = b + 2 + (part & 1) * 8;
        Q8Chunk c;
        c.q[0] = int((loadU32Align2(qs) >> shift) & 0x0F0F0F0Fu);
        c.q[1] = int((loadU32Align2(qs + 4) >> shift) & 0x0F0F0F0Fu);
        c.d = d;
        c.m = -8.0f * d;
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q4_1> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 2) * 20;
        const int part = i8 & 3, shift = (part >> 1) * 4;
        const uint32_t dm = loadU32(b);
        const uint8_t* qs = b + 4 + (part & 1) * 8;
        Q8Chunk c;
        c.q[0] = int((loadU32(qs) >> shift) & 0x0F0F0F0Fu);
        c.q[1] = int((loadU32(qs + 4) >> shift) & 0x0F0F0F0Fu);
        c.d = halfBits(uint16_t(dm));
        c.m = halfBits(uint16_t(dm >> 16));
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q5_0> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 2) * 22;
        const int part = i8 & 3, shift = (part >> 1) * 4;
        const float d = halfBits(loadU16(b));
        const uint32_t qh = loadU32Align2(b + 2) >> (8 * part);
        const uint8_t* qs = b + 6 + (part & 1) * 8;
        Q8Chunk c;
        c.q[0] = int((loadU32Align2(qs) >> shift) & 0x0F0F0F0Fu) | fifthBits(qh);
        c.q[1] = int((loadU32Align2(qs + 4) >> shift) & 0x0F0F0F0Fu) | fifthBits(qh >> 4);
        c.d = d;
        c.m = -16.0f * d;
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q5_1> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 2) * 24;
        const int part = i8 & 3, shift = (part >> 1) * 4;
        const uint32_t dm = loadU32(b);
        const uint32_t qh = loadU32(b + 4) >> (8 * part);
        const uint8_t* qs = b + 8 + (part & 1) * 8;
        Q8Chunk c;
        c.q[0] = int((loadU32(qs) >> shift) & 0x0F0F0F0Fu) | fifthBits(qh);
        c.q[1] = int((loadU32(qs + 4) >> shift) & 0x0F0F0F0Fu) | fifthBits(qh >> 4);
        c.d = halfBits(uint16_t(dm));
        c.m = halfBits(uint16_t(dm >> 16));
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q8_0> {
    static constexpr bool kOffset = false;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 2) * 34;
        const uint8_t* qs = b + 2 + (i8 & 3) * 8;
        Q8Chunk c;
        c.q[0] = int(loadU32Align2(qs));  // signed bytes as they are
        c.q[1] = int(loadU32Align2(qs + 4));
        c.d = halfBits(loadU16(b));
        c.m = 0.0f;
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q4_K> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 5) * 144;
        const int l = i8 & 31, shift = ((l >> 2) & 1) * 4;
        const uint32_t dm = loadU32(b);
        float sc, m;
        kScaleMin(b + 4, l >> 2, sc, m);
        const uint2 q = *reinterpret_cast<const uint2*>(b + 16 + 32 * (l >> 3) + 8 * (l & 3));
        Q8Chunk c;
        c.q[0] = int((q.x >> shift) & 0x0F0F0F0Fu);
        c.q[1] = int((q.y >> shift) & 0x0F0F0F0Fu);
        c.d = halfBits(uint16_t(dm)) * sc;
        c.m = -halfBits(uint16_t(dm >> 16)) * m;
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q5_K> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 5) * 176;
        const int l = i8 & 31, s = l >> 2, shift = (s & 1) * 4;
        const uint32_t dm = loadU32(b);
        float sc, m;
        kScaleMin(b + 4, s, sc, m);
        const uint2 h = *reinterpret_cast<const uint2*>(b + 16 + 8 * (l & 3));
        const uint2 q = *reinterpret_cast<const uint2*>(b + 48 + 32 * (l >> 3) + 8 * (l & 3));
        Q8Chunk c;
        c.q[0] = int(((q.x >> shift) & 0x0F0F0F0Fu) | (((h.x >> s) & 0x01010101u) << 4));
        c.q[1] = int(((q.y >> shift) & 0x0F0F0F0Fu) | (((h.y >> s) & 0x01010101u) << 4));
        c.d = halfBits(uint16_t(dm)) * sc;
        c.m = -halfBits(uint16_t(dm >> 16)) * m;
        return c;
    }
};

template <>
struct Q8Dot<GgmlType::Q6_K> {
    static constexpr bool kOffset = true;
    WEIR_HD static Q8Chunk load(const uint8_t* row, int i8) {
        const uint8_t* b = row + (i8 >> 5) * 210;
        const int l = i8 & 31;
        const int half = l >> 4, quarter = (l & 15) >> 2, li = 8 * (l & 3);
        const uint8_t* ql = b + 64 * half + 32 * (quarter & 1) + li;
        const uint8_t* qh = b + 128 + 32 * half + li;
        const int lowShift = (quarter >> 1) * 4, highShift = 2 * quarter;
        Q8Chunk c;
        c.q[0] = int(((loadU32Align2(ql) >> lowShift) & 0x0F0F0F0Fu) | (((loadU32Align2(qh) >> highShift) & 0x03030303u) << 4));
        c.q[1] = int(((loadU32Align2(ql + 4) >> lowShift) & 0x0F0F0F0Fu) |
                     (((loadU32Align2(qh + 4) >> highShift) & 0x03030303u) << 4));
        c.d = halfBits(loadU16(b + 208)) * float(int8_t(b[192 + (l >> 1)]));
        c.m = -32.0f * c.d;
        return c;
    }
};

// Calls fn.template operator()<T>() for the types with a Q8Dot (false for others).
template <class Fn>
bool dispatchQ8Type(GgmlType t, Fn&& fn) {
    switch (t) {
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
