#pragma once
// K and V rows of every layer a pool serves: capacityPages * P rows per layer,
// rowBytes each (from the layer's row width and the KV dtype). Row r of a
// layer is position (r % P) of page (r / P).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/models/kv_access.h"

namespace weir::kv {

class KvStorage {
public:
    struct LayerSpec {
        int32_t layer = 0;      // model layer index
        int64_t rowElems = 0;
    };
    // Throws weir::Error when the memory cannot be had.
    KvStorage(KvDtype dtype, int32_t pageSize, int32_t capacityPages, std::vector<LayerSpec> layers);

    size_t bytesPerToken() const;              // K + V over all layers
    size_t totalBytes() const { return bytesPerToken() * size_t(capacityPages_) * size_t(pageSize_); }
    bool servesLayer(int32_t layer) const;
    KvLayerStorage layer(int32_t layer) const; // empty storage for a layer it does not serve

    // Copies page `from` to page `to` in every layer (compaction on resize).
    void copyPage(int32_t from, int32_t to);
    // New capacity; rows of pages below min(old, new) are kept. Returns false
    // (nothing changed) when the memory cannot be had.
    bool resize(int32_t capacityPages);

private:
    struct FreeDeleter {
        void operator()(uint8_t* p) const;
    };
    using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;
    struct Layer {
        LayerSpec spec;
        size_t rowBytes = 0;
        Buffer k, v;
    };
    KvDtype dtype_;
    int32_t pageSize_;
    int32_t capacityPages_;
    std::vector<Layer> layers_;
    std::vector<int32_t> slotOfLayer_;  // model layer -> index in layers_ or -1
};

} // namespace weir::kv
