// CompiledGrammar: masks computed on first use per automaton state.
#include "engine/grammar/compiled_grammar.h"

#include "engine/grammar/token_mask.h"

namespace weir::grammar {

const std::vector<uint64_t>& CompiledGrammar::mask(int32_t state, bool* cached) {
    if (auto it = masks_.find(state); it != masks_.end()) {
        if (cached) *cached = true;
        return it->second;
    }
    if (cached) *cached = false;
    if (masks_.size() >= kMaxCachedMasks) masks_.clear();
    std::vector<uint64_t> words;
    computeTokenMask(automaton_, *trie_, state, words);
    return masks_.emplace(state, std::move(words)).first->second;
}

} // namespace weir::grammar
