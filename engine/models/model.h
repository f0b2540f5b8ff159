#pragma once
// A loaded model: weights used in place from the GGUF mapping plus a forward
// pass over a mixed batch. Create one with loadModel(); the architecture is
// chosen from general.architecture and refused with weir::Error if unsupported.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/batch.h"
#include "engine/models/kv_access.h"
#include "weir/types/model_config.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelConfig& config() const = 0;

    // Runs the batch. For every token with wantLogits, in batch order, appends
    // nVocab floats to `logits` (cleared first). K/V of every batch token is
    // written to the cache at its position.
    virtual void forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits,
                         kernels::ThreadPool& pool) = 0;
    // After forward(): for every wantLogits token, in batch order, its final
    // hidden state after the output norm (nEmbd floats each; what the logits
    // are computed from, and what embeddings are made of). Valid until the
    // next forward().
    virtual std::span<const float> finalHidden() const = 0;
    // Optional, once after loading: copies the weight matrices this CPU's
    // kernels read faster in another layout (kernels/cpu/weight_tiles.h; the
    // output head) and gives back the file pages they came from. Returns how many bytes more
    // the copies hold than what they replace (a decode step reads them too).
    virtual uint64_t packWeights(kernels::ThreadPool&) { return 0; }
};

// Keeps the file mapped for as long as the model lives.
std::unique_ptr<Model> loadModel(std::shared_ptr<const gguf::GgufFile> file);

} // namespace weir
