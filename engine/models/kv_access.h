#pragma once
// How a forward pass reads and writes the KV cache. The cache is paged: each
// sequence has a page table per pool (full-attention layers use the full pool,
// sliding-window layers the window pool). Position p of a sequence lives in row
//   table[p / pageSize] * pageSize + p % pageSize
// of the layer's K and V storage. The owner of the pools (engine/kv) makes sure
// every position in a batch has a page before forward() runs; positions that
// fell out of a window may have table entry -1 and must not be read.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <span>

#include "weir/types/kv_dtype.h"

namespace weir {


struct KvLayerStorage {
    uint8_t* k = nullptr;      // row r at k + r * rowBytes
    uint8_t* v = nullptr;
    KvDtype dtype = KvDtype::F16;
    int64_t rowElems = 0;      // n_head_kv * head_dim
    size_t rowBytes = 0;
};

class KvAccess {
public:
    virtual ~KvAccess() = default;
    virtual int32_t pageSize() const = 0;
    virtual KvLayerStorage layer(int32_t layer) const = 0;
    // Page ids of `seq` in the pool that serves `layer`. Entry i covers
    // positions [i*pageSize, (i+1)*pageSize); -1 = released (out of window).
    virtual std::span<const int32_t> pageTable(int32_t layer, int32_t seq) const = 0;
};

} // namespace weir
