#include "engine/sampling/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace weir {

namespace {

bool possible(float l) { return !std::isnan(l) && l != -std::numeric_limits<float>::infinity(); }

} // namespace

TokenLogprobs tokenLogprobs(const float* logits, int32_t nVocab, int32_t chosen, int32_t top,
                            const Tokenizer* tokenizer) {
    constexpr float kImpossible = -std::numeric_limits<float>::infinity();
    // log-sum-exp relative to the largest logit, so nothing overflows.
    float maxLogit = kImpossible;
    for (int32_t i = 0; i < nVocab; ++i)
        if (possible(logits[i])) maxLogit = std::max(maxLogit, std::min(logits[i], std::numeric_limits<float>::max()));
    double sum = 0.0;
    if (maxLogit != kImpossible)
        for (int32_t i = 0; i < nVocab; ++i)
            if (possible(logits[i])) sum += std::exp(double(std::min(logits[i], std::numeric_limits<float>::max())) - maxLogit);
    const double logSum = sum > 0 ? double(maxLogit) + std::log(sum) : 0.0;
    auto logprobOf = [&](int32_t id) -> float {
        if (id < 0 || id >= nVocab || !possible(logits[id]) || sum <= 0) return kImpossible;
        return float(double(std::min(logits[id], std::numeric_limits<float>::max())) - logSum);
    };
    auto entry = [&](int32_t id) {
        TokenLogprob t;
        t.token = id;
        t.logprob = logprobOf(id);
        if (tokenizer && id >= 0 && id < nVocab) t.bytes = tokenizer->tokenBytes(id, true);
        return t;
    };

    TokenLogprobs out;
    out.chosen = entry(chosen);
    const size_t k = size_t(std::clamp(top, 0, kMaxTopLogprobs));
    if (k == 0) return out;
    // The k best in one pass: a heap whose front is the worst kept so far.
    struct Candidate {
        float logit;
        int32_t id;
    };
    const auto better = [](const Candidate& a, const Candidate& b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    std::vector<Candidate> heap;
    heap.reserve(k);
    for (int32_t i = 0; i < nVocab; ++i) {
        if (!possible(logits[i])) continue;
        const Candidate c{logits[i], i};
        if (heap.size() < k) {
            heap.push_back(c);
            std::push_heap(heap.begin(), heap.end(), better);
        } else if (better(c, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), better);
            heap.back() = c;
            std::push_heap(heap.begin(), heap.end(), better);
        }
    }
    std::sort(heap.begin(), heap.end(), better);
    for (const Candidate& c : heap) out.top.push_back(entry(c.id));
    return out;
}

} // namespace weir
