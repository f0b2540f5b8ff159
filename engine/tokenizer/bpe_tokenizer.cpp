#include "engine/tokenizer/bpe_tokenizer.h"

#include "engine/tokenizer/utf8.h"

#include <algorithm>

namespace weir::tok {

BpeTokenizer::BpeTokenizer(Vocabulary vocab)
    : VocabTokenizer(std::move(vocab)), pre_(preTokenizerFromName(vocab_.pre)) {
    ignoreMerges_ = pre_ == PreTokenizer::Llama3;

    // GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
    // the other 68 bytes take code points 256, 257, ... in byte order.
    charToByte_.assign(256 + 68, -1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const int cp = printable ? b : next++;
        appendUtf8(byteChars_[b], uint32_t(cp));
        charToByte_[cp] = int16_t(b);
        byteTokens_[b] = find(byteChars_[b]);
    }

    // Merge ranks keyed by the ids of both sides. A merge whose sides or
    // result are not tokens can never apply to pieces that are tokens, so it
    // is dropped.
    merges_.reserve(vocab_.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
        const std::string& m = vocab_.merges[rank];
        const size_t space = m.find(' ', 1);
        if (space == std::string::npos) continue;
        const std::string_view left = std::string_view(m).substr(0, space);
        const std::string_view right = std::string_view(m).substr(space + 1);
        const TokenId l = find(left), r = find(right);
        if (l < 0 || r < 0) continue;
        joined.assign(left).append(right);
        const TokenId result = find(joined);
        if (result < 0) continue;
        merges_.emplace(pairKey(l, r), Merge{int32_t(rank), result});  // a repeated pair keeps its first rank
    }
    std::vector<std::string>().swap(vocab_.merges);  // the table above is all we need
}

void BpeTokenizer::encodeFragment(std::string_view text, bool, std::vector<TokenId>& out) const {
    // Work on code points: malformed bytes become U+FFFD, as in llama.cpp.
    const std::vector<uint32_t> cps = decodeUtf8(text);
    std::vector<uint32_t> words;
    preTokenize(pre_, cps, words);
    std::string word;
    Scratch scratch;
    size_t start = 0;
    for (uint32_t len : words) {
        word.clear();
        for (size_t i = start; i < start + len; ++i) appendUtf8(word, cps[i]);
        start += len;
        encodeWord(word, scratch, out);
    }
}

void BpeTokenizer::encodeWord(std::string_view word, Scratch& scratch, std::vector<TokenId>& out) const {
    if (ignoreMerges_) {
        std::string& mapped = scratch.mapped;
        mapped.clear();
        for (char c : word) mapped += byteChars_[static_cast<uint8_t>(c)];
        if (TokenId id = index_.find(mapped); id >= 0) {
            out.push_back(id);
            return;
        }
    }

    // Lowest rank first; among equal ranks the left-most pair.
    auto later = [](const Candidate& a, const Candidate& b) {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    };

    const int32_t n = int32_t(word.size());
    std::vector<Symbol>& symbols = scratch.symbols;
    symbols.resize(size_t(n));
    for (int32_t i = 0; i < n; ++i)
        symbols[i] = {byteTokens_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1, true};

    std::vector<Candidate>& heap = scratch.heap;
    heap.clear();
    auto tryAdd = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const TokenId l = symbols[left].id, r = symbols[right].id;
        if (l < 0 || r < 0) return;
        const Merge* m = merges_.find(pairKey(l, r));
        if (!m) return;
        heap.push_back({m->rank, left, right, l, r, m->result});
        std::push_heap(heap.begin(), heap.end(), later);
    };
    for (int32_t i = 1; i < n; ++i) tryAdd(i - 1, i);

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const Candidate c = heap.back();
        heap.pop_back();
        Symbol& left = symbols[c.left];
        Symbol& right = symbols[c.right];
        // Stale if either side has changed since the pair was queued.
        if (!left.alive || !right.alive || left.id != c.leftId || right.id != c.rightId) continue;
        left.id = c.result;
        right.alive = false;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        tryAdd(left.prev, c.left);
        tryAdd(c.left, left.next);
    }

    for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = symbols[i].next)
        if (symbols[i].id >= 0) out.push_back(symbols[i].id);
}

void BpeTokenizer::appendNormalBytes(TokenId id, std::string& out) const {
    const std::string& text = vocab_.tokens[id];
    for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const uint32_t cp = decodeUtf8(text, pos);
        if (cp < charToByte_.size() && charToByte_[cp] >= 0) {
            out += char(charToByte_[cp]);
        } else {
            out.append(text, start, pos - start);  // not a byte stand-in: keep as written
        }
    }
}

} // namespace weir::tok
