#pragma once
// Turns a row of logits into the next token. Deterministic for a given seed.
#include <cstdint>
#include <random>
#include <vector>

namespace weir {

struct SamplingParams {
    float temperature = 0.8f;     // <= 0: greedy
    int32_t topK = 40;            // <= 0: off
    float topP = 0.95f;           // >= 1: off
    float minP = 0.05f;           // <= 0: off
    float repeatPenalty = 1.0f;   // 1: off (llama.cpp semantics: divide positive logits, multiply negative)
    int32_t repeatLastN = 64;     // window of recent tokens the penalties look at
    float presencePenalty = 0.0f;
    float frequencyPenalty = 0.0f;
    uint64_t seed = 0;            // same seed, same output
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);
    // `history` is the tokens so far (prompt + generated) for the penalties.
    // `logits` is modified in place.
    int32_t sample(std::vector<float>& logits, const std::vector<int32_t>& history);
    int32_t sample(float* logits, int32_t nVocab, const std::vector<int32_t>& history);
    const SamplingParams& params() const { return params_; }

private:
    SamplingParams params_;
    std::mt19937_64 rng_;
};

} // namespace weir
