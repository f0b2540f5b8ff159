#pragma once
// K and V rows of every layer a pool serves: capacityPages * P rows per layer,
// rowBytes each (from the layer's row width and the KV dtype). Row r of a
// layer is position (r % P) of page (r / P). The rows live in the memory of
// the backend the model runs on (process memory on the CPU, device memory on
// a GPU); allocation and page copies go through it, so nothing here knows
// which.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/backend_buffer.h"
#include "engine/models/kv_access.h"

namespace weir::kv {

class KvStorage {
public:
    struct LayerSpec {
        int32_t layer = 0;      // model layer index
        int64_t rowElems = 0;
    };
    // Throws weir::Error when the memory cannot be had.
    KvStorage(KvDtype dtype, int32_t pageSize, int32_t capacityPages, std::vector<LayerSpec> layers,
              DeviceMemory& memory = hostMemory());

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
    struct Layer {
        LayerSpec spec;
        size_t rowBytes = 0;
        BackendBuffer k, v;
    };
    DeviceMemory& memory_;
    KvDtype dtype_;
    int32_t pageSize_;
    int32_t capacityPages_;
    std::vector<Layer> layers_;
    std::vector<int32_t> slotOfLayer_;  // model layer -> index in layers_ or -1
};

} // namespace weir::kv
