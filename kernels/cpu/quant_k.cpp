// The K-quants Q4_K, Q5_K, Q6_K: super-blocks of 256 elements with
// per-sub-block integer scales (layouts in quant_blocks.h).
//   Q4_K / Q5_K: 8 sub-blocks of 32, y = (d * sc) * q - (dmin * m), q unsigned.
//   Q6_K:       16 groups of 16,    y = (d * sc) * q, q = 6-bit value - 32.
//
// Scalar matmul kernels take Q8_K activations (f32 d, int8 q, bsums):
//   Q4_K/Q5_K block: dx * dw * sum_s sc[s] * sum(qw * qx) - dx * dmin * sum_s m[s] * bsum[s]
//   Q6_K block:      dx * dw * sum_g sc[g] * sum(qw * qx)
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/quant_blocks.h"

namespace weir::kernels::detail {

namespace {

using namespace blocks;

// A decoded Q4_K/Q5_K super-block.
struct DecodedScaleMin {
    uint8_t q[QK_K];   // 0..15 (Q4_K) or 0..31 (Q5_K)
    uint8_t sc[8], m[8];
    float d, dmin;
};

inline void decodeScales(const uint8_t* scales, DecodedScaleMin& o) {
    for (int s = 0; s < 8; ++s) kScaleMin(scales, s, o.sc[s], o.m[s]);
}

inline void decode(const Q4_K& b, DecodedScaleMin& o) {
    for (int c = 0; c < 4; ++c) {
        for (int l = 0; l < 32; ++l) {
            o.q[64 * c + l] = b.qs[32 * c + l] & 15;
            o.q[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
        }
    }
    decodeScales(b.scales, o);
    o.d = f16ToF32(b.d);
    o.dmin = f16ToF32(b.dmin);
}

inline void decode(const Q5_K& b, DecodedScaleMin& o) {
    for (int c = 0; c < 4; ++c) {
        for (int l = 0; l < 32; ++l) {
            const int e0 = 64 * c + l, e1 = 64 * c + 32 + l;
            o.q[e0] = uint8_t((b.qs[32 * c + l] & 15) | (((b.qh[l] >> (e0 / 32)) & 1) << 4));
            o.q[e1] = uint8_t((b.qs[32 * c + l] >> 4) | (((b.qh[l] >> (e1 / 32)) & 1) << 4));
        }
    }
    decodeScales(b.scales, o);
    o.d = f16ToF32(b.d);
    o.dmin = f16ToF32(b.dmin);
}

struct DecodedQ6 {
    int8_t q[QK_K];  // -32..31
    int8_t sc[16];
    float d;
};

inline void decode(const Q6_K& b, DecodedQ6& o) {
    for (int h = 0; h < 2; ++h) {
        const uint8_t* ql = b.ql + 64 * h;
        const uint8_t* qh = b.qh + 32 * h;
        int8_t* q = o.q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            q[l] = int8_t(((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32);
            q[l + 32] = int8_t(((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
            q[l + 64] = int8_t(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
            q[l + 96] = int8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
    }
    for (int g = 0; g < 16; ++g) o.sc[g] = b.scales[g];
    o.d = f16ToF32(b.d);
}

template <class Block>
void dequantizeScaleMin(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const Block*>(src);
    DecodedScaleMin dec;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        decode(b[i], dec);
        for (int s = 0; s < 8; ++s) {
            const float d = dec.d * float(dec.sc[s]);
            const float m = dec.dmin * float(dec.m[s]);
            for (int l = 0; l < 32; ++l) *dst++ = d * float(dec.q[32 * s + l]) - m;
        }
    }
}

template <class Block>
void dotScaleMin(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out,
                 size_t outStride) {
    const auto* wb = static_cast<const Block*>(w);
    float sum[4] = {0, 0, 0, 0};
    DecodedScaleMin dec;
    for (int64_t i = 0; i < k / QK_K; ++i) {
        decode(wb[i], dec);
        for (int r = 0; r < nx; ++r) {
            const auto& xb = reinterpret_cast<const Q8_K*>(static_cast<const uint8_t*>(act) + r * actStride)[i];
            int sumi = 0, summ = 0;
            for (int s = 0; s < 8; ++s) {
                int dot = 0;
                for (int l = 0; l < 32; ++l) dot += int(dec.q[32 * s + l]) * int(xb.qs[32 * s + l]);
                sumi += int(dec.sc[s]) * dot;
                summ += int(dec.m[s]) * (xb.bsums[2 * s] + xb.bsums[2 * s + 1]);
            }
            sum[r] += xb.d * dec.d * float(sumi) - xb.d * dec.dmin * float(summ);
        }
    }
    for (int r = 0; r < nx; ++r) out[r * outStride] = sum[r];
}

} // namespace

void dequantizeQ4_K(const void* s, float* d, int64_t n) { dequantizeScaleMin<Q4_K>(s, d, n); }
void dequantizeQ5_K(const void* s, float* d, int64_t n) { dequantizeScaleMin<Q5_K>(s, d, n); }

void dequantizeQ6_K(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const Q6_K*>(src);
    DecodedQ6 dec;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        decode(b[i], dec);
        for (int g = 0; g < 16; ++g) {
            const float d = dec.d * float(dec.sc[g]);
            for (int l = 0; l < 16; ++l) *dst++ = d * float(dec.q[16 * g + l]);
        }
    }
}

void dotScalarQ4_K(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScaleMin<Q4_K>(w, a, as, nx, k, o, os);
}
void dotScalarQ5_K(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotScaleMin<Q5_K>(w, a, as, nx, k, o, os);
}

void dotScalarQ6_K(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out,
                   size_t outStride) {
    const auto* wb = static_cast<const Q6_K*>(w);
    float sum[4] = {0, 0, 0, 0};
    DecodedQ6 dec;
    for (int64_t i = 0; i < k / QK_K; ++i) {
        decode(wb[i], dec);
        for (int r = 0; r < nx; ++r) {
            const auto& xb = reinterpret_cast<const Q8_K*>(static_cast<const uint8_t*>(act) + r * actStride)[i];
            int sumi = 0;
            for (int g = 0; g < 16; ++g) {
                int dot = 0;
                for (int l = 0; l < 16; ++l) dot += int(dec.q[16 * g + l]) * int(xb.qs[16 * g + l]);
                sumi += int(dec.sc[g]) * dot;
            }
            sum[r] += xb.d * dec.d * float(sumi);
        }
    }
    for (int r = 0; r < nx; ++r) out[r * outStride] = sum[r];
}

} // namespace weir::kernels::detail
