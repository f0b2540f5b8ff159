// Token masks: the trie walk, and the token-by-token reference.
#include "engine/grammar/token_mask.h"

namespace weir::grammar {

void computeTokenMask(GrammarAutomaton& automaton, const VocabularyTrie& trie, int32_t state,
                      std::vector<uint64_t>& words) {
    words.assign((size_t(trie.vocabSize()) + 63) / 64, 0);
    // states[d]: the automaton state after the first d bytes of the current branch.
    std::vector<int32_t> states(size_t(trie.maxDepth()) + 1);
    states[0] = state;
    const int32_t n = trie.nodeCount();
    for (int32_t node = 1; node < n;) {
        const uint16_t d = trie.depth(node);
        const int32_t s = automaton.next(states[d - 1u], trie.byte(node));
        if (s == GrammarAutomaton::kDead) {
            node = trie.subtreeEnd(node);
            continue;
        }
        states[d] = s;
        for (const int32_t* t = trie.tokensBegin(node); t != trie.tokensEnd(node); ++t)
            words[size_t(*t) >> 6] |= uint64_t(1) << (*t & 63);
        ++node;
    }
}

void computeTokenMaskByToken(GrammarAutomaton& automaton, const VocabularyTrie& trie, int32_t state,
                             std::vector<uint64_t>& words) {
    words.assign((size_t(trie.vocabSize()) + 63) / 64, 0);
    for (int32_t t = 0; t < trie.vocabSize(); ++t) {
        const std::string_view b = trie.bytes(t);
        if (b.empty()) continue;
        int32_t s = state;
        for (char c : b) {
            s = automaton.next(s, uint8_t(c));
            if (s == GrammarAutomaton::kDead) break;
        }
        if (s != GrammarAutomaton::kDead) words[size_t(t) >> 6] |= uint64_t(1) << (t & 63);
    }
}

} // namespace weir::grammar
