// Token sampling: penalties, greedy, top-k, temperature, top-p, min-p, draw.
#include "engine/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/ops.h"

namespace weir {

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

int32_t Sampler::sample(std::vector<float>& logits, const std::vector<int32_t>& history) {
    return sample(logits.data(), int32_t(std::min<size_t>(logits.size(), size_t(std::numeric_limits<int32_t>::max()))),
                  history);
}

double Sampler::uniform() {
    return double(rng_() >> 11) * 0x1.0p-53;  // 53 random bits -> [0, 1)
}

void Sampler::applyPenalties(float* logits, int32_t nVocab, const std::vector<int32_t>& history) {
    const SamplingParams& p = params_;
    if (p.repeatPenalty == 1.0f && p.presencePenalty == 0.0f && p.frequencyPenalty == 0.0f) return;
    if (p.repeatLastN == 0 || history.empty()) return;
    const size_t n = p.repeatLastN < 0 ? history.size() : std::min(history.size(), size_t(p.repeatLastN));
    window_.assign(history.end() - long(n), history.end());
    std::sort(window_.begin(), window_.end());
    // Each distinct token once, with how often it occurs in the window.
    for (size_t i = 0; i < window_.size();) {
        size_t j = i;
        while (j < window_.size() && window_[j] == window_[i]) ++j;
        const int32_t tok = window_[i];
        const float count = float(j - i);
        i = j;
        if (tok < 0 || tok >= nVocab) continue;
        float& l = logits[tok];
        if (p.repeatPenalty != 1.0f) l = l <= 0.0f ? l * p.repeatPenalty : l / p.repeatPenalty;
        l -= count * p.frequencyPenalty + p.presencePenalty;
    }
}

void Sampler::applyBias(float* logits, int32_t nVocab) const {
    for (const LogitBias& b : params_.logitBias) {
        if (b.token < 0 || b.token >= nVocab) continue;
        // A ban is -inf, not a large negative number: then even greedy
        // decoding over a row of very negative logits cannot pick it.
        logits[b.token] = b.bias <= kLogitBan ? -std::numeric_limits<float>::infinity() : logits[b.token] + b.bias;
    }
}

namespace {

// Lowest id among the largest logits, skipping NaN; 0 if all are NaN.
int32_t argmax(const float* logits, int32_t n) { return int32_t(kernels::argmaxF32(logits, n)); }

} // namespace

int32_t Sampler::sample(float* logits, int32_t nVocab, const std::vector<int32_t>& history) {
    if (nVocab <= 0 || !logits) return -1;
    applyPenalties(logits, nVocab, history);
    applyBias(logits, nVocab);
    const SamplingParams& p = params_;
    if (!(p.temperature > 0.0f)) return argmax(logits, nVocab);

    // Candidates: tokens with a finite logit (+inf is clamped so the softmax stays finite).
    // Ties are broken by id everywhere so the result never depends on sort internals.
    const auto higher = [](const Candidate& a, const Candidate& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); };
    const auto usable = [](float& l) {
        if (std::isnan(l) || l == -std::numeric_limits<float>::infinity()) return false;
        if (l == std::numeric_limits<float>::infinity()) l = std::numeric_limits<float>::max();
        return true;
    };
    cands_.clear();
    if (p.topK > 0 && p.topK < nVocab) {
        // Top-k in one pass with a heap of the k best so far (its front is the worst of them):
        // cheaper than materialising the whole vocabulary when k is small.
        const size_t k = size_t(p.topK);
        cands_.reserve(k);
        for (int32_t i = 0; i < nVocab; ++i) {
            float l = logits[i];
            if (!usable(l)) continue;
            const Candidate c{l, i};
            if (cands_.size() < k) {
                cands_.push_back(c);
                std::push_heap(cands_.begin(), cands_.end(), higher);
            } else if (higher(c, cands_.front())) {
                std::pop_heap(cands_.begin(), cands_.end(), higher);
                cands_.back() = c;
                std::push_heap(cands_.begin(), cands_.end(), higher);
            }
        }
    } else {
        cands_.reserve(size_t(nVocab));
        for (int32_t i = 0; i < nVocab; ++i) {
            float l = logits[i];
            if (usable(l)) cands_.push_back({l, i});
        }
    }
    if (cands_.empty()) return argmax(logits, nVocab);

    // Temperature and softmax, relative to the largest logit so nothing overflows.
    float maxLogit = cands_[0].p;
    for (const Candidate& c : cands_) maxLogit = std::max(maxLogit, c.p);
    const float invT = 1.0f / p.temperature;
    double sum = 0.0;
    for (Candidate& c : cands_) {
        c.p = std::exp((c.p - maxLogit) * invT);
        sum += c.p;
    }
    for (Candidate& c : cands_) c.p = float(c.p / sum);

    // min-p keeps tokens with p >= minP * max p: a prefix of the probability order, like
    // the top-p nucleus, so "top-p, then min-p" is the shorter of the two prefixes. The
    // min-p set is found first (one pass) so top-p only has to order the survivors.
    size_t limit = cands_.size();
    if (p.minP > 0.0f) {
        float maxP = 0.0f;
        for (const Candidate& c : cands_) maxP = std::max(maxP, c.p);
        const float threshold = std::min(p.minP * maxP, maxP);  // minP > 1 still keeps the top token
        limit = size_t(std::partition(cands_.begin(), cands_.end(), [&](const Candidate& c) { return c.p >= threshold; }) -
                       cands_.begin());
    }
    if (p.topP < 1.0f) {
        // Smallest prefix (by probability, over the whole distribution) whose mass reaches
        // topP. Only as much is ordered as needed (the nucleus is usually a few dozen tokens
        // out of 262144): each round selects the next chunk of best tokens and sorts it.
        size_t sorted = 0, chunk = 64;
        double cum = 0.0;
        while (sorted < limit) {
            const size_t end = std::min(limit, sorted + chunk);
            if (end < limit)
                std::nth_element(cands_.begin() + long(sorted), cands_.begin() + long(end),
                                 cands_.begin() + long(limit), higher);
            std::sort(cands_.begin() + long(sorted), cands_.begin() + long(end), higher);
            size_t i = sorted;
            for (; i < end; ++i) {
                cum += cands_[i].p;
                if (cum >= double(p.topP)) break;
            }
            if (i < end) {
                limit = i + 1;
                break;
            }
            sorted = end;
            chunk *= 4;
        }
    }
    cands_.resize(limit);

    double total = 0.0;
    for (const Candidate& c : cands_) total += c.p;
    const double u = uniform() * total;
    double acc = 0.0;
    for (const Candidate& c : cands_) {
        acc += c.p;
        if (u < acc) return c.id;
    }
    return cands_.back().id;  // rounding left u at the very end
}

} // namespace weir
