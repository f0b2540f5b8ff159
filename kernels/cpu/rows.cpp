// Row-level entry points (dequantizeRow, dotRowF32, getRow, dotQ8_0) and the
// table tying each weight type to its pieces.
#include <string>

#include "weir/base/error.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"

namespace weir::kernels {

namespace detail {

const TypeOps* typeOps(GgmlType type) {
    static const TypeOps f32{dequantizeF32, GgmlType::F32, convertRowF32, dotScalarF32};
    static const TypeOps f16{dequantizeF16, GgmlType::F16, convertRowF16, dotScalarF16};
    static const TypeOps bf16{dequantizeBF16, GgmlType::BF16, convertRowBF16, dotScalarBF16};
    static const TypeOps q4_0{dequantizeQ4_0, GgmlType::Q8_0, convertActQ8_0, dotScalarQ4_0};
    static const TypeOps q4_1{dequantizeQ4_1, GgmlType::Q8_1, convertActQ8_1, dotScalarQ4_1};
    static const TypeOps q5_0{dequantizeQ5_0, GgmlType::Q8_0, convertActQ8_0, dotScalarQ5_0};
    static const TypeOps q5_1{dequantizeQ5_1, GgmlType::Q8_1, convertActQ8_1, dotScalarQ5_1};
    static const TypeOps q8_0{dequantizeQ8_0, GgmlType::Q8_0, convertActQ8_0, dotScalarQ8_0};
    static const TypeOps q4_k{dequantizeQ4_K, GgmlType::Q8_K, quantizeRowQ8_K, dotScalarQ4_K};
    static const TypeOps q5_k{dequantizeQ5_K, GgmlType::Q8_K, quantizeRowQ8_K, dotScalarQ5_K};
    static const TypeOps q6_k{dequantizeQ6_K, GgmlType::Q8_K, quantizeRowQ8_K, dotScalarQ6_K};
    switch (type) {
    case GgmlType::F32: return &f32;
    case GgmlType::F16: return &f16;
    case GgmlType::BF16: return &bf16;
    case GgmlType::Q4_0: return &q4_0;
    case GgmlType::Q4_1: return &q4_1;
    case GgmlType::Q5_0: return &q5_0;
    case GgmlType::Q5_1: return &q5_1;
    case GgmlType::Q8_0: return &q8_0;
    case GgmlType::Q4_K: return &q4_k;
    case GgmlType::Q5_K: return &q5_k;
    case GgmlType::Q6_K: return &q6_k;
    default: return nullptr;
    }
}

} // namespace detail

namespace {

std::string typeName(GgmlType type) {
    const TypeTraits* t = typeTraits(type);
    return t ? t->name : "type id " + std::to_string(uint32_t(type));
}

// Ops for `type` with n checked against its block size; throws weir::Error.
const detail::TypeOps& checkedOps(const char* what, GgmlType type, int64_t n) {
    const detail::TypeOps* ops = detail::typeOps(type);
    if (!ops) throw Error(std::string(what) + ": unsupported tensor type " + typeName(type));
    const int64_t block = typeTraits(type)->blockElems;
    if (n < 0 || n % block != 0)
        throw Error(std::string(what) + ": " + std::to_string(n) + " elements is not a multiple of the " +
                    typeName(type) + " block size " + std::to_string(block));
    return *ops;
}

} // namespace

void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
    checkedOps("dequantizeRow", type, n).dequantize(src, dst, n);
}

float dotRowF32(GgmlType type, const void* row, const float* x, int64_t n) {
    const detail::TypeOps& ops = checkedOps("dotRowF32", type, n);
    // Dequantize 256 elements at a time (a multiple of every block size) and
    // sum each chunk's eight partial sums in double.
    constexpr int64_t kChunk = 256;
    const size_t chunkBytes = rowBytes(type, kChunk);
    const auto* src = static_cast<const uint8_t*>(row);
    float buf[kChunk];
    double total = 0.0;
    for (int64_t i = 0; i < n; i += kChunk, src += chunkBytes, x += kChunk) {
        const int64_t len = n - i < kChunk ? n - i : kChunk;
        ops.dequantize(src, buf, len);
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t j = 0;
        for (; j + 8 <= len; j += 8)
            for (int l = 0; l < 8; ++l) acc[l] += buf[j + l] * x[j + l];
        for (; j < len; ++j) acc[0] += buf[j] * x[j];
        for (float a : acc) total += a;
    }
    return float(total);
}

void getRow(const WeightView& w, int64_t r, float* dst) {
    if (r < 0 || r >= w.rows)
        throw Error("getRow: row " + std::to_string(r) + " out of range (" + std::to_string(w.rows) + " rows)");
    const detail::TypeOps& ops = checkedOps("getRow", w.type, w.cols);
    ops.dequantize(static_cast<const uint8_t*>(w.data) + size_t(r) * w.rowStride, dst, w.cols);
}

float dotQ8_0(const void* a, const void* b, int64_t n) {
    if (activeKernelPath() == KernelPath::Avx2) return detail::dotQ8_0RowsAvx2(a, b, n);
    return detail::dotQ8_0RowsScalar(a, b, n);
}

} // namespace weir::kernels
