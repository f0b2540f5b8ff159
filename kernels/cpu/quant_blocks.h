#pragma once
// Byte layouts of the ggml quantization blocks (GGUF on-disk format) and the
// activation blocks llama.cpp's CPU backend multiplies them with. Internal to
// kernels/cpu. Everything here has internal linkage (static / constexpr): this
// header is included by both baseline and *_avx2.cpp files, and an ordinary
// inline function could be emitted with AVX2 code and then picked by the
// linker for a baseline caller.
#include <cstdint>
#include <cstring>

namespace weir::kernels::blocks {

constexpr int QK = 32;    // elements per block of the legacy quants
constexpr int QK_K = 256; // elements per super-block of the K-quants

// All multi-byte fields are little-endian; the structs are byte-packed by
// construction (every field is naturally aligned at its offset).

struct Q4_0 {  // y = (q - 8) * d
    uint16_t d;           // f16 scale
    uint8_t qs[QK / 2];   // element j in the low nibble of qs[j], j+16 in the high one
};
struct Q4_1 {  // y = q * d + m
    uint16_t d, m;        // f16 scale and minimum
    uint8_t qs[QK / 2];   // nibbles as Q4_0
};
struct Q5_0 {  // y = (q - 16) * d, q = nibble | bit << 4
    uint16_t d;
    uint8_t qh[4];        // bit j (little-endian u32) is bit 4 of element j
    uint8_t qs[QK / 2];
};
struct Q5_1 {  // y = q * d + m
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[QK / 2];
};
struct Q8_0 {  // y = q * d
    uint16_t d;
    int8_t qs[QK];
};
struct Q8_1 {  // activation block for Q4_1/Q5_1: s = d * sum(qs), rounded to f16
    uint16_t d, s;
    int8_t qs[QK];
};
// Q4_K: 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min packed in
// scales[12]; y = d * sc * q - dmin * m. qs[32c + l] holds element 64c + l in
// its low nibble and 64c + 32 + l in its high nibble.
struct Q4_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qs[QK_K / 2];
};
// Q5_K: Q4_K plus a fifth bit: bit (e / 32) of qh[e % 32] is bit 4 of element e.
struct Q5_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
};
// Q6_K: 16 groups of 16 with signed 8-bit scales; y = d * scales[e / 16] * (q - 32).
// Two halves of 128; in half h, for l < 32:
//   element 128h + l      = low  nibble ql[64h + l]      | bits 0-1 of qh[32h + l] << 4
//   element 128h + 32 + l = low  nibble ql[64h + 32 + l] | bits 2-3
//   element 128h + 64 + l = high nibble ql[64h + l]      | bits 4-5
//   element 128h + 96 + l = high nibble ql[64h + 32 + l] | bits 6-7
struct Q6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
};
// Q8_K: activation block for the K-quants. d is f32 (not f16); bsums[g] is
// the sum of qs[16g .. 16g + 15].
struct Q8_K {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
};

static_assert(sizeof(Q4_0) == 18 && sizeof(Q4_1) == 20 && sizeof(Q5_0) == 22 && sizeof(Q5_1) == 24);
static_assert(sizeof(Q8_0) == 34 && sizeof(Q8_1) == 36);
static_assert(sizeof(Q4_K) == 144 && sizeof(Q5_K) == 176 && sizeof(Q6_K) == 210 && sizeof(Q8_K) == 292);

// Scale and min of sub-block s (0..7) of a Q4_K/Q5_K block: 6 bits each.
// Sub-blocks 0-3 keep theirs in the low 6 bits of bytes s and s+4; sub-blocks
// 4-7 split them into a nibble of byte s+4 and the top 2 bits of bytes s-4 / s.
static inline void kScaleMin(const uint8_t* q, int s, uint8_t& sc, uint8_t& m) {
    if (s < 4) {
        sc = q[s] & 63;
        m = q[s + 4] & 63;
    } else {
        sc = uint8_t((q[s + 4] & 15) | ((q[s - 4] >> 6) << 4));
        m = uint8_t((q[s + 4] >> 4) | ((q[s] >> 6) << 4));
    }
}

static inline uint32_t loadU32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// All eight scales and mins of a Q4_K/Q5_K block at once, four per 32-bit
// word (the same bits as kScaleMin): bytes 0-3 of the scales give sc[0..3]
// and bytes 4-7 m[0..3] in their low 6 bits; bytes 8-11 hold the low nibbles
// of sc[4..7] (low half) and m[4..7] (high half), whose top 2 bits are the
// top 2 bits of bytes 0-3 (sc) and 4-7 (m).
static inline void kScalesMins(const uint8_t* q, uint64_t& sc, uint64_t& m) {
    const uint32_t w0 = loadU32(q), w1 = loadU32(q + 4), w2 = loadU32(q + 8);
    const uint32_t sc03 = w0 & 0x3f3f3f3fu, m03 = w1 & 0x3f3f3f3fu;
    const uint32_t sc47 = (w2 & 0x0f0f0f0fu) | (((w0 >> 6) & 0x03030303u) << 4);
    const uint32_t m47 = ((w2 >> 4) & 0x0f0f0f0fu) | (((w1 >> 6) & 0x03030303u) << 4);
    sc = uint64_t(sc03) | uint64_t(sc47) << 32;
    m = uint64_t(m03) | uint64_t(m47) << 32;
}

} // namespace weir::kernels::blocks
