#pragma once
// Which tokens of the vocabulary keep the text a valid prefix of the grammar
// from a given automaton state: one walk over the vocabulary trie, carrying
// the automaton state down each branch and skipping a whole subtree as soon
// as its prefix is dead.
#include <cstdint>
#include <vector>

#include "engine/grammar/grammar_automaton.h"
#include "engine/grammar/vocabulary_trie.h"

namespace weir::grammar {

// words gets vocabSize bits (bit t of words[t / 64] set = token t allowed).
void computeTokenMask(GrammarAutomaton& automaton, const VocabularyTrie& trie, int32_t state,
                      std::vector<uint64_t>& words);

// The same answer token by token, each token's bytes run through the
// automaton on their own: the reference the trie walk is tested against.
void computeTokenMaskByToken(GrammarAutomaton& automaton, const VocabularyTrie& trie, int32_t state,
                             std::vector<uint64_t>& words);

} // namespace weir::grammar
