#pragma once
// Byte-level BPE (tokenizer.ggml.model = "gpt2": Llama 3, Qwen 2/3, GPT-2):
// a regex pre-tokenizer splits the text into words, each word's bytes are
// mapped to printable characters (GPT-2's bytes_to_unicode), and adjacent
// pieces merge in the order of tokenizer.ggml.merges.
#include <unordered_map>

#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/vocab_tokenizer.h"

namespace weir::tok {

class BpeTokenizer final : public VocabTokenizer {
public:
    explicit BpeTokenizer(Vocabulary vocab);

protected:
    void encodeFragment(std::string_view text, bool afterSpecial, std::vector<TokenId>& out) const override;
    void appendNormalBytes(TokenId id, std::string& out) const override;

private:
    void encodeWord(std::string_view word, std::vector<TokenId>& out) const;

    struct Merge {
        int32_t rank;
        TokenId result;
    };
    static uint64_t pairKey(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

    PreTokenizer pre_;
    bool ignoreMerges_;                          // a word that is a whole token skips merging (Llama 3)
    std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and merged id
    std::string byteChars_[256];                 // byte -> its stand-in character, UTF-8
    TokenId byteTokens_[256];
    std::vector<int16_t> charToByte_;            // stand-in code point -> byte, -1 if none
};

} // namespace weir::tok
