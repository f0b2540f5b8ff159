// Plain float rows: F32, F16 (IEEE half) and BF16 (the top 16 bits of an f32).
// As in llama.cpp, F16 weights multiply F16-rounded activations and BF16
// weights BF16-rounded ones; products and sums are f32.
#include <bit>
#include <cstring>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"

namespace weir::kernels::detail {

void dequantizeF32(const void* src, float* dst, int64_t n) { std::memcpy(dst, src, size_t(n) * 4); }

namespace {

// All 65536 halves as f32 (256 KiB, built on first use): the portable path's
// f16 conversion, far cheaper per element than decoding the bits each time.
const float* halfTable() {
    static const float* table = [] {
        static float t[65536];
        for (uint32_t h = 0; h < 65536; ++h) t[h] = f16ToF32(uint16_t(h));
        return t;
    }();
    return table;
}

} // namespace

void dequantizeF16(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    const float* t = halfTable();
    for (int64_t i = 0; i < n; ++i) dst[i] = t[h[i]];
}

void dequantizeBF16(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToF32(h[i]);
}

void convertRowF32(const float* x, void* dst, int64_t n) { std::memcpy(dst, x, size_t(n) * 4); }

void convertRowF16(const float* x, void* dst, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return convertRowF16Avx2(x, dst, n);
    auto* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = f32ToF16(x[i]);
}

void convertRowBF16(const float* x, void* dst, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return convertRowBF16Avx2(x, dst, n);
    auto* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = f32ToBf16(x[i]);
}

namespace {

// Eight partial sums, like an 8-lane SIMD accumulator, to keep rounding close
// to the vector kernels and the dependency chains short. toF32(row, i) reads
// element i of a row as f32.
template <class Elem, class ToF32>
void dotFloat(const void* w, const void* act, size_t actStride, int nx, int64_t k, float* out,
              size_t outStride, ToF32 toF32) {
    const auto* wr = static_cast<const Elem*>(w);
    for (int r = 0; r < nx; ++r) {
        const auto* xr = reinterpret_cast<const Elem*>(static_cast<const uint8_t*>(act) + r * actStride);
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= k; i += 8)
            for (int l = 0; l < 8; ++l) acc[l] += toF32(wr, i + l) * toF32(xr, i + l);
        float tail = 0.0f;
        for (; i < k; ++i) tail += toF32(wr, i) * toF32(xr, i);
        out[r * outStride] = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
    }
}

} // namespace

void dotScalarF32(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotFloat<float>(w, a, as, nx, k, o, os, [](const float* p, int64_t i) { return p[i]; });
}
void dotScalarF16(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    const float* t = halfTable();
    dotFloat<uint16_t>(w, a, as, nx, k, o, os, [t](const uint16_t* p, int64_t i) { return t[p[i]]; });
}
void dotScalarBF16(const void* w, const void* a, size_t as, int nx, int64_t k, float* o, size_t os) {
    dotFloat<uint16_t>(w, a, as, nx, k, o, os, [](const uint16_t* p, int64_t i) {
        return std::bit_cast<float>(uint32_t(p[i]) << 16);  // bf16ToF32, inlined
    });
}

} // namespace weir::kernels::detail
