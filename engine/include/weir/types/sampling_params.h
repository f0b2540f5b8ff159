#pragma once
// How the next token is drawn from the logits (see the engine's sampler for
// the order the steps run in). Deterministic for a given seed.
#include <cstdint>

namespace weir {

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
};

} // namespace weir
