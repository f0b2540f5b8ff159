// The Llama family: Llama 2/3 and Mistral ("llama"), Qwen 2 ("qwen2": q/k/v
// biases) and Qwen 3 ("qwen3": Q/K norms). Differences are metadata and which
// optional tensors exist; the math is the shared Transformer with SwiGLU.
#include <cmath>
#include <string>

#include "engine/models/architectures.h"
#include "engine/models/model_config_loader.h"
#include "engine/models/transformer.h"
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

std::unique_ptr<Model> loadLlama(std::shared_ptr<const gguf::GgufFile> file) {
    const std::string arch = file->getString("general.architecture").value_or("");
    ModelConfig c = llamaConfig(*file, arch);
    auto tensors = std::make_unique<ModelTensors>(*file);
    ModelTensors& t = *tensors;
    const int64_t E = c.nEmbd, V = c.nVocab, F = c.nFf, hd = c.headDimK;
    const int64_t qDim = c.nHead * hd, kvDim = c.nHeadKv * hd;

    TransformerWeights w;
    w.tokEmbd = t.matrix("token_embd.weight", E, V);
    w.outputNorm = t.vector("output_norm.weight", E);
    w.output = t.has("output.weight") ? t.matrix("output.weight", E, V) : w.tokEmbd;
    w.ropeFreqs = t.vector("rope_freqs.weight", c.nRot / 2, false);
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        LayerWeights L;
        L.attnNorm = t.vector(p + "attn_norm.weight", E);
        L.wq = t.matrix(p + "attn_q.weight", E, qDim);
        L.wk = t.matrix(p + "attn_k.weight", E, kvDim);
        L.wv = t.matrix(p + "attn_v.weight", E, kvDim);
        L.wo = t.matrix(p + "attn_output.weight", qDim, E);
        L.bq = t.vector(p + "attn_q.bias", qDim, false);
        L.bk = t.vector(p + "attn_k.bias", kvDim, false);
        L.bv = t.vector(p + "attn_v.bias", kvDim, false);
        L.bo = t.vector(p + "attn_output.bias", E, false);
        L.qNorm = t.vector(p + "attn_q_norm.weight", hd, false);
        L.kNorm = t.vector(p + "attn_k_norm.weight", hd, false);
        if (!L.qNorm != !L.kNorm) throw Error(file->path() + ": layer " + std::to_string(il) + " has only one of attn_q_norm/attn_k_norm");
        L.ffnNorm = t.vector(p + "ffn_norm.weight", E);
        L.gate = t.matrix(p + "ffn_gate.weight", E, F);
        L.up = t.matrix(p + "ffn_up.weight", E, F);
        L.down = t.matrix(p + "ffn_down.weight", F, E);
        w.layers.push_back(L);
    }

    TransformerOptions opt;
    opt.activation = FfnActivation::Silu;
    opt.scaleQueryFirst = false;
    return std::make_unique<Transformer>(std::move(file), std::move(c), std::move(w), opt, std::move(tensors));
}

} // namespace weir
