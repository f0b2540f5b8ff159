#pragma once
// Log probabilities of a generated token and of its most likely alternatives
// (OpenAI's logprobs / top_logprobs), carried by a Token event when the
// request asks for them (GenerateRequest::topLogprobs).
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

struct TokenLogprob {
    int32_t token = -1;
    float logprob = 0.0f;   // natural log; -inf for a token that cannot occur
    std::string bytes;      // the token's own bytes (may be part of a UTF-8 character)
};

struct TokenLogprobs {
    TokenLogprob chosen;             // the token that was generated
    std::vector<TokenLogprob> top;   // the most likely tokens, most likely first
};

// The most alternatives a request may ask for (OpenAI's limit).
inline constexpr int32_t kMaxTopLogprobs = 20;

} // namespace weir
