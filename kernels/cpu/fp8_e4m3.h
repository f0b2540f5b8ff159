#pragma once
// FP8 E4M3 ("e4m3fn" in the OCP 8-bit float spec, the KV-cache format of vLLM
// and SGLang): 1 sign bit, 4 exponent bits with bias 7, 3 mantissa bits; no
// infinities, 0x7F / 0xFF are NaN, the largest finite value is 448. Stored
// without a scale (a scale of 1, the peers' default), so values beyond ±448
// saturate. One byte per element: half of f16.
#include <cstdint>

namespace weir::kernels {

inline constexpr float kE4M3Max = 448.0f;

// Nearest representable value (ties to even); saturates to ±448; NaN -> 0x7F.
uint8_t f32ToE4M3(float x);
float e4m3ToF32(uint8_t v);

void toE4M3Row(const float* x, uint8_t* dst, int64_t n);
void fromE4M3Row(const uint8_t* src, float* dst, int64_t n);
// Dot product of an e4m3 row with an f32 vector (f32 accumulation).
float dotE4M3(const uint8_t* row, const float* x, int64_t n);

} // namespace weir::kernels
