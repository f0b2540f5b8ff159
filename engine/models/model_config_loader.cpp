#include "engine/models/model_config_loader.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "weir/base/error.h"

namespace weir {

namespace {

constexpr float kMaxNormEps = 1e-2f;

// general.file_type values (llama_ftype) by name.
const char* fileTypeName(int64_t ft) {
    switch (ft) {
    case 0: return "F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K";
    case 11: return "Q3_K_S";
    case 12: return "Q3_K_M";
    case 13: return "Q3_K_L";
    case 14: return "Q4_K_S";
    case 15: return "Q4_K_M";
    case 16: return "Q5_K_S";
    case 17: return "Q5_K_M";
    case 18: return "Q6_K";
    case 32: return "BF16";
    default: return nullptr;
    }
}

} // namespace

ModelConfig readBaseConfig(const gguf::GgufFile& file, const ModelMetadata& meta, float defaultEps) {
    ModelConfig c;
    c.architecture = meta.arch();
    c.name = file.getString("general.name").value_or("");
    auto positive = [&](std::string_view key, int64_t v) {
        if (v <= 0 || v > (int64_t(1) << 30)) throw Error(file.path() + ": metadata " + meta.key(key) + " = " + std::to_string(v) + " is out of range");
        return int32_t(v);
    };
    c.nLayer = positive("block_count", meta.requireInt("block_count"));
    c.nEmbd = positive("embedding_length", meta.requireInt("embedding_length"));
    c.nFf = positive("feed_forward_length", meta.requireInt("feed_forward_length"));
    c.nHead = positive("attention.head_count", meta.requireInt("attention.head_count"));
    c.nHeadKv = positive("attention.head_count_kv", meta.intOr("attention.head_count_kv", c.nHead));
    c.headDimK = positive("attention.key_length", meta.intOr("attention.key_length", c.nEmbd / c.nHead));
    c.headDimV = positive("attention.value_length", meta.intOr("attention.value_length", c.headDimK));
    c.nCtxTrain = positive("context_length", meta.intOr("context_length", 2048));
    c.normEps = float(meta.positiveFloatOr("attention.layer_norm_rms_epsilon", defaultEps));
    // Real models use 1e-5 or 1e-6; an epsilon near the activations' scale
    // flattens every norm and the output is garbage.
    if (c.normEps > kMaxNormEps)
        meta.refuse("attention.layer_norm_rms_epsilon", "outside (0, 0.01]: no model uses a norm epsilon this large");
    c.nRot = positive("rope.dimension_count", meta.intOr("rope.dimension_count", c.headDimK));

    const gguf::TensorInfo* emb = file.findTensor("token_embd.weight");
    if (!emb) throw Error(file.path() + ": missing tensor token_embd.weight");
    c.nVocab = int32_t(emb->ne[1]);

    std::map<std::string, uint64_t> byType;
    for (const auto& t : file.tensors()) {
        c.parameterCount += uint64_t(t.elements());
        if (t.nDims >= 2) {
            const auto* tr = kernels::typeTraits(t.type);
            byType[tr ? tr->name : "?"] += uint64_t(t.elements());
        }
    }
    const char* ft = fileTypeName(file.getInt("general.file_type").value_or(-1));
    if (ft) {
        c.quantization = ft;
    } else if (!byType.empty()) {
        auto best = byType.begin();
        for (auto it = byType.begin(); it != byType.end(); ++it) if (it->second > best->second) best = it;
        c.quantization = best->first;
    }
    return c;
}

float readLinearRopeScale(const gguf::GgufFile& file, const ModelMetadata& meta) {
    const auto type = meta.string("rope.scaling.type");
    if (type && *type != "none" && *type != "linear")
        throw Error(file.path() + ": RoPE scaling type '" + *type + "' (" + meta.key("rope.scaling.type") + ") is not supported");
    double factor = meta.floatOr("rope.scaling.factor", 0.0);
    if (factor == 0.0) factor = meta.floatOr("rope.scale_linear", 0.0);
    if (type && *type == "none") factor = 0.0;
    if (factor < 0.0)
        meta.refuse(meta.has("rope.scaling.factor") ? "rope.scaling.factor" : "rope.scale_linear", "must not be negative");
    return factor > 0.0 ? float(1.0 / factor) : 1.0f;
}

void checkLayerTensors(const gguf::GgufFile& file, const ModelConfig& c) {
    // Tensors are named blk.N.*: the highest N must be block_count - 1, or
    // layers would be silently ignored (or missing).
    int64_t highest = -1;
    for (const auto& t : file.tensors()) {
        if (t.name.rfind("blk.", 0) != 0) continue;
        int64_t n = 0;
        size_t i = 4;
        for (; i < t.name.size() && t.name[i] >= '0' && t.name[i] <= '9' && n < (int64_t(1) << 40); ++i)
            n = n * 10 + (t.name[i] - '0');
        if (i > 4 && i < t.name.size() && t.name[i] == '.') highest = std::max(highest, n);
    }
    if (highest + 1 != c.nLayer)
        throw Error(file.path() + ": " + c.architecture + ".block_count = " + std::to_string(c.nLayer) +
                    ": the file has tensors for " + std::to_string(highest + 1) + " layers (blk.0 to blk." +
                    std::to_string(highest) + ")");
}

void checkConfig(const gguf::GgufFile& file, const ModelConfig& c) {
    auto fail = [&](const std::string& why) { throw Error(file.path() + ": " + c.architecture + ": " + why); };
    checkLayerTensors(file, c);
    if (c.nHead % c.nHeadKv != 0)
        fail("head_count " + std::to_string(c.nHead) + " is not a multiple of head_count_kv " + std::to_string(c.nHeadKv));
    if (c.headDimK != c.headDimV) fail("key_length != value_length is not supported");
    if (c.nRot % 2 != 0 || c.nRot > c.headDimK) fail("rope.dimension_count " + std::to_string(c.nRot) + " does not fit head size " + std::to_string(c.headDimK));
    if (c.nVocab <= 0) fail("empty vocabulary");
    if (c.ropeBase.size() != size_t(c.nLayer) || c.ropeScale.size() != size_t(c.nLayer) || c.layerSlides.size() != size_t(c.nLayer))
        fail("per-layer settings incomplete");
    for (float b : c.ropeBase) if (!(b > 0.0f) || !std::isfinite(b)) fail("RoPE base must be a finite positive number");
    if (c.anySliding() && c.slidingWindow <= 0) fail("sliding layers without a window size");
    if (!(c.normEps > 0.0f) || !std::isfinite(c.normEps) || !(c.attnScale > 0.0f) || !std::isfinite(c.attnScale))
        fail("bad norm epsilon or attention scale");
}

} // namespace weir
