// tokenLogprobs: the log-softmax of a row of logits, for the chosen token and
// the k most likely, checked against probabilities computed by hand.
#include "tests/support/weir_test.h"

#include <cmath>
#include <limits>
#include <vector>

#include "engine/sampling/token_logprobs.h"

using weir::tokenLogprobs;

WEIR_TEST(TokenLogprobs, logSoftmaxOfTheRow) {
    // Probabilities 0.5, 0.3, 0.15, 0.05 as logits shifted by 7: the shift must not matter.
    const std::vector<double> probs = {0.5, 0.3, 0.15, 0.05};
    std::vector<float> logits;
    for (double q : probs) logits.push_back(float(std::log(q) + 7.0));
    const weir::TokenLogprobs lp = tokenLogprobs(logits.data(), 4, 2, 3, nullptr);
    REQUIRE_EQ(lp.chosen.token, 2);
    REQUIRE(std::abs(lp.chosen.logprob - std::log(0.15)) < 1e-5);
    REQUIRE_EQ(lp.top.size(), size_t(3));
    REQUIRE_EQ(lp.top[0].token, 0);
    REQUIRE_EQ(lp.top[1].token, 1);
    REQUIRE_EQ(lp.top[2].token, 2);
    for (const auto& t : lp.top) REQUIRE(std::abs(t.logprob - std::log(probs[size_t(t.token)])) < 1e-5);
}

WEIR_TEST(TokenLogprobs, impossibleTokensAndLimits) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> logits = {1.f, -inf, std::nanf(""), 1.f};
    const weir::TokenLogprobs lp = tokenLogprobs(logits.data(), 4, 1, 100, nullptr);
    REQUIRE(lp.chosen.logprob == -inf);
    // Only the two possible tokens, tied: the lower id first, each at log(1/2).
    REQUIRE_EQ(lp.top.size(), size_t(2));
    REQUIRE_EQ(lp.top[0].token, 0);
    REQUIRE_EQ(lp.top[1].token, 3);
    REQUIRE(std::abs(lp.top[1].logprob - std::log(0.5)) < 1e-6);
    // No alternatives asked for: none computed.
    REQUIRE(tokenLogprobs(logits.data(), 4, 0, 0, nullptr).top.empty());
    // At most kMaxTopLogprobs.
    std::vector<float> wide(100, 0.f);
    REQUIRE_EQ(tokenLogprobs(wide.data(), 100, 5, 50, nullptr).top.size(), size_t(weir::kMaxTopLogprobs));
}
