// LazyConstraint: trigger search while free, the call's grammar while held.
#include "engine/grammar/lazy_constraint.h"

#include <algorithm>

#include "engine/tokenizer/tokenizer.h"

namespace weir::grammar {

LazyConstraint::LazyConstraint(std::shared_ptr<CompiledGrammar> callGrammar, std::vector<std::string> triggers,
                               const Tokenizer& tokenizer)
    : grammar_(std::move(callGrammar)), triggers_(std::move(triggers)), tokenizer_(tokenizer) {
    for (const std::string& t : triggers_) longestTrigger_ = std::max(longestTrigger_, t.size());
}

bool LazyConstraint::maskLogits(float* logits, int32_t nVocab) {
    return call_ ? call_->maskLogits(logits, nVocab) : true;
}

bool LazyConstraint::accept(int32_t token) {
    if (!call_) {
        watch(tokenizer_.tokenBytes(token, true));
        return true;
    }
    if (!call_->accept(token)) return false;
    if (call_->finished()) {
        call_.reset();
        ++closed_;
    }
    return true;
}

void LazyConstraint::watch(const std::string& text) {
    tail_ += text;
    // The earliest trigger that ends in this token's text.
    size_t end = std::string::npos;
    for (const std::string& t : triggers_) {
        const size_t at = t.empty() ? std::string::npos : tail_.find(t);
        if (at != std::string::npos) end = std::min(end, at + t.size());
    }
    if (end == std::string::npos) {
        // Keep what could still be the start of a trigger.
        const size_t keep = longestTrigger_ > 0 ? longestTrigger_ - 1 : 0;
        if (tail_.size() > keep) tail_.erase(0, tail_.size() - keep);
        return;
    }
    const std::string after = tail_.substr(end);
    tail_.clear();
    // The trigger's token may already have written the call's first bytes.
    auto call = std::make_unique<GrammarConstraint>(grammar_, std::vector<int32_t>{});
    if (!call->acceptBytes(after)) {
        watch(after);  // not a call this grammar can hold: free, and a later trigger may still come
        return;
    }
    ++opened_;
    if (call->finished()) {
        ++closed_;  // the whole call came in that one token
        return;
    }
    call_ = std::move(call);
}

} // namespace weir::grammar
