#pragma once
// How the next token is drawn from the logits (see the engine's sampler for
// the order the steps run in). Deterministic for a given seed.
#include <cstdint>
#include <vector>

namespace weir {

// A bias added to one token's logit before sampling (OpenAI's logit_bias).
struct LogitBias {
    int32_t token = 0;
    float bias = 0.0f;            // <= kLogitBan: the token is never drawn
};
inline constexpr float kLogitBan = -100.0f;

struct SamplingParams {
    float temperature = 0.8f;     // <= 0: greedy
    int32_t topK = 40;            // <= 0: off
    float topP = 0.95f;           // >= 1: off
    float minP = 0.05f;           // <= 0: off
    float repeatPenalty = 1.0f;   // 1: off (llama.cpp semantics: divide positive logits, multiply negative)
    int32_t repeatLastN = 64;     // window of recent tokens the penalties look at (0: none, < 0: all)
    float presencePenalty = 0.0f;   // OpenAI semantics: logit -= count * frequency + (count > 0) * presence
    float frequencyPenalty = 0.0f;
    uint64_t seed = 0;            // same seed, same output
    // Added after the penalties, before greedy/top-k; ids outside the
    // vocabulary are ignored (a client checks them against Engine::vocabSize).
    std::vector<LogitBias> logitBias;
};

} // namespace weir
