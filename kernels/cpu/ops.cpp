// Transformer row operations; see ops.h. Scalar code here, the hot inner
// loops also in ops_avx2.cpp behind a runtime CPU check.
#include "kernels/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/fp8_e4m3.h"
#include "kernels/cpu/ops_simd.h"
#include "kernels/cpu/quantize.h"

namespace weir::kernels {

bool opsHaveAvx2() { return activeKernelPath() == KernelPath::Avx2; }

void rmsNorm(const float* x, const float* w, float* y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);
    const float mean = float(sum / double(n));
    const float s = 1.0f / std::sqrt(mean + eps);
    // Scale first, weight second: two roundings, as two separate ops would do.
    if (w) {
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * s) * w[i];
    } else {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
    }
}

void rmsNormRows(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) {
    rmsNormRowsStrided(x, w, y, rows, n, n, eps);
}

void rmsNormRowsStrided(const float* x, const float* w, float* y, int64_t rows, int64_t n, int64_t stride, float eps) {
    int64_t done = 0;
    if (opsHaveAvx2() && rows > 1) {
        double sums[ops_avx2::kSquareSumRows];
        for (; rows - done >= ops_avx2::kSquareSumRows; done += ops_avx2::kSquareSumRows) {
            const float* xr = x + done * stride;
            float* yr = y + done * stride;
            ops_avx2::squareSums(xr, n, stride, sums);
            for (int r = 0; r < ops_avx2::kSquareSumRows; ++r) {
                // rmsNorm's steps from its sum on.
                const float mean = float(sums[r] / double(n));
                const float s = 1.0f / std::sqrt(mean + eps);
                ops_avx2::scaleRow(xr + r * stride, w, yr + r * stride, n, s);
            }
        }
    }
    for (; done < rows; ++done) rmsNorm(x + done * stride, w, y + done * stride, n, eps);
}

void ropeAngles(const RopeParams& p, int32_t pos, float* cs) {
    // theta_i = pos * base^(-2i/nRot), stepped by repeated multiplication.
    const float step = std::pow(p.base, -2.0f / float(p.nRot));
    float theta = float(pos);
    for (int32_t i = 0; i < p.nRot / 2; ++i) {
        const float ff = p.freqFactors ? p.freqFactors[i] : 1.0f;
        const float t = p.freqScale * (theta / ff);
        cs[2 * i] = std::cos(t);
        cs[2 * i + 1] = std::sin(t);
        theta *= step;
    }
}

void ropeApply(float* x, int64_t nHeads, int64_t headDim, int32_t nRot, bool neox, const float* cs) {
    if (opsHaveAvx2()) {
        ops_avx2::ropeApply(x, nHeads, headDim, nRot, neox, cs);
        return;
    }
    // (a, b) -> (a cos - b sin, a sin + b cos), each as one fused multiply-add
    // over the other product, which is how the reference's compiler evaluates it.
    const int32_t half = nRot / 2;
    const int64_t step = neox ? half : 1;
    for (int64_t h = 0; h < nHeads; ++h) {
        float* v = x + h * headDim;
        for (int32_t i = 0; i < half; ++i) {
            const int64_t i0 = neox ? i : 2 * i, i1 = i0 + step;
            const float c = cs[2 * i], s = cs[2 * i + 1];
            const float a = v[i0], b = v[i1];
            v[i0] = std::fma(a, c, -(b * s));
            v[i1] = std::fma(a, s, b * c);
        }
    }
}

float geluTanh(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoef = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

const uint16_t* geluF16Table() {
    static const uint16_t* table = [] {
        constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
        constexpr float kCoef = 0.044715f;
        static uint16_t t[65536];
        for (uint32_t i = 0; i < 65536; ++i) {
            const float x = f16ToF32(uint16_t(i));
            // 1 + c*x*x as one fused multiply-add: the reference's compiler
            // contracts it, and entries differ in the last bit otherwise.
            const float inner = std::fma(kCoef * x, x, 1.0f);
            t[i] = f32ToF16(0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * inner)));
        }
        return t;
    }();
    return table;
}

void gegluF16Table(const float* gate, const float* up, float* y, int64_t n) {
    const uint16_t* table = geluF16Table();
    if (opsHaveAvx2()) {
        ops_avx2::gegluF16Table(gate, up, y, n, table);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        if (g <= -10.0f) y[i] = 0.0f;
        else if (g >= 10.0f) y[i] = g * up[i];
        else y[i] = f16ToF32(table[f32ToF16(g)]) * up[i];
    }
}

namespace {

float fromBits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
uint32_t toBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

} // namespace

// e^x by range reduction to 2^n * e^b, |b| <= ln2/2, and a degree-5
// polynomial; the steps (and their roundings) are those of llama.cpp's
// vectorised expf, so SwiGLU matches it to the bit.
float expApprox(float x) {
    const float shifter = 0x1.8p23f;
    const float z = std::fma(x, 0x1.715476p+0f, shifter);  // x / ln2 rounded to an integer, in the low bits
    const float n = z - shifter;
    const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));  // x - n ln2 in two parts
    const uint32_t e = toBits(z) << 23;
    const float k = fromBits(e + toBits(1.0f));  // 2^n
    const float u = b * b;
    const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                             0x1.ffffecp-1f * b);  // e^b - 1
    if (!(std::fabs(n) > 126.0f)) return std::fma(j, k, k);
    // 2^n out of float range: split it in two factors (or saturate).
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = fromBits(g + 0x7f000000u), s2 = fromBits(e - g);
    if (std::fabs(n) > 192.0f) return s1 * s1;
    return std::fma(s2, j, s2) * s1;
}

float expApprox512(float x) {
    const float shifter = 0x1.8p23f;
    const float z = std::fma(x, 0x1.715476p+0f, shifter);
    const float n = z - shifter;
    const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
    const float u = b * b;
    const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                             std::fma(0x1.ffffecp-1f, b, 1.0f));  // e^b
    if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : std::numeric_limits<float>::infinity();
    return std::ldexp(j, int(n));  // j * 2^n rounded once, as scalef
}

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
    int64_t i = 0;
    if (avx512VariantsActive()) {
        // Blocks of 16 through the AVX-512 expf, a tail libm's expf.
        const int64_t blocks = n - n % 16;
        i = ops_avx2::swiglu512(gate, up, y, blocks);
        for (; i < n; ++i) {
            const float g = gate[i];
            const float e = i < blocks ? expApprox512(0.0f - g) : std::exp(-g);
            y[i] = g / (1.0f + e) * up[i];
        }
        return;
    }
    if (opsHaveAvx2()) i = ops_avx2::swiglu(gate, up, y, n);  // whole groups of 8
    for (; i < n; ++i) {
        // Blocks of 8 use the approximation (as llama.cpp's AVX2 loop), a tail libm's expf.
        const bool vectorPart = i < n - n % 8;
        const float g = gate[i];
        const float e = vectorPart ? expApprox(0.0f - g) : std::exp(-g);
        y[i] = g / (1.0f + e) * up[i];
    }
}

void softmax(float* x, int64_t n) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = (x[i] == -std::numeric_limits<float>::infinity()) ? 0.0f : std::exp(x[i] - m);
        sum += x[i];
    }
    const float inv = sum > 0.0 ? float(1.0 / sum) : 0.0f;
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

int64_t argmaxF32(const float* x, int64_t n) {
    if (n <= 0) return 0;
    if (opsHaveAvx2()) {
        // Two passes (the largest value, then its first position) read the
        // row twice but both stream at vector speed; one scalar pass compared
        // and branched per element.
        const float best = ops_avx2::maxF32(x, n);
        const int64_t at = ops_avx2::findF32(x, 0, n, best);
        return at < n ? at : 0;  // all NaN (or -inf only when every non-NaN is -inf: found above)
    }
    int64_t best = -1;
    for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(x[i]) && (best < 0 || x[i] > x[best])) best = i;
    return best < 0 ? 0 : best;
}

void addInPlace(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scaleInPlace(float* y, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

namespace {

void toF16Row(const float* x, uint16_t* y, int64_t n) {
    if (opsHaveAvx2() && n % 8 == 0) {
        ops_avx2::toF16(x, y, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = f32ToF16(x[i]);
}

float dotF16(const uint16_t* a, const uint16_t* b, int64_t n) {
    if (avx512VariantsActive()) return ops_avx2::dotF16Lanes16(a, b, n);
    if (opsHaveAvx2() && n % 32 == 0) return ops_avx2::dotF16(a, b, n);
    float acc[32] = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 32; ++j) acc[j] += f16ToF32(a[i + j]) * f16ToF32(b[i + j]);
    double sum = 0.0;
    for (int j = 0; j < 32; ++j) sum += acc[j];
    for (; i < n; ++i) sum += double(f16ToF32(a[i]) * f16ToF32(b[i]));
    return float(sum);
}

float dotF32(const float* a, const float* b, int64_t n) {
    if (avx512VariantsActive()) return ops_avx2::dotF32Lanes16(a, b, n);
    if (opsHaveAvx2() && n % 32 == 0) return ops_avx2::dotF32(a, b, n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(a[i] * b[i]);
    return float(sum);
}

void madF16(uint16_t* y, const uint16_t* x, float v, int64_t n) {
    if (opsHaveAvx2() && n % 32 == 0) {
        ops_avx2::madF16(y, x, v, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = f32ToF16(std::fma(f16ToF32(x[i]), v, f16ToF32(y[i])));
}

void scaleF16(uint16_t* y, float v, int64_t n) {
    if (opsHaveAvx2() && n % 32 == 0) {
        ops_avx2::scaleF16(y, v, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = f32ToF16(f16ToF32(y[i]) * v);
}

void madF32(float* y, const float* x, float v, int64_t n) {
    if (opsHaveAvx2()) {
        ops_avx2::madF32(y, x, v, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = std::fma(x[i], v, y[i]);
}

void rowToF32(GgmlType type, const void* src, float* dst, int64_t n) {
    if (type == GgmlType::F32) {
        std::memcpy(dst, src, size_t(n) * 4);
    } else if (type == GgmlType::F16 && opsHaveAvx2() && n % 8 == 0) {
        ops_avx2::fromF16(static_cast<const uint16_t*>(src), dst, n);
    } else if (type == GgmlType::F16) {
        const auto* h = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i) dst[i] = f16ToF32(h[i]);
    } else if (type == GgmlType::E4M3_KV) {
        fromE4M3Row(static_cast<const uint8_t*>(src), dst, n);
    } else {
        dequantizeRow(type, src, dst, n);
    }
}

} // namespace

bool storeKvRow(GgmlType type, const float* x, void* dst, int64_t n) {
    switch (type) {
    case GgmlType::F32: std::memcpy(dst, x, size_t(n) * 4); return true;
    case GgmlType::F16: toF16Row(x, static_cast<uint16_t*>(dst), n); return true;
    case GgmlType::Q8_0:
        if (n % 32) return false;
        quantizeRowQ8_0(x, dst, n);
        return true;
    case GgmlType::E4M3_KV: toE4M3Row(x, static_cast<uint8_t*>(dst), n); return true;
    default: return false;
    }
}

size_t attendScratchFloats(int64_t dk, int64_t dv) {
    // converted query (up to dk floats), the f16 query widened back to f32
    // (dk), f32 accumulator (dv), converted V row (dv), f16 accumulator (dv/2
    // floats, rounded up).
    return size_t(2 * dk + 2 * dv + (dv + 1) / 2 + 16);
}

void attendHead(const float* q, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                int32_t first, int32_t last, float scale, float* out, float* scratch) {
    float* acc32 = scratch + 2 * dk;  // the slot attendHeadPart leaves free for it
    const AttendPart part = attendHeadPart(q, dk, dv, k, v, first, last, scale, acc32, scratch);
    const float inv = part.sum == 0.0f ? 0.0f : 1.0f / part.sum;
    for (int64_t i = 0; i < dv; ++i) out[i] = acc32[i] * inv;
}

void mergeAttendParts(const AttendPart* parts, const float* accs, int n, int64_t dv, float* out) {
    float m = -std::numeric_limits<float>::infinity();
    for (int i = 0; i < n; ++i) m = std::max(m, parts[i].max);
    std::memset(out, 0, size_t(dv) * sizeof(float));
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (parts[i].sum == 0.0f) continue;  // no positions (or none that counted)
        const float w = std::exp(parts[i].max - m);
        sum += w * parts[i].sum;
        const float* acc = accs + int64_t(i) * dv;
        for (int64_t j = 0; j < dv; ++j) out[j] += w * acc[j];
    }
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    for (int64_t j = 0; j < dv; ++j) out[j] *= inv;
}

AttendPart attendHeadPart(const float* q, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                          int32_t first, int32_t last, float scale, float* acc32, float* scratch) {
    float* qConv = scratch;                 // dk floats of room for the converted query
    float* qWide = scratch + dk;            // dk: the f16 query as f32, for the AVX2 K dot
    // dv floats after qWide: attendHead's accumulator
    float* vRow = qWide + dk + dv;          // dv
    auto* acc16 = reinterpret_cast<uint16_t*>(vRow + dv);
    const bool f16V = v.type == GgmlType::F16;
    const bool avx2 = opsHaveAvx2();  // once per head, not per position
    const bool lanes16 = avx512VariantsActive();
    const bool wideK = avx2 && k.type == GgmlType::F16 && (dk % 32 == 0 || lanes16);
    const bool fastV = avx2 && dv % 32 == 0;

    // The query in K's dot-product type, as llama.cpp converts it.
    const void* qk = q;
    if (k.type == GgmlType::F16) {
        toF16Row(q, reinterpret_cast<uint16_t*>(qConv), dk);
        qk = qConv;
        if (wideK) rowToF32(GgmlType::F16, qConv, qWide, dk);
    } else if (k.type == GgmlType::Q8_0) {
        quantizeRowQ8_0(q, qConv, dk);
        qk = qConv;
    }
    if (f16V) std::memset(acc16, 0, size_t(dv) * 2);
    else std::memset(acc32, 0, size_t(dv) * 4);

    float m = -std::numeric_limits<float>::infinity();
    float sum = 0.0f;
    for (int32_t p = first; p <= last; ++p) {
        const uint8_t* kr = k.row(p);
        float s;
        switch (k.type) {
        case GgmlType::F16:
            if (wideK && lanes16) s = ops_avx2::dotF16F32Lanes16(reinterpret_cast<const uint16_t*>(kr), qWide, dk);
            else if (wideK) s = ops_avx2::dotF16F32(reinterpret_cast<const uint16_t*>(kr), qWide, dk);
            else s = dotF16(reinterpret_cast<const uint16_t*>(kr), static_cast<const uint16_t*>(qk), dk);
            break;
        case GgmlType::Q8_0: s = dotQ8_0(kr, qk, dk); break;
        case GgmlType::E4M3_KV: s = dotE4M3(kr, q, dk); break;
        default: s = dotF32(reinterpret_cast<const float*>(kr), q, dk); break;
        }
        s *= scale;
        // Online softmax: rescale what we have when a new maximum appears.
        float ms = 1.0f, vs = 1.0f;
        if (s > m) {
            const float old = m;
            m = s;
            ms = std::exp(old - m);
            if (f16V && fastV) ops_avx2::scaleF16(acc16, ms, dv);
            else if (f16V) scaleF16(acc16, ms, dv);
            else scaleInPlace(acc32, ms, dv);
        } else {
            vs = std::exp(s - m);
        }
        const uint8_t* vr = v.row(p);
        if (f16V && fastV) {
            ops_avx2::madF16(acc16, reinterpret_cast<const uint16_t*>(vr), vs, dv);
        } else if (f16V) {
            madF16(acc16, reinterpret_cast<const uint16_t*>(vr), vs, dv);
        } else if (v.type == GgmlType::F32) {
            madF32(acc32, reinterpret_cast<const float*>(vr), vs, dv);
        } else {
            rowToF32(v.type, vr, vRow, dv);
            madF32(acc32, vRow, vs, dv);
        }
        sum = std::fma(sum, ms, vs);  // fused, as the reference's compiler evaluates it
    }
    if (f16V) rowToF32(GgmlType::F16, acc16, acc32, dv);
    return {m, sum};
}

} // namespace weir::kernels
