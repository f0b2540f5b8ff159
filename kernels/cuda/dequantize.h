#pragma once
// Weight rows to f32 or f16 on the device: embedding lookups, and the f16
// copies of weights the cuBLAS GEMM multiplies.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::cuda {

// x[i] = row ids[i] of `table` (cols elements of `type`, rowStride bytes
// apart), times `scale` unless it is 0. ids: n device int32; x: n rows of cols f32.
void embedRows(GgmlType type, const void* table, size_t rowStride, int64_t cols, const int32_t* ids, int64_t n,
               float scale, float* x, cudaStream_t stream);

// Rows [row0, row0 + rows) of w as f16 bits (cols per row, packed): dst[r][k].
void dequantizeRowsF16(GgmlType type, const void* w, size_t rowStride, int64_t cols, int64_t row0, int64_t rows,
                       uint16_t* dst, cudaStream_t stream);

// n f32 values to f16 (round to nearest even) or bf16 bits.
void toF16(const float* x, int64_t n, uint16_t* dst, cudaStream_t stream);
void toBf16(const float* x, int64_t n, uint16_t* dst, cudaStream_t stream);

} // namespace weir::cuda
