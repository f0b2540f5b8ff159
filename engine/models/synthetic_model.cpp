#include "engine/models/synthetic_model.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/gguf/gguf_writer.h"
#include "engine/models/synthetic_weights.h"
#include "weir/base/error.h"
#include "kernels/cpu/ggml_types.h"

namespace weir {

namespace {

using kernels::GgmlType;

// splitmix64: fixed, portable sequence for a given seed.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next() {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
    int32_t range(int32_t lo, int32_t hi) { return lo + int32_t(next() % uint64_t(hi - lo + 1)); }  // [lo, hi]
    // Roughly normal (sum of 4 uniforms), unit variance.
    double normal() { return (uniform() + uniform() + uniform() + uniform() - 2.0) * std::sqrt(3.0); }

private:
    uint64_t s_;
};

void putF16(std::vector<uint8_t>& out, float v) {
    const uint16_t h = kernels::f32ToF16(v);
    out.push_back(uint8_t(h & 0xff));
    out.push_back(uint8_t(h >> 8));
}

// Random blocks of `type` whose values have roughly standard deviation `s`.
std::vector<uint8_t> randomTensor(Rng& rng, GgmlType type, int64_t cols, int64_t rows, double s) {
    std::vector<uint8_t> out;
    const int64_t n = cols * rows;
    switch (type) {
    case GgmlType::F32:
        out.resize(size_t(n) * 4);
        for (int64_t i = 0; i < n; ++i) {
            const float v = float(rng.normal() * s);
            std::memcpy(out.data() + i * 4, &v, 4);
        }
        break;
    case GgmlType::F16:
        for (int64_t i = 0; i < n; ++i) putF16(out, float(rng.normal() * s));
        break;
    case GgmlType::Q8_0:  // d f16, 32 x int8
        for (int64_t b = 0; b < n / 32; ++b) {
            putF16(out, float(s / 73.0 * (0.5 + rng.uniform())));
            for (int j = 0; j < 32; ++j) out.push_back(uint8_t(int8_t(rng.range(-127, 127))));
        }
        break;
    case GgmlType::Q4_K: {  // d, dmin f16; 12 bytes of 6-bit scales/mins; 128 bytes of nibbles
        for (int64_t b = 0; b < n / 256; ++b) {
            const double d = s / 200.0 * (0.5 + rng.uniform());
            putF16(out, float(d));
            putF16(out, float(d * 7.5));  // centres d*sc*q - dmin*m around zero on average
            for (int j = 0; j < 12; ++j) out.push_back(uint8_t(rng.next()));
            for (int j = 0; j < 128; ++j) out.push_back(uint8_t(rng.next()));
        }
        break;
    }
    case GgmlType::Q6_K: {  // ql[128], qh[64], int8 scales[16], d f16
        for (int64_t b = 0; b < n / 256; ++b) {
            for (int j = 0; j < 192; ++j) out.push_back(uint8_t(rng.next()));
            for (int j = 0; j < 16; ++j) out.push_back(uint8_t(int8_t(rng.range(-64, 64))));
            putF16(out, float(s / 685.0 * (0.5 + rng.uniform())));
        }
        break;
    }
    default: throw Error("synthetic model: no generator for this tensor type");
    }
    return out;
}

std::vector<uint8_t> normWeights(Rng& rng, int64_t n) {
    std::vector<uint8_t> out(size_t(n) * 4);
    for (int64_t i = 0; i < n; ++i) {
        const float v = float(1.0 + 0.2 * (rng.uniform() - 0.5));
        std::memcpy(out.data() + i * 4, &v, 4);
    }
    return out;
}

} // namespace

gguf::GgufWriter syntheticPresetWriter(const SyntheticPreset& preset, uint64_t seed) {
    gguf::GgufWriter w;
    for (const gguf::KeyValue& kv : preset.metadata) w.add(kv.key, kv.value);
    uint64_t index = 0;
    for (const SyntheticPresetTensor& t : preset.tensors) {
        const uint64_t rowBytes = kernels::rowBytes(t.type, t.ne[0]);
        const uint64_t tensorSeed = seed * 0x100000001b3ull + ++index;  // every tensor its own stream
        w.addTensor(t.name, t.type, t.ne,
                    [type = t.type, scale = t.scale, tensorSeed, rowBytes](uint64_t offset, uint8_t* out, uint64_t size) {
                        fillTameRows(type, scale, tensorSeed, rowBytes, offset, out, size);
                    });
    }
    return w;
}

std::vector<uint8_t> makeSyntheticModel(const SyntheticModelSpec& sp) {
    if (!sp.preset.empty()) return syntheticPresetWriter(syntheticPreset(sp.preset), sp.seed).toBytes();
    const bool qwen2 = sp.architecture == "qwen2", gemma3 = sp.architecture == "gemma3";
    if (!qwen2 && !gemma3 && sp.architecture != "llama") throw Error("synthetic model: architecture must be llama, qwen2 or gemma3");
    if (sp.nEmbd % 256 || sp.nFf % 256 || sp.nHead <= 0 || sp.nHeadKv <= 0 || sp.nEmbd % sp.nHead ||
        sp.nHead % sp.nHeadKv || sp.nVocab < 300 || sp.nLayer <= 0 || (gemma3 && (sp.slidingWindow <= 0 || sp.slidingPattern <= 0)))
        throw Error("synthetic model: bad sizes");
    const int32_t hd = sp.nEmbd / sp.nHead;
    const std::string a = sp.architecture + ".";
    Rng rng(sp.seed);
    gguf::GgufWriter w;
    w.addString("general.architecture", sp.architecture);
    w.addString("general.name", "weir-synthetic-" + sp.architecture);
    w.addU32(a + "context_length", uint32_t(sp.nCtx));
    w.addU32(a + "embedding_length", uint32_t(sp.nEmbd));
    w.addU32(a + "block_count", uint32_t(sp.nLayer));
    w.addU32(a + "feed_forward_length", uint32_t(sp.nFf));
    w.addU32(a + "attention.head_count", uint32_t(sp.nHead));
    w.addU32(a + "attention.head_count_kv", uint32_t(sp.nHeadKv));
    w.addF32(a + "attention.layer_norm_rms_epsilon", gemma3 ? 1e-6f : 1e-5f);
    w.addF32(a + "rope.freq_base", sp.ropeBase);
    if (gemma3) {
        w.addU32(a + "attention.key_length", uint32_t(hd));
        w.addU32(a + "attention.value_length", uint32_t(hd));
        w.addU32(a + "attention.sliding_window", uint32_t(sp.slidingWindow));
        w.addU32(a + "attention.sliding_window_pattern", uint32_t(sp.slidingPattern));
    } else {
        w.addU32(a + "rope.dimension_count", uint32_t(hd));
    }

    // SentencePiece-style vocabulary: <unk> <s> </s>, the 256 byte tokens, then pieces.
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<float> scores = {0.0f, 0.0f, 0.0f};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.push_back(buf);
        scores.push_back(0.0f);
        types.push_back(6);
    }
    for (int32_t i = int32_t(tokens.size()); i < sp.nVocab; ++i) {
        tokens.push_back("\xe2\x96\x81w" + std::to_string(i));  // "▁w<i>"
        scores.push_back(-float(i));
        types.push_back(1);
    }
    w.addString("tokenizer.ggml.model", "llama");
    w.add("tokenizer.ggml.tokens", gguf::makeStringArray(tokens));
    w.add("tokenizer.ggml.scores", gguf::makeF32Array(scores));
    w.add("tokenizer.ggml.token_type", gguf::makeI32Array(types));
    w.addU32("tokenizer.ggml.unknown_token_id", 0);
    w.addU32("tokenizer.ggml.bos_token_id", 1);
    w.addU32("tokenizer.ggml.eos_token_id", 2);
    w.addBool("tokenizer.ggml.add_bos_token", true);
    w.addBool("tokenizer.ggml.add_eos_token", false);

    const int64_t E = sp.nEmbd, F = sp.nFf, V = sp.nVocab, kv = int64_t(sp.nHeadKv) * hd, qd = int64_t(sp.nHead) * hd;
    const double s = 1.0 / std::sqrt(double(E));
    auto add = [&](const std::string& name, GgmlType t, int64_t cols, int64_t rows, double scale) {
        std::vector<int64_t> ne = rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
        w.addTensor(name, t, std::move(ne), randomTensor(rng, t, cols, rows, scale));
    };
    auto norm = [&](const std::string& name, int64_t n) { w.addTensor(name, GgmlType::F32, {n}, normWeights(rng, n)); };
    add("token_embd.weight", GgmlType::Q8_0, E, V, 1.0);
    norm("output_norm.weight", E);
    // A separate output matrix with a large scale keeps the top logits apart,
    // so greedy choices are not near-ties. (Gemma may also tie it to
    // token_embd; with random weights that only repeats the last token.)
    add("output.weight", GgmlType::F16, E, V, 0.5);
    for (int32_t il = 0; il < sp.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const bool odd = il % 2;  // alternate types between layers
        norm(p + "attn_norm.weight", E);
        add(p + "attn_q.weight", odd ? GgmlType::Q8_0 : GgmlType::Q4_K, E, qd, 2 * s);
        add(p + "attn_k.weight", odd ? GgmlType::Q4_K : GgmlType::Q8_0, E, kv, 2 * s);
        add(p + "attn_v.weight", GgmlType::Q4_K, E, kv, s);
        if (qwen2) {
            add(p + "attn_q.bias", GgmlType::F32, qd, 1, 0.1);
            add(p + "attn_k.bias", GgmlType::F32, kv, 1, 0.1);
            add(p + "attn_v.bias", GgmlType::F32, kv, 1, 0.1);
        }
        if (gemma3) {
            norm(p + "attn_q_norm.weight", hd);
            norm(p + "attn_k_norm.weight", hd);
        }
        add(p + "attn_output.weight", GgmlType::Q8_0, qd, E, s);
        if (gemma3) norm(p + "post_attention_norm.weight", E);
        norm(p + "ffn_norm.weight", E);
        add(p + "ffn_gate.weight", GgmlType::Q4_K, E, F, s);
        add(p + "ffn_up.weight", odd ? GgmlType::Q8_0 : GgmlType::Q6_K, E, F, s);
        add(p + "ffn_down.weight", GgmlType::Q4_K, F, E, 1.0 / std::sqrt(double(F)));
        if (gemma3) norm(p + "post_ffw_norm.weight", E);
    }
    return w.toBytes();
}

void writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path) {
    if (!spec.preset.empty()) {
        syntheticPresetWriter(syntheticPreset(spec.preset), spec.seed).writeFile(path);
        return;
    }
    const std::vector<uint8_t> bytes = makeSyntheticModel(spec);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error("cannot write " + path);
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !ok) throw Error("cannot write " + path);
}

} // namespace weir
