#pragma once
// KV cache rows on the device: F16, Q8_0 (blocks of 32: f16 d, int8 q),
// FP8 E4M3 (the byte format of kernels/cpu/fp8_e4m3.h) and F32, and where a
// position's row is in a paged store.
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/cuda/device_common.cuh"
#include "weir/base/ggml_type.h"

namespace weir::cuda {

// Bytes of `elems` values of a KV row type (kvRowBytes of the engine).
__host__ __device__ inline size_t kvBytes(GgmlType t, int64_t elems) {
    switch (t) {
    case GgmlType::F32: return size_t(elems) * 4;
    case GgmlType::F16: return size_t(elems) * 2;
    case GgmlType::Q8_0: return size_t(elems / 32) * 34;
    default: return size_t(elems);  // E4M3_KV
    }
}

// Element d of a row.
template <GgmlType T>
WEIR_HD float kvAt(const uint8_t* row, int d) {
    if constexpr (T == GgmlType::F32) {
        return reinterpret_cast<const float*>(row)[d];
    } else if constexpr (T == GgmlType::F16) {
        return halfBits(reinterpret_cast<const uint16_t*>(row)[d]);
    } else if constexpr (T == GgmlType::Q8_0) {
        const uint8_t* b = row + (d >> 5) * 34;
        return halfBits(loadU16(b)) * float(int8_t(b[2 + (d & 31)]));
    } else {
        return halfBits(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(row[d]), __NV_E4M3).x);
    }
}

// Row `pos` of a sequence in a paged store (-1 when its page is released).
WEIR_HD int64_t pagedRow(const int32_t* table, int32_t pos, int32_t pageSize) {
    const int32_t page = table[pos / pageSize];
    return page < 0 ? -1 : int64_t(page) * pageSize + pos % pageSize;
}

} // namespace weir::cuda
