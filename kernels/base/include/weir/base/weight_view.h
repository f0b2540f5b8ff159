#pragma once
// A weight matrix as a backend's ops read it: `rows` rows of `cols` elements
// of `type`, row r at data + r * rowStride, in the memory of the backend that
// adopted it (the file mapping on the CPU, device memory on a GPU).
#include <cstddef>
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir {

struct WeightView {
    GgmlType type;
    const void* data;
    int64_t cols;       // K: contiguous length (GGUF ne[0])
    int64_t rows;       // N: output features (GGUF ne[1])
    size_t rowStride;   // bytes between rows
    // Optional: the rows repacked by the backend for a faster kernel (the CPU's
    // tile layout, kernels/cpu/weight_tiles.h), used for every multiply
    // instead of `data` (which row lookups still read).
    const uint8_t* tiles = nullptr;
};

} // namespace weir
