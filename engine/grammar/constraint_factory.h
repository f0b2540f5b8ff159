#pragma once
// Turns a request's OutputConstraint into a GrammarConstraint. Owns what is
// built once per model (the vocabulary trie, on first use) and keeps the
// most recently used compiled grammars, so requests with the same schema
// share one automaton and its cached masks. Engine thread only.
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_constraint.h"
#include "engine/grammar/lazy_constraint.h"
#include "engine/grammar/vocabulary_trie.h"
#include "weir/types/output_constraint.h"

namespace weir {
class Tokenizer;
}

namespace weir::grammar {

// The grammar a lazy constraint holds after its trigger: at most one space
// or newline, the document (up to kMaxDocumentsPerCall of them, one per
// line: several calls in one block), at most one space or newline, the
// closing marker.
constexpr int kMaxDocumentsPerCall = 8;
Grammar lazyCallGrammar(const OutputConstraint& constraint);

class ConstraintFactory {
public:
    static constexpr size_t kMaxCachedGrammars = 16;
    // A shared automaton past this many states is retired (the requests
    // using it keep it; new ones start a fresh one): bounds memory when
    // json_object meets ever new nestings.
    static constexpr size_t kMaxSharedStates = 20000;

    explicit ConstraintFactory(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

    // Null for Kind::None. Throws weir::Error naming what is wrong with the
    // constraint (a schema that does not parse, an unsupported keyword).
    // endTokens: the ids that may end the reply once the document is complete.
    // A lazy constraint (constraint.lazy()) is refused here: see makeLazy.
    std::unique_ptr<GrammarConstraint> make(const OutputConstraint& constraint, std::vector<int32_t> endTokens);
    // For constraint.lazy(): the call's grammar armed by its triggers.
    std::unique_ptr<LazyConstraint> makeLazy(const OutputConstraint& constraint);

    std::shared_ptr<const VocabularyTrie> trie();  // built on first use
    double trieBuildMs() const { return trieBuildMs_; }

private:
    std::shared_ptr<CompiledGrammar> compiled(const OutputConstraint& constraint);

    const Tokenizer& tokenizer_;
    std::shared_ptr<const VocabularyTrie> trie_;
    double trieBuildMs_ = 0;
    std::list<std::pair<std::string, std::shared_ptr<CompiledGrammar>>> cache_;  // most recent first
};

} // namespace weir::grammar
