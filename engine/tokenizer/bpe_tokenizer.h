#pragma once
// Byte-level BPE (tokenizer.ggml.model = "gpt2": Llama 3, Qwen 2/3, GPT-2):
// a regex pre-tokenizer splits the text into words, each word's bytes are
// mapped to printable characters (GPT-2's bytes_to_unicode), and adjacent
// pieces merge in the order of tokenizer.ggml.merges.
#include "engine/tokenizer/pair_map.h"
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
    struct Merge {
        int32_t rank;
        TokenId result;
    };
    static uint64_t pairKey(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

    // Working memory for one encodeFragment call, reused from word to word.
    struct Symbol {
        TokenId id;
        int32_t prev, next;
        bool alive;
    };
    struct Candidate {
        int32_t rank, left, right;
        TokenId leftId, rightId, result;
    };
    struct Scratch {
        std::string mapped;
        std::vector<Symbol> symbols;
        std::vector<Candidate> heap;
    };
    void encodeWord(std::string_view word, Scratch& scratch, std::vector<TokenId>& out) const;

    PreTokenizer pre_;
    bool ignoreMerges_;                          // a word that is a whole token skips merging (Llama 3)
    PairMap<Merge> merges_;                      // (left id, right id) -> rank and merged id
    std::string byteChars_[256];                 // byte -> its stand-in character, UTF-8
    TokenId byteTokens_[256];
    std::vector<int16_t> charToByte_;            // stand-in code point -> byte, -1 if none
};

} // namespace weir::tok
