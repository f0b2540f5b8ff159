#pragma once
// Tensor element types as numbered in the GGUF format (ggml type ids), their
// block geometry, and conversion of rows to f32.
#include <cstddef>
#include <cstdint>

namespace weir::kernels {

enum class GgmlType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30,
    // Weir's own, for KV-cache rows only (never a GGUF tensor type): FP8 E4M3
    // (kernels/cpu/fp8_e4m3.h). typeTraits() does not know it.
    E4M3_KV = 0x10000,
};

struct TypeTraits {
    const char* name;     // "Q4_K"
    int64_t blockElems;   // elements per block (1 for plain types)
    int64_t blockBytes;   // bytes per block
    bool supported;       // we can dequantize and multiply it
};

// Traits of a ggml type id, or nullptr for an id we do not know at all.
const TypeTraits* typeTraits(uint32_t type);
inline const TypeTraits* typeTraits(GgmlType t) { return typeTraits(static_cast<uint32_t>(t)); }

// Bytes taken by a row of n elements (n must be a multiple of blockElems).
size_t rowBytes(GgmlType type, int64_t n);

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
