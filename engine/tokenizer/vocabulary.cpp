#include "engine/tokenizer/vocabulary.h"

#include "engine/gguf/gguf_file.h"
#include "weir/base/error.h"

namespace weir {
namespace {

// Reads an optional token id key. An id outside the vocabulary (or not an
// integer) is refused: llama.cpp only warns and keeps its default, and the
// model then runs with the wrong BOS or EOS.
void readId(const gguf::GgufFile& f, const char* key, size_t nTokens, TokenId& id) {
    const gguf::Value* v = f.find(key);
    if (!v) return;
    const auto i = v->type == gguf::ValueType::Bool ? std::nullopt : v->asInt();
    if (!i || *i < 0 || uint64_t(*i) >= nTokens)
        throw Error(f.path() + ": " + key + " = " + v->toDisplayString() + ": must be a token id below the " +
                    std::to_string(nTokens) + " tokens of tokenizer.ggml.tokens");
    id = TokenId(*i);
}

} // namespace

Vocabulary Vocabulary::fromGguf(const gguf::GgufFile& f) {
    Vocabulary v;
    const std::string where = f.path() + ": ";
    auto model = f.getString("tokenizer.ggml.model");
    if (!model) throw Error(where + "no tokenizer in this file (tokenizer.ggml.model is missing)");
    v.model = *model;
    v.pre = f.getString("tokenizer.ggml.pre").value_or("");

    auto tokens = f.getStringArray("tokenizer.ggml.tokens");
    if (!tokens || tokens->empty()) throw Error(where + "tokenizer.ggml.tokens is missing or empty");
    v.tokens = std::move(*tokens);
    const size_t n = v.tokens.size();

    if (f.find("tokenizer.ggml.scores")) {
        auto scores = f.getFloatArray("tokenizer.ggml.scores");
        if (!scores || scores->size() < n)
            throw Error(where + "tokenizer.ggml.scores has " + std::to_string(scores ? scores->size() : 0) +
                        " entries for " + std::to_string(n) + " tokens");
        scores->resize(n);
        v.scores = std::move(*scores);
    }
    if (f.find("tokenizer.ggml.token_type")) {
        auto types = f.getIntArray("tokenizer.ggml.token_type");
        if (!types || types->size() < n)
            throw Error(where + "tokenizer.ggml.token_type has " + std::to_string(types ? types->size() : 0) +
                        " entries for " + std::to_string(n) + " tokens");
        v.types.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const int64_t t = (*types)[i];
            v.types[i] = (t >= 0 && t <= 6) ? TokenType(t) : TokenType::Undefined;
        }
    }

    // Defaults when keys are absent, as llama.cpp sets them.
    if (v.model == "llama") {
        v.bos = 1; v.eos = 2; v.unk = 0;
        v.addBos = true;
        v.addSpacePrefix = true;
    } else if (v.model == "gpt2") {
        auto merges = f.getStringArray("tokenizer.ggml.merges");
        if (!merges) throw Error(where + "byte-level BPE vocabulary without tokenizer.ggml.merges");
        v.merges = std::move(*merges);
        v.addBos = v.pre == "llama3" || v.pre == "llama-v3" || v.pre == "llama-bpe";
    } else {
        throw Error(where + "unsupported tokenizer.ggml.model '" + v.model + "' (supported: llama, gpt2)");
    }
    for (TokenId* id : {&v.bos, &v.eos, &v.unk})
        if (*id >= TokenId(n)) *id = -1;

    readId(f, "tokenizer.ggml.bos_token_id", n, v.bos);
    readId(f, "tokenizer.ggml.eos_token_id", n, v.eos);
    readId(f, "tokenizer.ggml.unknown_token_id", n, v.unk);
    readId(f, "tokenizer.ggml.eot_token_id", n, v.eot);
    readId(f, "tokenizer.ggml.eom_token_id", n, v.eom);
    TokenId unused = -1;  // read only to refuse a corrupt file
    readId(f, "tokenizer.ggml.padding_token_id", n, unused);
    readId(f, "tokenizer.ggml.seperator_token_id", n, unused);
    readId(f, "tokenizer.ggml.cls_token_id", n, unused);
    readId(f, "tokenizer.ggml.mask_token_id", n, unused);
    if (auto b = f.getBool("tokenizer.ggml.add_bos_token")) v.addBos = *b;
    if (auto b = f.getBool("tokenizer.ggml.add_eos_token")) v.addEos = *b;
    if (v.model == "llama") {
        if (auto b = f.getBool("tokenizer.ggml.add_space_prefix")) v.addSpacePrefix = *b;
    }
    return v;
}

} // namespace weir
