// The Llama family: Llama 2/3 and Mistral ("llama"), Qwen 2 ("qwen2": q/k/v
// biases) and Qwen 3 ("qwen3": Q/K norms). Differences are metadata and which
// optional tensors exist; the math is the shared Transformer with SwiGLU.
#include <cmath>
#include <string>

#include "engine/models/architectures.h"
#include "engine/models/model_config_loader.h"
#include "engine/models/transformer.h"
#include "engine/models/transformer_weights.h"
#include "weir/base/error.h"

namespace weir {

static ModelConfig llamaConfig(const gguf::GgufFile& file, const std::string& arch) {
    const ModelMetadata meta(file, arch);
    if (meta.intOr("expert_count", 0) > 0) throw Error(file.path() + ": mixture-of-experts " + arch + " models are not supported");
    ModelConfig c = readBaseConfig(file, meta, 1e-5f);
    c.ropeStyle = arch == "llama" ? RopeStyle::Normal : RopeStyle::NeoX;
    const float base = float(meta.positiveFloatOr("rope.freq_base", 10000.0));
    const float scale = readLinearRopeScale(file, meta);
    c.ropeBase.assign(size_t(c.nLayer), base);
    c.ropeScale.assign(size_t(c.nLayer), scale);
    c.layerSlides.assign(size_t(c.nLayer), false);
    const double s = meta.floatOr("attention.scale", 0.0);
    if (s < 0.0) meta.refuse("attention.scale", "must not be negative");
    c.attnScale = s != 0.0 ? float(s) : 1.0f / std::sqrt(float(c.headDimK));
    checkConfig(file, c);
    return c;
}

std::unique_ptr<Model> loadLlama(std::shared_ptr<const gguf::GgufFile> file, Backend& backend, const LoadProgress& progress) {
    const std::string arch = file->getString("general.architecture").value_or("");
    ModelConfig c = llamaConfig(*file, arch);
    auto tensors = std::make_unique<ModelTensors>(*file);
    TensorSet set;  // Qwen 2 has the biases, Qwen 3 the Q/K norms, some Llama 3 files rope_freqs
    set.qkNorms = Presence::Optional;
    set.biases = Presence::Optional;
    set.ropeFreqs = Presence::Optional;
    TransformerWeights w = bindTransformerWeights(file->path(), c, *tensors, set);

    TransformerOptions opt;
    opt.activation = FfnActivation::Silu;
    opt.scaleQueryFirst = false;
    return std::make_unique<Transformer>(std::move(file), std::move(c), std::move(w), opt, std::move(tensors), backend,
                                         progress);
}

} // namespace weir
