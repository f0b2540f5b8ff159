#include "engine/models/simple_kv_cache.h"

#include <string>

#include "weir/base/error.h"

namespace weir {

SimpleKvCache::SimpleKvCache(const ModelConfig& config, int32_t sequences, int32_t maxTokens, int32_t pageSize, KvDtype dtype,
                             DeviceMemory& memory)
    : sequences_(sequences), pageSize_(pageSize), nLayer_(config.nLayer), dtype_(dtype), rowElems_(config.kvRowElems()),
      k_(memory), v_(memory) {
    if (sequences <= 0 || maxTokens <= 0 || pageSize <= 0)
        throw Error("KV cache: sequences, tokens and page size must be positive");
    if (dtype == KvDtype::Q8_0 && rowElems_ % 32 != 0)
        throw Error("KV cache: q8_0 needs rows that are a multiple of 32 values, the model has " + std::to_string(rowElems_));
    pagesPerSeq_ = (maxTokens + pageSize - 1) / pageSize;
    rowBytes_ = kvRowBytes(dtype, rowElems_);
    // Page p of the pool is pages p (rows p*pageSize ...), sequence s uses a contiguous run.
    // Lay the runs out in reverse so tests notice code that assumes page == position / pageSize.
    tables_.resize(size_t(sequences) * pagesPerSeq_);
    const int32_t totalPages = sequences * pagesPerSeq_;
    for (int32_t s = 0; s < sequences; ++s)
        for (int32_t p = 0; p < pagesPerSeq_; ++p)
            tables_[size_t(s) * pagesPerSeq_ + p] = totalPages - (s + 1) * pagesPerSeq_ + p;
    layerBytes_ = size_t(totalPages) * size_t(pageSize) * rowBytes_;
    k_.ensure(layerBytes_ * size_t(nLayer_), "KV rows (K)");
    v_.ensure(layerBytes_ * size_t(nLayer_), "KV rows (V)");
}

KvLayerStorage SimpleKvCache::layer(int32_t layer) const {
    KvLayerStorage s;
    if (layer < 0 || layer >= nLayer_) return s;
    s.k = static_cast<uint8_t*>(k_.data()) + size_t(layer) * layerBytes_;
    s.v = static_cast<uint8_t*>(v_.data()) + size_t(layer) * layerBytes_;
    s.dtype = dtype_;
    s.rowElems = rowElems_;
    s.rowBytes = rowBytes_;
    return s;
}

std::span<const int32_t> SimpleKvCache::pageTable(int32_t, int32_t seq) const {
    if (seq < 0 || seq >= sequences_) return {};
    return {tables_.data() + size_t(seq) * pagesPerSeq_, size_t(pagesPerSeq_)};
}

} // namespace weir
