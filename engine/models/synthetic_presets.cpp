// The full-size presets. Each one's metadata keys, tensor names, shapes and
// types are the real file's (tests/engine/models/synthetic_presets_test.cpp
// compares them with models/ where the real files are); the per-tensor types
// follow llama.cpp's quantizer rules for the file type, so an 8B preset needs
// no 8B file to copy from.
#include "engine/models/synthetic_presets.h"

#include <cmath>
#include <cstdio>
#include <functional>

#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"

namespace weir {

namespace {

using gguf::KeyValue;

class Metadata {
public:
    std::vector<KeyValue> kv;
    void add(std::string key, gguf::Value v) { kv.push_back(KeyValue{std::move(key), std::move(v)}); }
    void str(std::string key, std::string v) { add(std::move(key), gguf::makeString(std::move(v))); }
    void u32(std::string key, uint32_t v) { add(std::move(key), gguf::makeU32(v)); }
    void f32(std::string key, float v) { add(std::move(key), gguf::makeF32(v)); }
    void flag(std::string key, bool v) { add(std::move(key), gguf::makeBool(v)); }
};

// Token types as GGUF numbers them.
enum TokenType : int32_t { Normal = 1, Unknown = 2, Control = 3, Byte = 6 };

struct SpecialToken {
    int32_t id;
    std::string text;
    int32_t type;
};

// A SentencePiece-style ("llama") vocabulary of `size` tokens: the special
// tokens at their real ids, the 256 byte tokens <0x00>..<0xFF> (so any text
// tokenizes, by byte fallback) and "▁w<id>" pieces for every other id.
struct VocabularySpec {
    int32_t size = 0;
    std::vector<SpecialToken> specials;
    int32_t bos = 0, eos = 0, unk = 0, pad = -1;
    bool addBos = true;
    const char* pre = nullptr;  // tokenizer.ggml.pre, when the real file has one
};

void addVocabulary(Metadata& m, const VocabularySpec& v) {
    std::vector<std::string> tokens(size_t(v.size));
    std::vector<float> scores(size_t(v.size), 0.0f);
    std::vector<int32_t> types(size_t(v.size), Normal);
    std::vector<bool> taken(size_t(v.size), false);
    for (const SpecialToken& s : v.specials) {
        tokens[size_t(s.id)] = s.text;
        types[size_t(s.id)] = s.type;
        scores[size_t(s.id)] = s.type == Control ? -1000.0f : 0.0f;
        taken[size_t(s.id)] = true;
    }
    int32_t nextByte = 0;
    for (int32_t id = 0; id < v.size; ++id) {
        if (taken[size_t(id)]) continue;
        if (nextByte < 256) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", nextByte++);
            tokens[size_t(id)] = buf;
            types[size_t(id)] = Byte;
        } else {
            tokens[size_t(id)] = "\xe2\x96\x81w" + std::to_string(id);  // "▁w<id>"
            scores[size_t(id)] = -float(id);
        }
    }
    m.str("tokenizer.ggml.model", "llama");
    if (v.pre) m.str("tokenizer.ggml.pre", v.pre);
    m.add("tokenizer.ggml.tokens", gguf::makeStringArray(tokens));
    m.add("tokenizer.ggml.scores", gguf::makeF32Array(scores));
    m.add("tokenizer.ggml.token_type", gguf::makeI32Array(types));
    m.u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos));
    m.u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos));
    m.u32("tokenizer.ggml.unknown_token_id", uint32_t(v.unk));
    if (v.pad >= 0) m.u32("tokenizer.ggml.padding_token_id", uint32_t(v.pad));
    m.flag("tokenizer.ggml.add_bos_token", v.addBos);
    m.flag("tokenizer.ggml.add_eos_token", false);
    m.flag("tokenizer.ggml.add_space_prefix", false);
}

enum class Role { TokenEmbd, Output, AttnQ, AttnK, AttnV, AttnOutput, FfnGate, FfnUp, FfnDown };

// Picks a tensor's type from its role, layer and row length.
using TypeRule = std::function<GgmlType(Role role, int32_t layer, int64_t cols)>;

struct Shape {
    int32_t nLayer = 0;
    int64_t nEmbd = 0, nFf = 0, nHead = 0, nHeadKv = 0, headDim = 0, nVocab = 0;
    bool tiedOutput = false;   // no output.weight: the logits use token_embd
    bool gemmaNorms = false;   // Q/K norms and post-attention/post-FFN norms
    // Standard deviation of the embedding and output matrices, times
    // sqrt(nEmbd): 2 puts the logits' spread at about 2.
    double embeddingSpread = 2.0;
};

// The tensors of a llama-style decoder. Matrices get values of standard
// deviation 1/sqrt(row length), so a product keeps the scale of its input;
// the embedding and output matrix Shape::embeddingSpread times that.
std::vector<SyntheticPresetTensor> decoderTensors(const Shape& s, const TypeRule& typeOf) {
    std::vector<SyntheticPresetTensor> out;
    const int64_t qd = s.nHead * s.headDim, kvd = s.nHeadKv * s.headDim;
    auto matrix = [&](std::string name, Role role, int32_t layer, int64_t cols, int64_t rows, double scale) {
        out.push_back({std::move(name), typeOf(role, layer, cols), {cols, rows}, scale});
    };
    auto norm = [&](std::string name, int64_t n) { out.push_back({std::move(name), GgmlType::F32, {n}, 1.0}); };
    const double embScale = s.embeddingSpread / std::sqrt(double(s.nEmbd));
    matrix("token_embd.weight", Role::TokenEmbd, -1, s.nEmbd, s.nVocab, embScale);
    norm("output_norm.weight", s.nEmbd);
    if (!s.tiedOutput) matrix("output.weight", Role::Output, -1, s.nEmbd, s.nVocab, embScale);
    for (int32_t il = 0; il < s.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const double inE = 1.0 / std::sqrt(double(s.nEmbd));
        norm(p + "attn_norm.weight", s.nEmbd);
        matrix(p + "attn_q.weight", Role::AttnQ, il, s.nEmbd, qd, inE);
        matrix(p + "attn_k.weight", Role::AttnK, il, s.nEmbd, kvd, inE);
        matrix(p + "attn_v.weight", Role::AttnV, il, s.nEmbd, kvd, inE);
        if (s.gemmaNorms) {
            norm(p + "attn_q_norm.weight", s.headDim);
            norm(p + "attn_k_norm.weight", s.headDim);
        }
        matrix(p + "attn_output.weight", Role::AttnOutput, il, qd, s.nEmbd, 1.0 / std::sqrt(double(qd)));
        if (s.gemmaNorms) norm(p + "post_attention_norm.weight", s.nEmbd);
        norm(p + "ffn_norm.weight", s.nEmbd);
        matrix(p + "ffn_gate.weight", Role::FfnGate, il, s.nEmbd, s.nFf, inE);
        matrix(p + "ffn_up.weight", Role::FfnUp, il, s.nEmbd, s.nFf, inE);
        matrix(p + "ffn_down.weight", Role::FfnDown, il, s.nFf, s.nEmbd, 1.0 / std::sqrt(double(s.nFf)));
        if (s.gemmaNorms) norm(p + "post_ffw_norm.weight", s.nEmbd);
    }
    return out;
}

// llama.cpp's quantizer: a k-quant needs rows of whole 256-element blocks;
// other rows take a 32-element type of about the same size.
GgmlType fitRow(GgmlType t, int64_t cols) {
    if (cols % 256 == 0) return t;
    switch (t) {
    case GgmlType::Q4_K: return GgmlType::Q5_0;
    case GgmlType::Q5_K: return GgmlType::Q5_1;
    case GgmlType::Q6_K: return GgmlType::Q8_0;
    default: return t;
    }
}

// The layers llama.cpp's quantizer gives more bits in its _M mixes: the
// first and last eighth, and every third in between.
bool moreBits(int32_t layer, int32_t nLayer) {
    return layer < nLayer / 8 || layer >= 7 * nLayer / 8 || (layer - nLayer / 8) % 3 == 2;
}

// Q4_K_M as llama.cpp's quantizer assigns it: Q4_K, with Q6_K for the
// output matrix (also the embedding when it is tied to it) and for attn_v
// and ffn_down in the layers moreBits picks.
TypeRule q4KMedium(int32_t nLayer, bool tied) {
    return [nLayer, tied](Role role, int32_t layer, int64_t cols) {
        GgmlType t = GgmlType::Q4_K;
        if (role == Role::Output || (tied && role == Role::TokenEmbd)) t = GgmlType::Q6_K;
        else if ((role == Role::AttnV || role == Role::FfnDown) && moreBits(layer, nLayer)) t = GgmlType::Q6_K;
        return fitRow(t, cols);
    };
}

// Q4_1 (file type 3): every matrix Q4_1 but the output one, which gets Q6_K.
TypeRule q4One(bool tied) {
    return [tied](Role role, int32_t, int64_t cols) {
        if (role == Role::Output || (tied && role == Role::TokenEmbd)) return fitRow(GgmlType::Q6_K, cols);
        return GgmlType::Q4_1;
    };
}

void generalKeys(Metadata& m, const std::string& arch, const std::string& preset, uint32_t fileType) {
    m.str("general.architecture", arch);
    m.str("general.type", "model");
    m.str("general.name", "Weir synthetic " + preset);
    m.u32("general.quantization_version", 2);
    m.u32("general.file_type", fileType);
}

// Gemma 3 270M (instruction-tuned), Q4_K_M: 18 layers, 640 wide, 4 heads
// of 256 with one KV head, 262,144 tokens, tied output.
SyntheticPreset gemma3_270m() {
    SyntheticPreset p;
    p.name = "gemma3-270m-q4_k_m";
    Metadata m;
    generalKeys(m, "gemma3", p.name, 15);
    m.u32("gemma3.context_length", 32768);
    m.u32("gemma3.embedding_length", 640);
    m.u32("gemma3.block_count", 18);
    m.u32("gemma3.feed_forward_length", 2048);
    m.u32("gemma3.attention.head_count", 4);
    m.f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    m.u32("gemma3.attention.key_length", 256);
    m.u32("gemma3.attention.value_length", 256);
    m.f32("gemma3.rope.freq_base", 1e6f);
    m.u32("gemma3.attention.sliding_window", 512);
    m.u32("gemma3.attention.head_count_kv", 1);
    VocabularySpec v;
    v.size = 262144;
    v.specials = {{0, "<pad>", Control}, {1, "<eos>", Control}, {2, "<bos>", Control}, {3, "<unk>", Control},
                  {105, "<start_of_turn>", Control}, {106, "<end_of_turn>", Control}};
    v.bos = 2, v.eos = 1, v.unk = 3, v.pad = 0, v.addBos = true, v.pre = "default";
    addVocabulary(m, v);
    p.metadata = std::move(m.kv);
    // Gemma scales the embedding by sqrt(nEmbd) on the way in, and the output
    // is the same matrix: at the usual spread the input token's own row would
    // outweigh every layer and each step would repeat it. A quarter of that
    // lets the layers choose (and makes a wrong layer show in the choices).
    Shape s{18, 640, 2048, 4, 1, 256, 262144, true, true, 0.5};
    p.tensors = decoderTensors(s, q4KMedium(s.nLayer, true));
    return p;
}

// SmolLM2 135M Instruct, Q4_1: 30 layers, 576 wide, 9 heads of 64 with 3
// KV heads, 49,152 tokens, tied output. (The real file's tokenizer is a
// BPE; this one is SentencePiece-style, with ChatML's control tokens at
// their real ids.)
SyntheticPreset smollm2_135m() {
    SyntheticPreset p;
    p.name = "smollm2-135m-q4_1";
    Metadata m;
    generalKeys(m, "llama", p.name, 3);
    m.u32("llama.block_count", 30);
    m.u32("llama.context_length", 8192);
    m.u32("llama.embedding_length", 576);
    m.u32("llama.feed_forward_length", 1536);
    m.u32("llama.attention.head_count", 9);
    m.u32("llama.attention.head_count_kv", 3);
    m.f32("llama.rope.freq_base", 100000.0f);
    m.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    m.u32("llama.vocab_size", 49152);
    m.u32("llama.rope.dimension_count", 64);
    VocabularySpec v;
    v.size = 49152;
    v.specials = {{0, "<|endoftext|>", Control}, {1, "<|im_start|>", Control}, {2, "<|im_end|>", Control}};
    v.bos = 1, v.eos = 2, v.unk = 0, v.pad = 2, v.addBos = false;
    addVocabulary(m, v);
    p.metadata = std::move(m.kv);
    Shape s{30, 576, 1536, 9, 3, 64, 49152, true, false};
    p.tensors = decoderTensors(s, q4One(true));
    return p;
}

// Llama 3 8B Instruct, Q4_K_M: 32 layers, 4096 wide, 14336 FFN, 32 heads of
// 128 with 8 KV heads, 128,256 tokens, separate output matrix, RoPE base
// 500,000, context 8192. (The real tokenizer is a BPE; this one is
// SentencePiece-style with Llama 3's control tokens at their real ids, so
// the built-in llama3 chat format applies.)
SyntheticPreset llama3_8b() {
    SyntheticPreset p;
    p.name = "llama3-8b-q4_k_m";
    Metadata m;
    generalKeys(m, "llama", p.name, 15);
    m.u32("llama.block_count", 32);
    m.u32("llama.context_length", 8192);
    m.u32("llama.embedding_length", 4096);
    m.u32("llama.feed_forward_length", 14336);
    m.u32("llama.attention.head_count", 32);
    m.u32("llama.attention.head_count_kv", 8);
    m.f32("llama.rope.freq_base", 500000.0f);
    m.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    m.u32("llama.vocab_size", 128256);
    m.u32("llama.rope.dimension_count", 128);
    VocabularySpec v;
    v.size = 128256;
    v.specials = {{0, "<unk>", Unknown}, {128000, "<|begin_of_text|>", Control}, {128001, "<|end_of_text|>", Control},
                  {128006, "<|start_header_id|>", Control}, {128007, "<|end_header_id|>", Control},
                  {128009, "<|eot_id|>", Control}};
    // The rest of the top 256 ids are reserved control tokens, as in the real vocabulary.
    for (int32_t id = 128002, n = 0; id < 128256; ++id)
        if (id != 128006 && id != 128007 && id != 128009)
            v.specials.push_back({id, "<|reserved_special_token_" + std::to_string(n++) + "|>", Control});
    v.bos = 128000, v.eos = 128009, v.unk = 0, v.addBos = true;
    addVocabulary(m, v);
    p.metadata = std::move(m.kv);
    Shape s{32, 4096, 14336, 32, 8, 128, 128256, false, false};
    p.tensors = decoderTensors(s, q4KMedium(s.nLayer, false));
    return p;
}

} // namespace

const std::vector<SyntheticPresetName>& syntheticPresetNames() {
    static const std::vector<SyntheticPresetName> names = {
        {"gemma3-270m-q4_k_m", "Gemma 3 270M, Q4_K_M (253 MB)"},
        {"smollm2-135m-q4_1", "SmolLM2 135M Instruct, Q4_1 (98 MB)"},
        {"llama3-8b-q4_k_m", "Llama 3 8B Instruct, Q4_K_M (4.9 GB)"},
    };
    return names;
}

SyntheticPreset syntheticPreset(const std::string& name) {
    for (const SyntheticPresetName& n : syntheticPresetNames()) {
        if (name != n.name) continue;
        SyntheticPreset p = name == "gemma3-270m-q4_k_m" ? gemma3_270m()
                          : name == "smollm2-135m-q4_1"  ? smollm2_135m()
                                                         : llama3_8b();
        p.description = n.description;
        return p;
    }
    std::string known;
    for (const SyntheticPresetName& n : syntheticPresetNames()) known += std::string(known.empty() ? "" : ", ") + n.name;
    throw Error("unknown synthetic model preset '" + name + "' (presets: " + known + ")");
}

} // namespace weir
