#pragma once
// What both tokenizer algorithms share: the token table and its text index,
// special-token splitting, BOS/EOS, token types and end-of-generation ids.
// Subclasses only turn a plain text fragment into ids and a normal token
// back into bytes.
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/special_token_splitter.h"
#include "engine/tokenizer/token_index.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocabulary.h"

namespace weir::tok {

// Byte value of a "<0xNN>" token text, or -1.
int parseByteToken(std::string_view text);

class VocabTokenizer : public Tokenizer {
public:
    explicit VocabTokenizer(Vocabulary vocab);

    std::vector<TokenId> encode(std::string_view text, bool addBos, bool parseSpecial) const override;
    std::vector<TokenId> encodeMarked(const MarkedText& prompt, bool addBos) const override;
    std::string tokenBytes(TokenId id, bool showSpecial) const override;
    int32_t vocabSize() const override { return int32_t(vocab_.tokens.size()); }
    const std::string& tokenText(TokenId id) const override;
    TokenId find(std::string_view text) const override;
    bool isControl(TokenId id) const override;
    TokenType tokenType(TokenId id) const;

protected:
    // Tokenizes one fragment of plain text (no special tokens in it).
    // `afterSpecial`: the fragment starts the text or follows a special token.
    virtual void encodeFragment(std::string_view text, bool afterSpecial, std::vector<TokenId>& out) const = 0;
    // Output bytes of a token of type Normal.
    virtual void appendNormalBytes(TokenId id, std::string& out) const = 0;

    Vocabulary vocab_;
    TokenIndex index_;  // over vocab_.tokens

private:
    std::vector<TokenId> encodeFragments(std::string_view text, const std::vector<Fragment>& fragments,
                                         bool addBos) const;

    SpecialTokenSplitter specialAll_;          // parseSpecial = true
    SpecialTokenSplitter specialUserDefined_;  // parseSpecial = false
    std::vector<TokenId> mediaMarkers_;        // sorted; shown like control tokens (token_roles.h)
};

} // namespace weir::tok
