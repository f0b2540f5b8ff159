#pragma once
// Element-wise and row-copy operations on device buffers.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace weir::cuda {

// y[i] += x[i]
void addInPlace(float* y, const float* x, int64_t n, cudaStream_t stream);
// y[r][i] += bias[i] for `rows` rows of `width`.
void addBiasRows(float* y, const float* bias, int64_t rows, int64_t width, cudaStream_t stream);
// y[i] *= s
void scaleInPlace(float* y, float s, int64_t n, cudaStream_t stream);
// y = c * tanh(y / c) (logit soft-capping).
void softcap(float* y, float c, int64_t n, cudaStream_t stream);
// rows[r] = rows[src[r]] for r < count (src: device int32, each >= r, as
// output rows are): through `tmp` (count * width floats), so no row is
// overwritten before it is read.
void gatherRows(float* rows, int64_t width, const int32_t* src, int64_t count, float* tmp, cudaStream_t stream);

} // namespace weir::cuda
