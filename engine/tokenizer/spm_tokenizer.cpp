#include "engine/tokenizer/spm_tokenizer.h"

#include "engine/tokenizer/utf8.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace weir::tok {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

struct Symbol {
    uint32_t start, len;
    int32_t prev, next;
};

struct Bigram {
    float score;
    int32_t left, right;
    uint32_t len;  // bytes of the merged piece, to detect stale entries
};

// Highest score first; among equal scores the left-most pair.
struct BigramOrder {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

} // namespace

SpmTokenizer::SpmTokenizer(Vocabulary vocab) : VocabTokenizer(std::move(vocab)) {
    stripLeadingSpace_ = vocab_.addSpacePrefix;
    for (const std::string& t : vocab_.tokens) maxTokenBytes_ = std::max(maxTokenBytes_, uint32_t(t.size()));
    const TokenId unk = vocab_.unk >= 0 && vocab_.unk < vocabSize() ? vocab_.unk : -1;
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        TokenId id = find(name);
        if (id < 0) {
            const char raw = char(b);
            id = find(std::string_view(&raw, 1));
        }
        byteTokens_[b] = id >= 0 ? id : unk;
    }
}

void SpmTokenizer::encodeFragment(std::string_view fragment, bool afterSpecial, std::vector<TokenId>& out) const {
    // Escape spaces; add_space_prefix puts one in front of text that starts
    // the input or follows a special token.
    std::string text;
    text.reserve(fragment.size() + 8);
    if (vocab_.addSpacePrefix && afterSpecial) text += kSpaceMark;
    for (char c : fragment) {
        if (c == ' ') text += kSpaceMark; else text += c;
    }

    // One symbol per UTF-8 character (a cut-off sequence keeps what is left).
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const size_t len = std::min(utf8SequenceLength(static_cast<uint8_t>(text[pos])), text.size() - pos);
        const int32_t index = int32_t(symbols.size());
        symbols.push_back({uint32_t(pos), uint32_t(len), index - 1, pos + len == text.size() ? -1 : index + 1});
        pos += len;
    }

    std::vector<Bigram> storage;
    storage.reserve(symbols.size());
    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{}, std::move(storage));
    auto tryAdd = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const uint32_t len = symbols[left].len + symbols[right].len;
        if (len > maxTokenBytes_) return;
        const TokenId id = index_.find(std::string_view(text).substr(symbols[left].start, len));
        if (id < 0) return;
        queue.push({score(id), left, right, len});
    };
    for (size_t i = 1; i < symbols.size(); ++i) tryAdd(int32_t(i - 1), int32_t(i));

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol& left = symbols[b.left];
        Symbol& right = symbols[b.right];
        // Either side already merged into something else: the entry is stale.
        if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
        left.len += right.len;
        right.len = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        tryAdd(left.prev, b.left);
        tryAdd(b.left, left.next);
    }

    for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
        const std::string_view piece = std::string_view(text).substr(symbols[i].start, symbols[i].len);
        const TokenId id = index_.find(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char c : piece) {
            const TokenId byteId = byteTokens_[static_cast<uint8_t>(c)];
            if (byteId >= 0) out.push_back(byteId);
        }
    }
}

void SpmTokenizer::appendNormalBytes(TokenId id, std::string& out) const {
    const std::string& text = vocab_.tokens[id];
    for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
            out += ' ';
            pos += kSpaceMark.size();
        } else {
            out += text[pos++];
        }
    }
}

} // namespace weir::tok
