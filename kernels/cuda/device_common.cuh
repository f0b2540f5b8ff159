#pragma once
// Small device helpers shared by the CUDA kernels: warp reductions, f16/bf16
// bits to f32, and exact small-integer to float conversion.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstring>

namespace weir::cuda {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

#ifdef __CUDACC__  // warp shuffles: device code only
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}
#endif

// The helpers below (and the block decoders built on them) also compile for
// the host, where a plain test checks their bit twiddling against the CPU
// kernels without a GPU (tests/gpu/block_decoders_test.cpp).
#define WEIR_HD __host__ __device__ __forceinline__
// `#pragma unroll` in device code only (host compilers, nvcc's host pass
// included, would warn).
#ifdef __CUDA_ARCH__
#define WEIR_UNROLL _Pragma("unroll")
#else
#define WEIR_UNROLL
#endif

WEIR_HD float bitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, 4);
    return f;
#endif
}

WEIR_HD float halfBits(uint16_t h) {
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h));
#else
    // IEEE binary16 by hand: sign, 5 exponent bits (bias 15), 10 mantissa bits.
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F) return bitsToFloat(sign | 0x7F800000u | (man << 13));
    if (exp != 0) return bitsToFloat(sign | ((exp + 112) << 23) | (man << 13));
    const float sub = float(man) * (1.0f / 16777216.0f);  // man * 2^-24
    return sign ? -sub : sub;
#endif
}
WEIR_HD float bf16Bits(uint32_t h) { return bitsToFloat(h << 16); }

// An unsigned integer below 2^23 as float, exactly: or-ing it into the
// mantissa of 2^23 and subtracting 2^23 costs two instructions where I2F is
// a slower conversion.
WEIR_HD float smallToFloat(uint32_t q) { return bitsToFloat(0x4B000000u | q) - 8388608.0f; }
// The same with `bias` subtracted (q - bias, exact for small values).
WEIR_HD float smallToFloatMinus(uint32_t q, float bias) { return bitsToFloat(0x4B000000u | q) - (8388608.0f + bias); }

WEIR_HD uint16_t loadU16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
WEIR_HD uint32_t loadU32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
// 4 bytes from an address that is only 2-byte aligned.
WEIR_HD uint32_t loadU32Align2(const uint8_t* p) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
    return uint32_t(h[0]) | (uint32_t(h[1]) << 16);
}

} // namespace weir::cuda
