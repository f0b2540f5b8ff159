#include "engine/kv/kv_storage.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "weir/base/error.h"

namespace weir::kv {

// rowBytes * pageSize * pages, or false when it does not fit a size_t (a
// wrapped product would allocate a small buffer that rows are written past).
static bool layerBytes(size_t rowBytes, int32_t pageSize, int32_t pages, size_t& out) {
    if (pageSize < 0 || pages < 0) return false;
    size_t pageBytes = 0;
    return !__builtin_mul_overflow(rowBytes, size_t(pageSize), &pageBytes) &&
           !__builtin_mul_overflow(pageBytes, size_t(pages), &out);
}

KvStorage::KvStorage(KvDtype dtype, int32_t pageSize, int32_t capacityPages, std::vector<LayerSpec> layers,
                     DeviceMemory& memory)
    : memory_(memory), dtype_(dtype), pageSize_(pageSize), capacityPages_(0) {
    for (const LayerSpec& spec : layers) {
        if (spec.rowElems <= 0 || (dtype == KvDtype::Q8_0 && spec.rowElems % 32 != 0))
            throw Error("kv storage: layer " + std::to_string(spec.layer) + " row of " +
                        std::to_string(spec.rowElems) + " values cannot be stored as " + kvDtypeName(dtype) +
                        (dtype == KvDtype::Q8_0 ? " (needs a multiple of 32)" : ""));
        Layer l{spec, 0, BackendBuffer(memory), BackendBuffer(memory)};
        l.rowBytes = kvRowBytes(dtype, spec.rowElems);
        if (spec.layer >= int32_t(slotOfLayer_.size())) slotOfLayer_.resize(size_t(spec.layer) + 1, -1);
        slotOfLayer_[size_t(spec.layer)] = int32_t(layers_.size());
        layers_.push_back(std::move(l));
    }
    if (pageSize <= 0) throw Error("kv storage: page size must be at least 1 (got " + std::to_string(pageSize) + ")");
    if (!resize(capacityPages)) {
        // In double: the byte count may be what does not fit.
        const double mib = double(bytesPerToken()) * double(capacityPages) * double(pageSize) / double(1 << 20);
        throw Error("kv storage: cannot allocate " + std::to_string(int64_t(mib)) + " MiB for " +
                    std::to_string(capacityPages * int64_t(pageSize)) +
                    " tokens; lower --kv-reserve-tokens / --swa-tokens or use --kv-cache-dtype q8_0");
    }
}

size_t KvStorage::bytesPerToken() const {
    size_t b = 0;
    for (const Layer& l : layers_) b += 2 * l.rowBytes;
    return b;
}

bool KvStorage::servesLayer(int32_t layer) const {
    return layer >= 0 && layer < int32_t(slotOfLayer_.size()) && slotOfLayer_[size_t(layer)] >= 0;
}

KvLayerStorage KvStorage::layer(int32_t layer) const {
    KvLayerStorage out;
    out.dtype = dtype_;
    if (!servesLayer(layer)) return out;
    const Layer& l = layers_[size_t(slotOfLayer_[size_t(layer)])];
    out.k = static_cast<uint8_t*>(l.k.data());
    out.v = static_cast<uint8_t*>(l.v.data());
    out.rowElems = l.spec.rowElems;
    out.rowBytes = l.rowBytes;
    return out;
}

void KvStorage::copyPage(int32_t from, int32_t to) {
    if (from == to || from < 0 || to < 0 || from >= capacityPages_ || to >= capacityPages_) return;
    for (Layer& l : layers_) {
        const size_t pageBytes = l.rowBytes * size_t(pageSize_);
        for (const BackendBuffer* b : {&l.k, &l.v}) {
            uint8_t* base = static_cast<uint8_t*>(b->data());
            memory_.copyWithin(base + size_t(to) * pageBytes, base + size_t(from) * pageBytes, pageBytes);
        }
    }
}

bool KvStorage::resize(int32_t capacityPages) {
    if (capacityPages < 0) return false;
    std::vector<BackendBuffer> fresh;
    for (const Layer& l : layers_) {
        size_t bytes = 0;
        if (!layerBytes(l.rowBytes, pageSize_, capacityPages, bytes)) return false;
        for (const char* what : {"KV rows (K)", "KV rows (V)"}) {
            fresh.emplace_back(memory_);
            try {
                fresh.back().ensure(bytes ? bytes : 1, what);
            } catch (const Error&) {
                return false;  // what was allocated so far goes back with `fresh`
            }
        }
    }
    const int32_t keep = std::min(capacityPages, capacityPages_);
    for (size_t i = 0; i < layers_.size(); ++i) {
        Layer& l = layers_[i];
        const size_t keepBytes = l.rowBytes * size_t(pageSize_) * size_t(keep);  // <= the checked size above
        if (keepBytes) {
            memory_.copyWithin(fresh[2 * i].data(), l.k.data(), keepBytes);
            memory_.copyWithin(fresh[2 * i + 1].data(), l.v.data(), keepBytes);
        }
        l.k = std::move(fresh[2 * i]);
        l.v = std::move(fresh[2 * i + 1]);
    }
    capacityPages_ = capacityPages;
    return true;
}

} // namespace weir::kv
