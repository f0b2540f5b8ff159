#pragma once
// One request's place in its output constraint: masks the logits before each
// draw and advances over the bytes of each token drawn. Lives on the engine
// thread with its request.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/grammar/compiled_grammar.h"

namespace weir::grammar {

class GrammarConstraint {
public:
    // endTokens: the end-of-generation ids, allowed once the document is
    // complete (none when the request does not stop at them).
    GrammarConstraint(std::shared_ptr<CompiledGrammar> grammar, std::vector<int32_t> endTokens);

    // Sets the logit of every token that would break the grammar to -inf
    // (ids past the tokenizer's vocabulary included). Returns false when no
    // token at all is allowed (the logits are then all -inf).
    bool maskLogits(float* logits, int32_t nVocab);
    // Advances over the token's bytes. False when the token breaks the
    // grammar; the state is then unchanged.
    bool accept(int32_t token);
    // Advances over text that is not one token (what a lazy constraint's
    // trigger token wrote after the trigger). False, state unchanged, when
    // the text breaks the grammar.
    bool acceptBytes(std::string_view bytes);
    // The text so far is a whole document.
    bool complete() const { return automaton().isComplete(state_); }
    // Complete, and nothing may follow: the request is over.
    bool finished() const { return complete() && !automaton().canContinue(state_); }

    bool lastMaskWasCached() const { return lastCached_; }
    const CompiledGrammar& grammar() const { return *grammar_; }

private:
    const GrammarAutomaton& automaton() const { return grammar_->automaton(); }

    std::shared_ptr<CompiledGrammar> grammar_;
    std::vector<int32_t> endTokens_;
    std::vector<float> saved_;
    int32_t state_;
    bool lastCached_ = false;
};

} // namespace weir::grammar
