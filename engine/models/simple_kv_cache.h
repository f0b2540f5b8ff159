#pragma once
// A minimal KvAccess for tests and weir-cli: a fixed number of sequences, each
// owning a contiguous run of pages big enough for maxTokens positions, in every
// layer (full and sliding-window layers alike keep everything; nothing is ever
// released). The real paged pools live in engine/kv.
#include <cstdint>
#include <vector>

#include "engine/backend/backend_buffer.h"
#include "engine/models/kv_access.h"
#include "weir/types/model_config.h"

namespace weir {

class SimpleKvCache : public KvAccess {
public:
    // Throws weir::Error for non-positive sizes or a dtype the row size does not allow.
    SimpleKvCache(const ModelConfig& config, int32_t sequences, int32_t maxTokens, int32_t pageSize = 16,
                  KvDtype dtype = KvDtype::F16, DeviceMemory& memory = hostMemory());

    int32_t pageSize() const override { return pageSize_; }
    KvLayerStorage layer(int32_t layer) const override;
    std::span<const int32_t> pageTable(int32_t layer, int32_t seq) const override;

    int32_t sequences() const { return sequences_; }
    int32_t maxTokens() const { return pagesPerSeq_ * pageSize_; }
    size_t bytes() const { return k_.bytes() + v_.bytes(); }

private:
    int32_t sequences_, pageSize_, pagesPerSeq_;
    int32_t nLayer_;
    KvDtype dtype_;
    int64_t rowElems_;
    size_t rowBytes_, layerBytes_;
    BackendBuffer k_, v_;            // [layer][row], in the model's backend memory
    std::vector<int32_t> tables_;    // [seq][page]; sequence s owns pages s*pagesPerSeq ...
};

} // namespace weir
