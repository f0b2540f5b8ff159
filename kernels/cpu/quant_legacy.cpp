// The 32-element "legacy" quants: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (layouts in
// quant_blocks.h). Each block decodes to 32 small integers q, a scale d and,
// for the _1 types, a minimum m:  y = q * d (+ m).
//
// Scalar matmul kernels use the activation formats llama.cpp pairs them with:
// Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 (which carries s = d * sum(q)) for Q4_1/Q5_1,
// so a block contributes  dw * dx * sum(qw * qx)  (+ m * s).
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

// Bit j of the little-endian u32 qh is bit 4 of element j.
inline void decode5(const uint8_t* qs, uint32_t qh, int offset, int8_t* q) {
    for (int j = 0; j < QK / 2; ++j) {
        const int lo = (qs[j] & 15) | int(((qh >> j) & 1) << 4);
        const int hi = (qs[j] >> 4) | int(((qh >> (j + QK / 2)) & 1) << 4);
        q[j] = int8_t(lo - offset);
        q[j + QK / 2] = int8_t(hi - offset);
    }
}

inline void decode(const Q5_0& b, Decoded& o) {
    decode5(b.qs, loadU32(b.qh), 16, o.q);
    o.d = f16ToF32(b.d);
    o.m = 0.0f;
}

inline void decode(const Q5_1& b, Decoded& o) {
    decode5(b.qs, loadU32(b.qh), 0, o.q);
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
