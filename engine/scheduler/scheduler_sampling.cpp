// The scheduler's sampling: turning rows of logits into tokens.
//
// With many conversations decoding at once, drawing every row on the engine
// thread after the forward pass is a serial stretch that more threads do not
// shorten (with a 262,144-token vocabulary, a row's draw and log
// probabilities read the whole row). So a step's plain rows are drawn on the
// backend's host pool, one row per item, and only what touches shared state
// stays on the engine thread:
// - Constraint masks: requests with one schema share a compiled grammar,
//   whose automaton and mask cache grow as masks are asked for (not thread
//   safe), so masks are applied before the parallel part, in plan order.
// - Taking a token (afterToken: constraint advance, detokenizer, stop
//   strings, events, finishing, the cache): after it, in plan order.
// Drawing touches only the request's own sampler (its RNG), its row, and the
// row's raw copy, so each request draws what it would have drawn alone: the
// tokens are bit for bit those of drawing one row after another.
#include <algorithm>
#include <exception>

#include "engine/models/model.h"
#include "engine/sampling/token_logprobs.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/scheduler.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

namespace {

bool constrained(const ActiveRequest& r) { return r.constraint || r.lazyConstraint; }

} // namespace

bool Scheduler::sampleRow(ActiveRequest& r, float* logits, int32_t nVocab) {
    Draw d;
    d.request = &r;
    d.logits = logits;
    // No other draw is in flight: every row of the step has been drawn.
    if (r.topLogprobs >= 0) {
        rawLogits_.resize(size_t(nVocab));
        d.raw = rawLogits_.data();
    }
    if (constrained(r)) maskRow(d, nVocab);
    drawRow(d, nVocab);
    return takeDraw(d);
}

void Scheduler::drawRows(std::vector<Draw>& draws, int32_t nVocab) {
    size_t rawRows = 0;
    for (const Draw& d : draws) rawRows += d.request->topLogprobs >= 0;
    rawLogits_.resize(rawRows * size_t(nVocab));
    size_t next = 0;
    for (Draw& d : draws)
        if (d.request->topLogprobs >= 0) d.raw = rawLogits_.data() + size_t(nVocab) * next++;
    for (Draw& d : draws)
        if (constrained(*d.request)) maskRow(d, nVocab);

    kernels::ThreadPool* pool = opt_.sampleInParallel ? model_.backend().hostPool() : nullptr;
    if (!pool || pool->size() < 2 || draws.size() < 2) {
        for (Draw& d : draws) drawRow(d, nVocab);
        return;
    }
    pool->parallelFor(int64_t(draws.size()), [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) drawRow(draws[size_t(i)], nVocab);
    });
    ++parallelSampling_.jobs;
    parallelSampling_.rows += draws.size();
}

void Scheduler::maskRow(Draw& d, int32_t nVocab) {
    // The log probabilities are of the row as the model produced it.
    if (d.raw) std::copy_n(d.logits, nVocab, d.raw);
    d.masked = true;
    d.refused = constrainLogits(*d.request, d.logits, nVocab);
}

void Scheduler::drawRow(Draw& d, int32_t nVocab) const {
    if (!d.refused.empty()) return;
    ActiveRequest& r = *d.request;
    try {
        if (d.raw && !d.masked) std::copy_n(d.logits, nVocab, d.raw);
        d.token = r.sampler.sample(d.logits, nVocab, r.tokens);
        if (d.raw) d.logprobs = tokenLogprobs(d.raw, nVocab, d.token, r.topLogprobs, tokenizer_);
    } catch (...) {
        d.failure = std::current_exception();
    }
}

bool Scheduler::takeDraw(Draw& d) {
    ActiveRequest& r = *d.request;
    // Where drawing the row one by one would have thrown or ended it.
    if (d.failure) std::rethrow_exception(d.failure);
    if (!d.refused.empty()) {
        r.error = ErrorCode::Internal;
        finish(r, Event::Kind::Error, FinishReason::Stop, d.refused);
        return false;
    }
    r.pendingLogprobs = std::move(d.logprobs);
    afterToken(r, d.token);
    return !r.finished;
}

} // namespace weir
