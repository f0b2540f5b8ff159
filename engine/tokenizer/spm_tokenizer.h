#pragma once
// SentencePiece-style tokenizer (tokenizer.ggml.model = "llama": Gemma, Llama 2):
// spaces become U+2581, then adjacent pieces merge by best score, and what
// no token covers falls back to <0xNN> byte tokens.
#include "engine/tokenizer/vocab_tokenizer.h"

namespace weir::tok {

class SpmTokenizer final : public VocabTokenizer {
public:
    explicit SpmTokenizer(Vocabulary vocab);

protected:
    void encodeFragment(std::string_view text, bool afterSpecial, std::vector<TokenId>& out) const override;
    void appendNormalBytes(TokenId id, std::string& out) const override;

private:
    float score(TokenId id) const { return vocab_.scores.empty() ? 0.0f : vocab_.scores[id]; }
    TokenId byteTokens_[256];
    uint32_t maxTokenBytes_ = 0;  // longer pairs cannot be tokens: no lookup
};

} // namespace weir::tok
