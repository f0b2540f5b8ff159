#pragma once
// Conversion of rows of every ggml type to f32 (the types and their block
// geometry are in weir/base/ggml_type.h, shared with the other backends).
#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir::kernels {

using weir::GgmlType;
using weir::TypeTraits;
using weir::typeTraits;
using weir::rowBytes;

// Converts n elements (a multiple of the block size) starting at src to f32.
void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

// Dot product of one stored row (n elements of `type`) with an f32 vector.
// Reference-quality path used by tests and small ops; matmul() is the fast path.
float dotRowF32(GgmlType type, const void* row, const float* x, int64_t n);

// Half-precision helpers.
float f16ToF32(uint16_t h);
uint16_t f32ToF16(float f);
float bf16ToF32(uint16_t h);
uint16_t f32ToBf16(float f);

} // namespace weir::kernels
