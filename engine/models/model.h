#pragma once
// A loaded model: its weights adopted by a backend (used in place from the
// GGUF mapping on the CPU, uploaded once to a GPU) plus a forward pass over a
// mixed batch. Create one with loadModel(); the architecture is chosen from
// general.architecture and refused with weir::Error if unsupported.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/gguf/gguf_file.h"
#include "engine/models/batch.h"
#include "engine/models/kv_access.h"
#include "weir/types/model_config.h"

namespace weir {

// Weight bytes adopted so far and in all, called as tensors reach the backend.
using LoadProgress = std::function<void(uint64_t doneBytes, uint64_t totalBytes)>;

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelConfig& config() const = 0;
    // The backend the weights live in and the forward pass runs on.
    virtual Backend& backend() = 0;

    // Runs the batch. `logits` ends as nVocab floats for every token with
    // wantLogits, in batch order (what it held before is overwritten, not
    // cleared first). K/V of every batch token is written to the cache at its
    // position.
    virtual void forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits) = 0;
    // After forward(): for every wantLogits token, in batch order, its final
    // hidden state after the output norm (nEmbd floats each; what the logits
    // are computed from, and what embeddings are made of). Valid until the
    // next forward().
    virtual std::span<const float> finalHidden() const = 0;
};

// Keeps the file mapped for as long as the model lives; `backend` must
// outlive the model.
std::unique_ptr<Model> loadModel(std::shared_ptr<const gguf::GgufFile> file, Backend& backend,
                                 const LoadProgress& progress = {});

} // namespace weir
