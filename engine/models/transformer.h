#pragma once
// A decoder-only transformer covering the architectures we load (Gemma 3 and
// the Llama family). The per-architecture loaders (gemma3_model.cpp, llama_model.cpp) read
// metadata and tensors and describe what differs through TransformerOptions;
// the forward pass here runs a mixed batch against a paged KV cache.
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/backend_buffer.h"
#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/model_tensors.h"

namespace weir {

struct LayerWeights {
    const float* attnNorm = nullptr;
    WeightView wq{}, wk{}, wv{}, wo{};
    const float *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;  // optional biases
    const float *qNorm = nullptr, *kNorm = nullptr;                          // optional per-head norms
    const float* postAttnNorm = nullptr;                                     // optional (Gemma)
    const float* ffnNorm = nullptr;
    WeightView gate{}, up{}, down{};
    const float* postFfnNorm = nullptr;                                      // optional (Gemma)
};

struct TransformerWeights {
    WeightView tokEmbd{};
    const float* outputNorm = nullptr;
    WeightView output{};          // token_embd when tied
    const float* ropeFreqs = nullptr;      // optional nRot/2 frequency divisors
    std::vector<LayerWeights> layers;
};

using FfnActivation = GluActivation;

struct TransformerOptions {
    float embedScale = 0.0f;            // multiply embeddings by this (0 = leave as is)
    FfnActivation activation = FfnActivation::Silu;
    // Gemma multiplies q by attnScale before attention (then scores are not
    // scaled); Llama scales the scores.
    bool scaleQueryFirst = false;
};

// The layer sequence of a forward pass, as calls to a Backend's ops; the
// backend (CPU or CUDA) does the math in its own memory and owns every policy
// of how (threads, tiles, kernels, graphs).
class Transformer : public Model {
public:
    // Adopts every weight into `backend` (uploads them to a GPU; on the CPU
    // the file mapping is used in place, the output head maybe repacked).
    Transformer(std::shared_ptr<const gguf::GgufFile> file, ModelConfig config, TransformerWeights weights,
                TransformerOptions options, std::unique_ptr<ModelTensors> tensors, Backend& backend,
                const LoadProgress& progress = {});

    const ModelConfig& config() const override { return config_; }
    Backend& backend() override { return backend_; }
    void forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits) override;
    std::span<const float> finalHidden() const override { return {hidden_, size_t(hiddenRows_ * config_.nEmbd)}; }

private:
    void adoptWeights(const LoadProgress& progress);
    void checkBatch(const Batch& batch, const KvAccess& kv) const;
    void reserve(int64_t nTokens);
    // Layer il's attention of the step's n rows from their normed inputs h into attn_.
    void attentionLayer(int32_t il, const float* h, int64_t n, KvAccess& kv);

    std::shared_ptr<const gguf::GgufFile> file_;
    ModelConfig config_;
    TransformerWeights w_;
    TransformerOptions opt_;
    std::unique_ptr<ModelTensors> tensors_;  // owns converted norm vectors
    Backend& backend_;
    std::vector<int32_t> layerRope_;         // each layer's RoPE kind (Gemma: local and global)
    int32_t fullLayer_ = -1, windowLayer_ = -1;  // a layer of each kind, for the page tables

    // Scratch in backend memory, grown to the largest batch seen.
    int64_t capTokens_ = 0;
    BackendBuffer x_, h_, q_, k_, v_, attn_, o_, gate_, up_, act_, logits_;
    std::vector<float> hiddenHost_;          // final hidden rows copied out of device memory
    const float* hidden_ = nullptr;          // what finalHidden() shows
    std::vector<int32_t> outRows_;           // batch indices that want logits
    int64_t hiddenRows_ = 0;
};

} // namespace weir
