// The 32-element "legacy" quants: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (layouts in
// quant_blocks.h). Each block decodes to 32 small integers q, a scale d and,
// for the _1 types, a minimum m:  y = q * d (+ m).
//
// Scalar matmul kernels use the activation formats llama.cpp pairs them with:
// Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 (which carries s = d * sum(q)) for Q4_1/Q5_1,
// so a block contributes  dw * dx * sum(qw * qx)  (+ m * s).
#include <array>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"

namespace weir::kernels::detail {

namespace {

using namespace blocks;

struct Decoded {
    int8_t q[QK];
    float d;
    float m;  // 0 for the types without a minimum
};

inline void decode(const Q4_0& b, Decoded& o) {
    for (int j = 0; j < QK / 2; ++j) {
        o.q[j] = int8_t((b.qs[j] & 15) - 8);
        o.q[j + QK / 2] = int8_t((b.qs[j] >> 4) - 8);
    }
    o.d = f16ToF32(b.d);
    o.m = 0.0f;
}

inline void decode(const Q4_1& b, Decoded& o) {
    for (int j = 0; j < QK / 2; ++j) {
        o.q[j] = int8_t(b.qs[j] & 15);
        o.q[j + QK / 2] = int8_t(b.qs[j] >> 4);
    }
    o.d = f16ToF32(b.d);
    o.m = f16ToF32(b.m);
}

// 0x10 in byte i where bit i of the index is set: turns one byte of qh into
// the fifth bits of eight elements at once.
constexpr auto kBitSpread = [] {
    std::array<uint64_t, 256> t{};
    for (int b = 0; b < 256; ++b)
        for (int i = 0; i < 8; ++i)
            if (b >> i & 1) t[size_t(b)] |= uint64_t(0x10) << (8 * i);
    return t;
}();

// Bit j of the little-endian u32 qh is bit 4 of element j; the nibbles are
// laid out as in Q4_0. Eight elements per 64-bit word.
inline void decode5(const uint8_t* qs, const uint8_t* qh, int offset, int8_t* q) {
    constexpr uint64_t low4 = 0x0f0f0f0f0f0f0f0fULL;
    uint8_t u[QK];
    for (int g = 0; g < 2; ++g) {
        uint64_t nib;
        std::memcpy(&nib, qs + 8 * g, 8);
        const uint64_t lo = (nib & low4) | kBitSpread[qh[g]];             // elements 8g .. 8g+7
        const uint64_t hi = ((nib >> 4) & low4) | kBitSpread[qh[g + 2]];  // elements 16+8g ..
        std::memcpy(u + 8 * g, &lo, 8);
        std::memcpy(u + 16 + 8 * g, &hi, 8);
    }
    for (int j = 0; j < QK; ++j) q[j] = int8_t(u[j] - offset);
}

inline void decode(const Q5_0& b, Decoded& o) {
    decode5(b.qs, b.qh, 16, o.q);
    o.d = f16ToF32(b.d);
    o.m = 0.0f;
}

inline void decode(const Q5_1& b, Decoded& o) {
    decode5(b.qs, b.qh, 0, o.q);
    o.d = f16ToF32(b.d);
    o.m = f16ToF32(b.m);
}

inline void decode(const Q8_0& b, Decoded& o) {
    for (int j = 0; j < QK; ++j) o.q[j] = b.qs[j];
    o.d = f16ToF32(b.d);
    o.m = 0.0f;
}

template <class Block, bool kHasMin>
void dequantize(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const Block*>(src);
    Decoded dec;
    for (int64_t i = 0; i < n / QK; ++i, dst += QK) {
        decode(b[i], dec);
        for (int j = 0; j < QK; ++j) {
            if constexpr (kHasMin)
                dst[j] = dec.d * float(dec.q[j]) + dec.m;
            else
                dst[j] = float(dec.q[j]) * dec.d;
        }
    }
}

inline int dot32(const int8_t* a, const int8_t* b) {
    int s = 0;
    for (int j = 0; j < QK; ++j) s += int(a[j]) * int(b[j]);
    return s;
}

// Activation rows (matmul's buffer, see actRowBytes): Q8_1 blocks for the
// types with a minimum, else Q8_0, followed by the block scales as f32.
template <class Block, bool kHasMin>
void dotScalar(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out,
               size_t outStride) {
    using Act = std::conditional_t<kHasMin, blocks::Q8_1, blocks::Q8_0>;
    const auto* wb = static_cast<const Block*>(w);
    const int64_t nb = k / QK;
    const size_t scalesAt = actScalesOffset(nb, sizeof(Act));
    float sum[4] = {0, 0, 0, 0};
    Decoded dec;
    for (int64_t i = 0; i < nb; ++i) {
        decode(wb[i], dec);
        for (int r = 0; r < nx; ++r) {
            const uint8_t* row = static_cast<const uint8_t*>(act) + r * actStride;
            const Act& xb = reinterpret_cast<const Act*>(row)[i];
            const float* xd = reinterpret_cast<const float*>(row + scalesAt);  // d[nb], then s[nb]
            sum[r] += float(dot32(dec.q, xb.qs)) * (dec.d * xd[i]);
            if constexpr (kHasMin) sum[r] += dec.m * xd[nb + i];
        }
    }
    for (int r = 0; r < nx; ++r) out[r * outStride] = sum[r];
}

} // namespace

void dequantizeQ4_0(const void* s, float* d, int64_t n) { dequantize<Q4_0, false>(s, d, n); }
void dequantizeQ4_1(const void* s, float* d, int64_t n) { dequantize<Q4_1, true>(s, d, n); }
void dequantizeQ5_0(const void* s, float* d, int64_t n) { dequantize<Q5_0, false>(s, d, n); }
void dequantizeQ5_1(const void* s, float* d, int64_t n) { dequantize<Q5_1, true>(s, d, n); }
void dequantizeQ8_0(const void* s, float* d, int64_t n) { dequantize<Q8_0, false>(s, d, n); }

float dotQ8_0RowsScalar(const void* a, const void* b, int64_t n) {
    const auto* x = static_cast<const Q8_0*>(a);
    const auto* y = static_cast<const Q8_0*>(b);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK; ++i) sum += float(dot32(x[i].qs, y[i].qs)) * (f16ToF32(x[i].d) * f16ToF32(y[i].d));
    return sum;
}

void dotScalarQ4_0(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScalar<Q4_0, false>(w, a, as, nx, k, o, os);
}
void dotScalarQ4_1(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScalar<Q4_1, true>(w, a, as, nx, k, o, os);
}
void dotScalarQ5_0(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScalar<Q5_0, false>(w, a, as, nx, k, o, os);
}
void dotScalarQ5_1(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScalar<Q5_1, true>(w, a, as, nx, k, o, os);
}
void dotScalarQ8_0(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScalar<Q8_0, false>(w, a, as, nx, k, o, os);
}

} // namespace weir::kernels::detail
