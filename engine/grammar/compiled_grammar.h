#pragma once
// A grammar ready for constrained sampling: its automaton and the token mask
// of every automaton state a request has stood in, kept so that a state met
// again (inside a string, the same field in the next request with the same
// schema) costs a lookup instead of a trie walk. Shared by the requests that
// use the same constraint; used on one thread at a time (the engine thread).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_automaton.h"
#include "engine/grammar/vocabulary_trie.h"

namespace weir::grammar {

class CompiledGrammar {
public:
    // Masks kept at most (about 32 KB each for a 262k vocabulary); past it the
    // cache starts over.
    static constexpr size_t kMaxCachedMasks = 512;

    CompiledGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const VocabularyTrie> trie)
        : automaton_(std::move(grammar)), trie_(std::move(trie)) {}

    GrammarAutomaton& automaton() { return automaton_; }
    const VocabularyTrie& trie() const { return *trie_; }
    // The allowed tokens from `state` (vocabSize bits); `cached` tells
    // whether it came from the cache.
    const std::vector<uint64_t>& mask(int32_t state, bool* cached = nullptr);
    size_t cachedMasks() const { return masks_.size(); }

private:
    GrammarAutomaton automaton_;
    std::shared_ptr<const VocabularyTrie> trie_;
    std::unordered_map<int32_t, std::vector<uint64_t>> masks_;
};

} // namespace weir::grammar
