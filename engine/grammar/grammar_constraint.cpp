// GrammarConstraint: the mask applied to a row of logits, and the advance.
#include "engine/grammar/grammar_constraint.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace weir::grammar {

GrammarConstraint::GrammarConstraint(std::shared_ptr<CompiledGrammar> grammar, std::vector<int32_t> endTokens)
    : grammar_(std::move(grammar)), endTokens_(std::move(endTokens)), state_(grammar_->automaton().initial()) {}

bool GrammarConstraint::maskLogits(float* logits, int32_t nVocab) {
    constexpr float kNever = -std::numeric_limits<float>::infinity();
    const bool ends = complete();
    // End tokens write no bytes, so the trie mask never allows them: kept
    // aside and put back when the document may end here.
    saved_.clear();
    if (ends)
        for (int32_t t : endTokens_) saved_.push_back(t >= 0 && t < nVocab ? logits[t] : kNever);
    const std::vector<uint64_t>& words = grammar_->mask(state_, &lastCached_);
    const int32_t covered = std::min<int32_t>(nVocab, grammar_->trie().vocabSize());
    int64_t allowed = 0;
    for (size_t w = 0; w * 64 < size_t(covered); ++w) {
        uint64_t bits = words[w];
        allowed += std::popcount(bits);
        if (bits == ~uint64_t(0)) continue;
        if (bits == 0 && (w + 1) * 64 <= size_t(covered)) {
            std::fill_n(logits + w * 64, 64, kNever);
            continue;
        }
        // Every cleared bit is a token that breaks the grammar.
        uint64_t banned = ~bits;
        while (banned) {
            const size_t t = w * 64 + size_t(std::countr_zero(banned));
            banned &= banned - 1;
            if (t < size_t(covered)) logits[t] = kNever;
        }
    }
    for (int32_t t = covered; t < nVocab; ++t) logits[t] = kNever;
    if (ends) {
        for (size_t i = 0; i < endTokens_.size(); ++i) {
            const int32_t t = endTokens_[i];
            if (t < 0 || t >= nVocab) continue;
            logits[t] = saved_[i];
            ++allowed;
        }
    }
    return allowed > 0;
}

bool GrammarConstraint::accept(int32_t token) {
    const VocabularyTrie& trie = grammar_->trie();
    if (token < 0 || token >= trie.vocabSize()) return false;
    const std::string_view bytes = trie.bytes(token);
    if (bytes.empty()) {
        // An end token: fine once the document is complete.
        for (int32_t t : endTokens_)
            if (t == token) return complete();
        return false;
    }
    return acceptBytes(bytes);
}

bool GrammarConstraint::acceptBytes(std::string_view bytes) {
    GrammarAutomaton& a = grammar_->automaton();
    int32_t s = state_;
    for (char c : bytes) {
        s = a.next(s, uint8_t(c));
        if (s == GrammarAutomaton::kDead) return false;
    }
    state_ = s;
    return true;
}

} // namespace weir::grammar
