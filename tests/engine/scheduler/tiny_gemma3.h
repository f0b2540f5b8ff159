#pragma once
// Writes a tiny random-weight Gemma 3 GGUF for fast scheduler tests: the real
// architecture (sliding-window layers with one global layer, q/k norms, tied
// output), a small window, F32 weights and a SentencePiece-style vocabulary
// with Gemma's control tokens, byte fallback and whole-word pieces, plus the
// Gemma 3 chat template when the test data has it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.h"

namespace weir::test {

struct TinyGemma3Spec {
    int32_t nLayer = 6;      // layers 0..4 slide, layer 5 is global (Gemma's period of 6)
    int32_t nEmbd = 64;
    int32_t nFf = 128;
    int32_t nHead = 2;
    int32_t nHeadKv = 1;
    int32_t headDim = 32;
    int32_t window = 32;
    int32_t context = 8192;
    uint64_t seed = 7;
    std::string chatTemplate;  // Jinja source; empty: Gemma 3's from the test data, when there
    std::vector<std::string> extraControlTokens;  // more control tokens after Gemma's (e.g. FIM markers)
    std::vector<std::string> extraUserDefinedTokens;  // after those (e.g. <start_of_image>)
};

inline std::vector<std::string> tinyVocabWords() {
    return {"the", "operator", "shall", "record", "every", "change", "to", "a", "ledger", "before",
            "approval", "of", "budget", "requests", "is", "given", "within", "three", "working", "days",
            "and", "any", "exception", "must", "be", "reported", "with", "its", "reason", "reviewer",
            "signs", "each", "entry", "policy", "applies", "across", "all", "regions", "when", "teams",
            "migrate", "services", "between", "clusters", "backups", "are", "verified", "weekly", "by",
            "restoring", "one", "sample", "into", "an", "isolated", "environment", "tools", "may", "call",
            "external", "systems", "only", "through", "audited", "gateways", "responses", "stay", "brief",
            "Clause", "Conversation", "turn", "what", "does", "clause", "require", "user", "model", "You",
            "are", "careful", "assistant", "for", "operations", "team", "Follow", "below", "hello", "world",
            "status", "ok", "rows", "call", "tool_output", "system", "prompt", "answer", "question"};
}

inline std::string readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Writes the model to `path`; throws weir::Error if the writer refuses.
inline void writeTinyGemma3(const std::string& path, const TinyGemma3Spec& spec = {}) {
    using namespace weir::gguf;
    GgufWriter w;
    const std::string a = "gemma3.";
    w.addString("general.architecture", "gemma3");
    w.addString("general.name", "tiny-gemma3-test");
    w.addU32("general.file_type", 0);
    w.addU32(a + "context_length", uint32_t(spec.context));
    w.addU32(a + "embedding_length", uint32_t(spec.nEmbd));
    w.addU32(a + "block_count", uint32_t(spec.nLayer));
    w.addU32(a + "feed_forward_length", uint32_t(spec.nFf));
    w.addU32(a + "attention.head_count", uint32_t(spec.nHead));
    w.addU32(a + "attention.head_count_kv", uint32_t(spec.nHeadKv));
    w.addU32(a + "attention.key_length", uint32_t(spec.headDim));
    w.addU32(a + "attention.value_length", uint32_t(spec.headDim));
    w.addF32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
    w.addU32(a + "attention.sliding_window", uint32_t(spec.window));
    w.addF32(a + "rope.freq_base", 1000000.0f);

    // Vocabulary: control tokens first (Gemma's ids), then bytes, characters, word pieces.
    std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"};
    std::vector<int32_t> types = {3, 3, 3, 2, 3, 3};
    for (const std::string& t : spec.extraControlTokens) {
        tokens.push_back(t);
        types.push_back(3);
    }
    for (const std::string& t : spec.extraUserDefinedTokens) {
        tokens.push_back(t);
        types.push_back(4);
    }
    std::vector<float> scores(tokens.size(), 0.0f);
    std::set<std::string> seen(tokens.begin(), tokens.end());
    auto add = [&](const std::string& t, int32_t type, float score) {
        if (!seen.insert(t).second) return;
        tokens.push_back(t);
        types.push_back(type);
        scores.push_back(score);
    };
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        add(buf, 6, 0.0f);
    }
    const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's space
    add(space, 1, -1.0f);
    add("\n", 1, -1.0f);
    for (char c = 0x21; c < 0x7f; ++c) add(std::string(1, c), 1, -2.0f);
    for (const std::string& word : tinyVocabWords()) {
        for (size_t n = 1; n <= word.size(); ++n) {
            add(space + word.substr(0, n), 1, float(n));
            if (n >= 2) add(word.substr(0, n), 1, float(n) - 0.5f);
        }
    }
    w.add("tokenizer.ggml.model", makeString("llama"));
    w.add("tokenizer.ggml.pre", makeString("default"));
    w.add("tokenizer.ggml.tokens", makeStringArray(tokens));
    w.add("tokenizer.ggml.scores", makeF32Array(scores));
    w.add("tokenizer.ggml.token_type", makeI32Array(types));
    w.addU32("tokenizer.ggml.bos_token_id", 2);
    w.addU32("tokenizer.ggml.eos_token_id", 1);
    w.addU32("tokenizer.ggml.unknown_token_id", 3);
    w.addU32("tokenizer.ggml.padding_token_id", 0);
    w.addBool("tokenizer.ggml.add_bos_token", true);
    w.addBool("tokenizer.ggml.add_eos_token", false);
    w.addBool("tokenizer.ggml.add_space_prefix", false);
    if (!spec.chatTemplate.empty()) {
        w.addString("tokenizer.chat_template", spec.chatTemplate);
    } else if (const char* data = std::getenv("WEIR_TEST_DATA")) {
        const std::string tmpl = readTextFile(std::string(data) + "/templates/gemma3.jinja");
        if (!tmpl.empty()) w.addString("tokenizer.chat_template", tmpl);
    }

    const int64_t E = spec.nEmbd, V = int64_t(tokens.size()), F = spec.nFf, hd = spec.headDim;
    const int64_t qDim = int64_t(spec.nHead) * hd, kvDim = int64_t(spec.nHeadKv) * hd;
    std::mt19937_64 rng(spec.seed);
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float scale) {
        std::normal_distribution<float> dist(0.0f, scale / std::sqrt(float(cols)));
        std::vector<float> v(static_cast<size_t>(cols * rows));
        for (float& x : v) x = dist(rng);
        w.addTensor(name, kernels::GgmlType::F32, {cols, rows}, v.data(), v.size() * sizeof(float));
    };
    auto norm = [&](const std::string& name, int64_t n, float centre = 1.0f) {
        std::uniform_real_distribution<float> dist(0.8f * centre, 1.2f * centre);
        std::vector<float> v(static_cast<size_t>(n));
        for (float& x : v) x = dist(rng);
        w.addTensor(name, kernels::GgmlType::F32, {n}, v.data(), v.size() * sizeof(float));
    };
    // Random weights make a poor language model: with tied embeddings and
    // layers too weak to move the residual stream, it only repeats its input
    // token. An untied output projection and strong post-norms make the next
    // token depend on the context, so outputs vary and sampling matters;
    // logits spread by ~4 keep greedy ties unlikely.
    matrix("token_embd.weight", E, V, 8.0f);
    matrix("output.weight", E, V, 4.0f);
    norm("output_norm.weight", E);
    for (int32_t il = 0; il < spec.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        norm(p + "attn_norm.weight", E);
        matrix(p + "attn_q.weight", E, qDim, 1.0f);
        matrix(p + "attn_k.weight", E, kvDim, 1.0f);
        matrix(p + "attn_v.weight", E, kvDim, 1.0f);
        matrix(p + "attn_output.weight", qDim, E, 1.0f);
        norm(p + "attn_q_norm.weight", hd);
        norm(p + "attn_k_norm.weight", hd);
        norm(p + "post_attention_norm.weight", E, 6.0f);
        norm(p + "ffn_norm.weight", E);
        matrix(p + "ffn_gate.weight", E, F, 1.0f);
        matrix(p + "ffn_up.weight", E, F, 1.0f);
        matrix(p + "ffn_down.weight", F, E, 1.0f);
        norm(p + "post_ffw_norm.weight", E, 6.0f);
    }
    w.writeFile(path);
}

} // namespace weir::test
