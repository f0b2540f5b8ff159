#pragma once
// The tokenizer's inputs as plain data: what GGUF metadata (tokenizer.ggml.*)
// holds, with the defaults llama.cpp applies when a key is missing. Tests and
// tools can also fill one by hand.
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

namespace gguf { class GgufFile; }

using TokenId = int32_t;

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
    Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

struct Vocabulary {
    std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
    std::string pre;                   // tokenizer.ggml.pre: BPE pre-tokenizer ("llama-bpe", "qwen2", "default"...)
    std::vector<std::string> tokens;   // id -> text as stored
    std::vector<float> scores;         // SentencePiece merge scores (empty = all 0)
    std::vector<TokenType> types;      // empty = all Normal
    std::vector<std::string> merges;   // BPE: "left right", highest priority first
    TokenId bos = -1, eos = -1, unk = -1, eot = -1, eom = -1;
    bool addBos = false;               // tokenizer.ggml.add_bos_token
    bool addEos = false;               // tokenizer.ggml.add_eos_token
    bool addSpacePrefix = false;       // tokenizer.ggml.add_space_prefix ("hello" is tokenized as " hello")

    // Reads tokenizer.ggml.*; throws weir::Error naming the key when it is
    // missing or malformed (wrong type, arrays of different lengths, ids out of range).
    static Vocabulary fromGguf(const gguf::GgufFile& file);
};

} // namespace weir
