#pragma once
// RMS normalisation of rows on the device.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace weir::cuda {

// y = x / sqrt(mean(x^2) + eps) * w per row of `width` (w may be null: no
// weight; x and y may alias). The sum of squares is accumulated in f32 (a
// per-thread sum, then a tree over the block), the scaling rounds as the CPU
// kernel does: (x * s) * w. Any width up to 2^24.
void rmsNormRows(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps, cudaStream_t stream);

} // namespace weir::cuda
