// The scheduler's side of output constraints (structured output): the grammar
// is compiled when a request is taken in, its mask goes over the request's
// logits before the sampler draws, and each drawn token advances it. A fault
// in the grammar machinery ends that one request with an Error, never the
// batch.
#include <exception>

#include "engine/grammar/constraint_factory.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"

namespace weir {

std::string Scheduler::attachConstraint(ActiveRequest& r) {
    if (r.constraintSpec.kind == OutputConstraint::Kind::None) return {};
    if (!tokenizer_) return "constrained output needs the model's tokenizer, and this engine has none";
    try {
        if (!constraints_) constraints_ = std::make_unique<grammar::ConstraintFactory>(*tokenizer_);
        if (r.constraintSpec.lazy()) {
            r.lazyConstraint = constraints_->makeLazy(r.constraintSpec);
            return {};
        }
        std::vector<int32_t> endTokens;
        if (r.stopAtEndOfGeneration) endTokens = tokenizer_->endOfGeneration();
        r.constraint = constraints_->make(r.constraintSpec, std::move(endTokens));
    } catch (const std::exception& e) {
        return std::string("output constraint refused: ") + e.what();
    }
    return {};
}

std::string Scheduler::constrainLogits(ActiveRequest& r, float* logits, int32_t nVocab) {
    try {
        if (r.lazyConstraint ? r.lazyConstraint->maskLogits(logits, nVocab) : r.constraint->maskLogits(logits, nVocab))
            return {};
        return "the output constraint allows no token of this vocabulary here";
    } catch (const std::exception& e) {
        return std::string("the output constraint failed: ") + e.what();
    }
}

bool Scheduler::advanceConstraint(ActiveRequest& r, int32_t token) {
    std::string why;
    try {
        if (r.lazyConstraint ? r.lazyConstraint->accept(token) : r.constraint->accept(token)) return true;
        why = "token " + std::to_string(token) + " was drawn although the output constraint does not allow it";
    } catch (const std::exception& e) {
        why = std::string("the output constraint failed: ") + e.what();
    }
    r.error = ErrorCode::Internal;
    finish(r, Event::Kind::Error, FinishReason::Stop, why);
    return false;
}

} // namespace weir
