#pragma once
// A decoder-only transformer covering the architectures we load (Gemma 3 and
// the Llama family). The per-architecture loaders (gemma3_model.cpp, llama_model.cpp) read
// metadata and tensors and describe what differs through TransformerOptions;
// the forward pass here runs a mixed batch against a paged KV cache.
#include <memory>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/model_tensors.h"
#include "kernels/cpu/attend_tile.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/weight_tiles.h"

namespace weir {

struct LayerWeights {
    const float* attnNorm = nullptr;
    kernels::WeightView wq{}, wk{}, wv{}, wo{};
    const float *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;  // optional biases
    const float *qNorm = nullptr, *kNorm = nullptr;                          // optional per-head norms
    const float* postAttnNorm = nullptr;                                     // optional (Gemma)
    const float* ffnNorm = nullptr;
    kernels::WeightView gate{}, up{}, down{};
    const float* postFfnNorm = nullptr;                                      // optional (Gemma)
};

struct TransformerWeights {
    kernels::WeightView tokEmbd{};
    const float* outputNorm = nullptr;
    kernels::WeightView output{};          // token_embd when tied
    const float* ropeFreqs = nullptr;      // optional nRot/2 frequency divisors
    std::vector<LayerWeights> layers;
};

enum class FfnActivation { GeluTanh, Silu };

struct TransformerOptions {
    float embedScale = 0.0f;            // multiply embeddings by this (0 = leave as is)
    FfnActivation activation = FfnActivation::Silu;
    // Gemma multiplies q by attnScale before attention (then scores are not
    // scaled); Llama scales the scores.
    bool scaleQueryFirst = false;
};

class Transformer : public Model {
public:
    Transformer(std::shared_ptr<const gguf::GgufFile> file, ModelConfig config, TransformerWeights weights,
                TransformerOptions options, std::unique_ptr<ModelTensors> tensors);

    const ModelConfig& config() const override { return config_; }
    void forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits, kernels::ThreadPool& pool) override;
    std::span<const float> finalHidden() const override { return {h_.data(), size_t(hiddenRows_ * config_.nEmbd)}; }
    uint64_t packWeights(kernels::ThreadPool& pool) override;

private:
    void checkBatch(const Batch& batch, const KvAccess& kv) const;
    void reserve(int64_t nTokens, int threads);
    void normRows(const float* x, const float* w, float* y, int64_t n, int64_t width, kernels::ThreadPool& pool);
    void attentionLayer(int32_t il, const Batch& batch, KvAccess& kv, kernels::ThreadPool& pool);
    void prepareRope(const Batch& batch);
    void computeRowGroups(const Batch& batch);

    std::shared_ptr<const gguf::GgufFile> file_;
    ModelConfig config_;
    TransformerWeights w_;
    TransformerOptions opt_;
    std::unique_ptr<ModelTensors> tensors_;  // owns converted norm vectors
    std::vector<std::unique_ptr<kernels::PackedBuffer>> packed_;  // packWeights()' copies

    // Distinct RoPE settings (Gemma: local and global) and each layer's index into them.
    std::vector<kernels::RopeParams> ropeKinds_;
    std::vector<int32_t> layerRope_;

    // Scratch, grown to the largest batch seen; reused across calls.
    int64_t capTokens_ = 0;
    std::vector<float> x_, h_, q_, k_, v_, attn_, o_, gate_, up_, act_;
    std::vector<float> ropeCs_;              // [kind][token][nRot]
    std::vector<float> attnScratch_;         // per thread
    // An attention tile: `tokens` batch tokens from firstToken (one sequence)
    // times `heads` query heads from firstHead (all of one KV head's group).
    struct AttnTile {
        int32_t firstToken, tokens, firstHead, heads;
    };
    // Queries per tile (tokens x group heads) the tiles aim at: each K/V row is
    // read from the cache and converted once per tile, and a long prompt's rows
    // do not fit in L2; yet prefill still has many tiles to split.
    static constexpr int kAttnTileQueries = 32;
    std::vector<AttnTile> attnTiles_;
    std::vector<int64_t> attnCost_;          // prefix sums of per-tile work
    std::vector<int32_t> outRows_;           // batch indices that want logits
    int64_t hiddenRows_ = 0;                 // rows of h_ that finalHidden() shows
    // Each row's sequence batch (size, index) for matmul's llama.cpp kernel choice:
    // all batch rows, and the rows that produce logits.
    std::vector<int32_t> order_, groupSize_, groupIndex_, outGroupSize_, outGroupIndex_;
    kernels::RowGroups groups_, outGroups_;
};

} // namespace weir
