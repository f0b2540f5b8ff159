#pragma once
// Gated activations of a feed-forward block on the device: y = act(gate) * up.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace weir::cuda {

// GELU (tanh approximation) as the CPU's table computes it: of the f16
// rounding of gate, rounded to f16 (|gate| >= 10: 0 or gate exactly).
void gegluTanh(const float* gate, const float* up, float* y, int64_t n, cudaStream_t stream);
// SiLU: gate / (1 + e^-gate).
void swiglu(const float* gate, const float* up, float* y, int64_t n, cudaStream_t stream);

} // namespace weir::cuda
