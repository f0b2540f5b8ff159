// Gemma 3: what its GGUF metadata and tensors look like and how they map
// onto the shared Transformer: embeddings scaled by sqrt(n_embd), Q/K norms,
// a norm after attention and after the FFN, GeGLU (tanh GELU), and
// sliding-window layers with their own RoPE base, chosen by
// attention.sliding_window_pattern (every sixth layer global in Gemma 3).
#include <cmath>
#include <string>

#include "engine/models/architectures.h"
#include "engine/models/model_config_loader.h"
#include "engine/models/transformer.h"
#include "engine/models/transformer_weights.h"
#include "weir/base/error.h"

namespace weir {

static ModelConfig gemma3Config(const gguf::GgufFile& file) {
    const ModelMetadata meta(file, "gemma3");
    ModelConfig c = readBaseConfig(file, meta, 1e-6f);
    c.ropeStyle = RopeStyle::NeoX;

    // Sliding layers: an explicit per-layer pattern array, or a period n where
    // the last layer of every n is global (default 6: layers 5, 11, 17 ... global).
    // A window of 0 or 1 (a layer that sees nothing or only its own token) or
    // one beyond the trained context is no real model's: refuse it.
    const int64_t window = meta.intOr("attention.sliding_window", 0);
    if (meta.has("attention.sliding_window") && (window < 2 || window > c.nCtxTrain))
        meta.refuse("attention.sliding_window",
                    "must be between 2 and the context length " + std::to_string(c.nCtxTrain));
    c.slidingWindow = int32_t(window);
    c.layerSlides.assign(size_t(c.nLayer), false);
    if (c.slidingWindow > 0) {
        const gguf::Value* pat = meta.find("attention.sliding_window_pattern");
        if (pat && pat->asArray()) {
            const auto& items = pat->asArray()->items;
            if (items.size() != size_t(c.nLayer))
                throw Error(file.path() + ": " + meta.key("attention.sliding_window_pattern") + " has " + std::to_string(items.size()) +
                            " entries for " + std::to_string(c.nLayer) + " layers");
            for (size_t il = 0; il < items.size(); ++il) c.layerSlides[il] = items[il].asInt().value_or(0) != 0;
        } else {
            const int64_t period = pat ? pat->asInt().value_or(6) : 6;
            if (period <= 0) throw Error(file.path() + ": bad " + meta.key("attention.sliding_window_pattern"));
            for (int32_t il = 0; il < c.nLayer; ++il) c.layerSlides[size_t(il)] = il % period < period - 1;
        }
    }

    const float globalBase = float(meta.positiveFloatOr("rope.freq_base", 10000.0));
    const float globalScale = readLinearRopeScale(file, meta);
    const float localBase = float(meta.positiveFloatOr("rope.freq_base_swa", 10000.0));
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const bool s = c.layerSlides[size_t(il)];
        c.ropeBase.push_back(s ? localBase : globalBase);
        c.ropeScale.push_back(s ? 1.0f : globalScale);
    }
    // Query pre-attention scalar: head size, except the 27B which uses n_embd / n_head.
    c.attnScale = c.nLayer == 62 ? 1.0f / std::sqrt(float(c.nEmbd / c.nHead)) : 1.0f / std::sqrt(float(c.headDimK));
    checkConfig(file, c);
    return c;
}

std::unique_ptr<Model> loadGemma3(std::shared_ptr<const gguf::GgufFile> file, Backend& backend, const LoadProgress& progress) {
    ModelConfig c = gemma3Config(*file);
    auto tensors = std::make_unique<ModelTensors>(*file);
    TensorSet set;
    set.qkNorms = Presence::Required;
    set.postNorms = Presence::Required;
    TransformerWeights w = bindTransformerWeights(file->path(), c, *tensors, set);
    const int64_t E = c.nEmbd;

    TransformerOptions opt;
    opt.embedScale = std::sqrt(float(E));
    opt.activation = FfnActivation::GeluTanh;
    opt.scaleQueryFirst = true;
    return std::make_unique<Transformer>(std::move(file), std::move(c), std::move(w), opt, std::move(tensors), backend,
                                         progress);
}

} // namespace weir
