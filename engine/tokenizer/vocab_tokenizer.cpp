#include "engine/tokenizer/vocab_tokenizer.h"

#include "engine/tokenizer/token_roles.h"
#include "weir/base/error.h"

#include <algorithm>

namespace weir::tok {

int parseByteToken(std::string_view text) {
    auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
    const int hi = hex(text[3]), lo = hex(text[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

VocabTokenizer::VocabTokenizer(Vocabulary vocab) : vocab_(std::move(vocab)) {
    const size_t n = vocab_.tokens.size();
    if (n == 0) throw Error("tokenizer: empty vocabulary");
    if (!vocab_.types.empty() && vocab_.types.size() != n)
        throw Error("tokenizer: " + std::to_string(vocab_.types.size()) + " token types for " + std::to_string(n) + " tokens");
    if (!vocab_.scores.empty() && vocab_.scores.size() != n)
        throw Error("tokenizer: " + std::to_string(vocab_.scores.size()) + " scores for " + std::to_string(n) + " tokens");
    if (vocab_.types.empty()) vocab_.types.assign(n, TokenType::Normal);

    index_.build(vocab_.tokens);  // a repeated text maps to its last id, as in llama.cpp

    auto valid = [&](TokenId id) { return id >= 0 && size_t(id) < n ? id : TokenId(-1); };
    bos_ = valid(vocab_.bos);
    eos_ = valid(vocab_.eos);
    addBos_ = vocab_.addBos && bos_ >= 0;

    // End of generation: the turn and text terminators found by name (made
    // Control), plus eos, eot and eom.
    eog_ = applyNamedTokenRoles(index_, vocab_.types);
    for (TokenId id : {eos_, valid(vocab_.eot), valid(vocab_.eom)})
        if (id >= 0) eog_.push_back(id);
    std::sort(eog_.begin(), eog_.end());
    eog_.erase(std::unique(eog_.begin(), eog_.end()), eog_.end());
    mediaMarkers_ = findMediaMarkers(index_, vocab_.types);

    std::vector<int32_t> allIds, userIds;
    std::vector<std::string_view> allTexts, userTexts;
    for (size_t i = 0; i < n; ++i) {
        const TokenType t = vocab_.types[i];
        if (t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined) {
            allIds.push_back(int32_t(i));
            allTexts.push_back(vocab_.tokens[i]);
            if (t == TokenType::UserDefined) {
                userIds.push_back(int32_t(i));
                userTexts.push_back(vocab_.tokens[i]);
            }
        }
    }
    specialAll_.build(allIds, allTexts);
    specialUserDefined_.build(userIds, userTexts);
}

std::vector<TokenId> VocabTokenizer::encode(std::string_view text, bool addBos, bool parseSpecial) const {
    std::vector<Fragment> fragments;
    (parseSpecial ? specialAll_ : specialUserDefined_).split(text, fragments);
    return encodeFragments(text, fragments, addBos);
}

std::vector<TokenId> VocabTokenizer::encodeMarked(const MarkedText& prompt, bool addBos) const {
    std::vector<Fragment> fragments;
    // User-defined tokens (Gemma's whitespace runs) match anywhere, as with
    // parseSpecial = false; control tokens only in trusted bytes.
    specialAll_.split(prompt.text, fragments, [&](size_t begin, size_t end, int32_t token) {
        return vocab_.types[size_t(token)] == TokenType::UserDefined || !prompt.untrusted.overlaps(begin, end);
    });
    return encodeFragments(prompt.text, fragments, addBos);
}

std::vector<TokenId> VocabTokenizer::encodeFragments(std::string_view text, const std::vector<Fragment>& fragments,
                                                     bool addBos) const {
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 2);
    if (addBos && addBos_) out.push_back(bos_);
    bool afterSpecial = true;
    for (const Fragment& f : fragments) {
        if (f.token >= 0) {
            out.push_back(f.token);
            afterSpecial = true;
        } else {
            encodeFragment(text.substr(f.begin, f.end - f.begin), afterSpecial, out);
            afterSpecial = false;
        }
    }
    if (addBos && vocab_.addEos && eos_ >= 0) out.push_back(eos_);
    return out;
}

std::string VocabTokenizer::tokenBytes(TokenId id, bool showSpecial) const {
    std::string out;
    if (id < 0 || id >= vocabSize()) return out;
    const std::string& text = vocab_.tokens[id];
    switch (vocab_.types[id]) {
    case TokenType::Control:
    case TokenType::Unknown:
        if (showSpecial) out = text;
        break;
    case TokenType::UserDefined:
        if (showSpecial || !std::binary_search(mediaMarkers_.begin(), mediaMarkers_.end(), id)) out = text;
        break;
    case TokenType::Byte:
        if (int b = parseByteToken(text); b >= 0) {
            out += char(b);
        } else {
            out = text;
        }
        break;
    case TokenType::Normal:
        appendNormalBytes(id, out);
        break;
    case TokenType::Unused:
    case TokenType::Undefined:
        break;
    }
    return out;
}

const std::string& VocabTokenizer::tokenText(TokenId id) const {
    static const std::string kEmpty;
    return id >= 0 && id < vocabSize() ? vocab_.tokens[id] : kEmpty;
}

TokenId VocabTokenizer::find(std::string_view text) const { return index_.find(text); }

TokenType VocabTokenizer::tokenType(TokenId id) const {
    return id >= 0 && id < vocabSize() ? vocab_.types[id] : TokenType::Undefined;
}

bool VocabTokenizer::isControl(TokenId id) const {
    const TokenType t = tokenType(id);
    return t == TokenType::Control || t == TokenType::Unknown;
}

} // namespace weir::tok
