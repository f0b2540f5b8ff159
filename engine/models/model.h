#pragma once
// A loaded model: weights used in place from the GGUF mapping plus a forward
// pass over a mixed batch. Create one with loadModel(); the architecture is
// chosen from general.architecture and refused with weir::Error if unsupported.
#include <memory>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/batch.h"
#include "engine/models/kv_access.h"
#include "weir/types/model_config.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

// How the matmuls round each token's row. The CPU kernels can follow either
// of two policies; the math is the same, only the last bits differ.
enum class RowRounding {
    // Each sequence's rows round exactly as llama.cpp's CPU backend rounds that
    // sequence run on its own: token for token identical to it. The kernels it
    // picks depend on how many tokens of the sequence are in the batch, so
    // splitting a prefill into other chunks changes the last bits (as it does
    // in llama.cpp).
    LlamaCompatible,
    // Every row rounds the same way whatever the batch: a sequence's results do
    // not depend on chunking or on what else the scheduler batches with it.
    // Decode steps still match llama.cpp exactly; prefills can differ in the last bits.
    BatchInvariant,
};

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelConfig& config() const = 0;

    // Default LlamaCompatible. Not to be changed while a forward pass runs.
    // (Models without the choice ignore it.)
    virtual void setRowRounding(RowRounding) {}
    virtual RowRounding rowRounding() const { return RowRounding::LlamaCompatible; }

    // Runs the batch. For every token with wantLogits, in batch order, appends
    // nVocab floats to `logits` (cleared first). K/V of every batch token is
    // written to the cache at its position.
    virtual void forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits,
                         kernels::ThreadPool& pool) = 0;
};

// Keeps the file mapped for as long as the model lives.
std::unique_ptr<Model> loadModel(std::shared_ptr<const gguf::GgufFile> file);

} // namespace weir
