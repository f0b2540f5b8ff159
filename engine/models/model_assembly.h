#pragma once
// Where a model, its backend and its KV storage are put together: the one
// place that knows they must agree (the weights and the pools in the memory
// of the device the forward pass runs on) and in which order they go away
// (pools and model before the backend whose memory they hold).
#include <memory>
#include <string>

#include "engine/backend/backend.h"
#include "engine/backend/backend_factory.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/models/model.h"

namespace weir {

struct AssembledModel {
    std::unique_ptr<Backend> backend;  // first: destroyed last
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<Model> model;
};

// Maps the file, builds the backend `request` names and adopts the weights
// into it (with progress). Throws weir::Error: a bad file, a device that is
// not there, weights that do not fit in its memory (naming the tensor).
AssembledModel assembleModel(const std::string& path, const BackendRequest& request, const LoadProgress& progress = {});

// The hybrid pools of `config` with their K/V rows in the model's backend memory.
std::unique_ptr<kv::HybridKvCache> assembleCache(kv::KvCacheConfig config, Model& model);

} // namespace weir
