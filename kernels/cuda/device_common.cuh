#pragma once
// Small device helpers shared by the CUDA kernels: warp reductions, f16/bf16
// bits to f32, and exact small-integer to float conversion.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace weir::cuda {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

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

__device__ __forceinline__ float halfBits(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ float bf16Bits(uint32_t h) { return __uint_as_float(h << 16); }

// An unsigned integer below 2^23 as float, exactly: or-ing it into the
// mantissa of 2^23 and subtracting 2^23 costs two instructions where I2F is
// a slower conversion.
__device__ __forceinline__ float smallToFloat(uint32_t q) { return __int_as_float(int(0x4B000000u | q)) - 8388608.0f; }
// The same with `bias` subtracted (q - bias, exact for small values).
__device__ __forceinline__ float smallToFloatMinus(uint32_t q, float bias) {
    return __int_as_float(int(0x4B000000u | q)) - (8388608.0f + bias);
}

__device__ __forceinline__ uint16_t loadU16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
__device__ __forceinline__ uint32_t loadU32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
// 4 bytes from an address that is only 2-byte aligned.
__device__ __forceinline__ uint32_t loadU32Align2(const uint8_t* p) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
    return uint32_t(h[0]) | (uint32_t(h[1]) << 16);
}

} // namespace weir::cuda
