#pragma once
// A lazy output constraint (OutputConstraint::triggers, tool_choice "auto"):
// the reply is free until its text writes a trigger, then held to the call's
// grammar (document and closing marker) until that is complete, then free
// again. Watching costs a short string search per token; no mask is applied
// while free. Lives on the engine thread with its request.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_constraint.h"

namespace weir {
class Tokenizer;
}

namespace weir::grammar {

class LazyConstraint {
public:
    // callGrammar: what follows a trigger, up to and including the closing
    // marker. `tokenizer` gives each token's text (control tokens' too) to
    // look for the triggers in; it must outlive this object.
    LazyConstraint(std::shared_ptr<CompiledGrammar> callGrammar, std::vector<std::string> triggers,
                   const Tokenizer& tokenizer);

    // Free: leaves the logits as they are. Held: as GrammarConstraint::maskLogits
    // (end-of-generation tokens banned until the call is closed).
    bool maskLogits(float* logits, int32_t nVocab);
    // Free: looks for a trigger in the text so far (true). Held: advances the
    // call (false when the token breaks it; nothing changes then).
    bool accept(int32_t token);

    bool held() const { return call_ != nullptr; }
    // The last mask came from the grammar's cache (or none was needed: free).
    bool lastMaskWasCached() const { return !call_ || call_->lastMaskWasCached(); }
    size_t callsOpened() const { return opened_; }    // triggers met whose call was held
    size_t callsClosed() const { return closed_; }    // held calls that reached their closing marker

private:
    void watch(const std::string& text);

    std::shared_ptr<CompiledGrammar> grammar_;
    std::vector<std::string> triggers_;
    const Tokenizer& tokenizer_;
    size_t longestTrigger_ = 0;
    std::string tail_;                          // the free text's end, where a trigger may be starting
    std::unique_ptr<GrammarConstraint> call_;   // the call being held, null while free
    size_t opened_ = 0, closed_ = 0;
};

} // namespace weir::grammar
