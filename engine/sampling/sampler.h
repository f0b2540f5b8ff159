#pragma once
// Turns a row of logits into the next token. Deterministic for a given seed.
//
// Order: penalties, then logit bias (on the raw logits, written back in place) -> greedy if
// temperature <= 0 -> top-k -> temperature -> softmax -> top-p -> min-p -> draw.
// Temperature comes before top-p/min-p (as in HF transformers and vLLM), so
// those filters act on the distribution that is actually sampled.
#include <cstdint>
#include <random>
#include <vector>

#include "weir/types/sampling_params.h"

namespace weir {

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);
    // `history` is the tokens so far (prompt + generated) for the penalties;
    // ids outside [0, nVocab) are ignored. `logits` is modified in place: after
    // the call it holds the penalised logits. Never throws; returns -1 only
    // for an empty vocabulary. NaN and -inf logits are never drawn
    // unless every logit is one (then the lowest such id is returned).
    int32_t sample(std::vector<float>& logits, const std::vector<int32_t>& history);
    int32_t sample(float* logits, int32_t nVocab, const std::vector<int32_t>& history);
    const SamplingParams& params() const { return params_; }

private:
    struct Candidate {
        float p;     // logit, then probability
        int32_t id;
    };
    void applyPenalties(float* logits, int32_t nVocab, const std::vector<int32_t>& history);
    void applyBias(float* logits, int32_t nVocab) const;
    double uniform();  // [0, 1) from rng_, independent of the standard library's distributions

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<Candidate> cands_;          // reused between calls (vocab-sized)
    std::vector<int32_t> window_;           // reused: recent tokens for the penalties
};

} // namespace weir
