// Sampler: greedy and top-k=1 pick the argmax; temperature, top-k, top-p and
// min-p give the distributions their definitions predict (checked over many
// seeded draws: exactly which tokens can appear, frequencies within generous
// bounds); penalties change logits as specified; seeds make runs repeatable.
#include "tests/support/weir_test.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "engine/sampling/sampler.h"

using weir::Sampler;
using weir::SamplingParams;

namespace {

// Params with every filter off: plain softmax sampling at temperature 1.
SamplingParams plain(uint64_t seed = 42) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0.0f;
    p.seed = seed;
    return p;
}

std::vector<float> logitsFromProbs(const std::vector<double>& probs) {
    std::vector<float> l;
    for (double q : probs) l.push_back(q > 0 ? float(std::log(q)) : -INFINITY);
    return l;
}

// Draws `n` tokens (fresh copy of the logits each time) and returns frequency per token.
std::map<int32_t, double> frequencies(const SamplingParams& p, const std::vector<float>& logits, int n) {
    Sampler s(p);
    std::map<int32_t, double> f;
    for (int i = 0; i < n; ++i) {
        std::vector<float> l = logits;
        f[s.sample(l, {})] += 1.0 / n;
    }
    return f;
}

std::set<int32_t> keys(const std::map<int32_t, double>& m) {
    std::set<int32_t> k;
    for (const auto& [t, f] : m) k.insert(t);
    return k;
}

// Frequencies match `expected` (token -> probability) within `tol`, and no other token appears.
bool matchesDistribution(const std::map<int32_t, double>& got, const std::map<int32_t, double>& expected, double tol,
                         std::string& why) {
    std::set<int32_t> want;
    for (const auto& [t, q] : expected)
        if (q > 0) want.insert(t);
    if (keys(got) != want) {
        why = "drawn set differs:";
        for (int32_t t : keys(got)) why += " " + std::to_string(t);
        return false;
    }
    for (const auto& [t, q] : expected) {
        const double g = got.count(t) ? got.at(t) : 0.0;
        if (std::abs(g - q) > tol) {
            why = weirtest::str("token ", t, ": frequency ", g, ", expected ", q);
            return false;
        }
    }
    return true;
}

const std::vector<double> kProbs = {0.5, 0.3, 0.15, 0.05};

} // namespace

WEIR_TEST(Sampler, greedyPicksArgmax) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 3.f);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<float> l(1000);
        for (float& x : l) x = nd(rng);
        const int32_t expected = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
        for (float t : {0.0f, -1.0f}) {
            SamplingParams p = plain();
            p.temperature = t;
            std::vector<float> copy = l;
            REQUIRE_EQ(Sampler(p).sample(copy, {}), expected);
        }
    }
    // Ties go to the lowest id; NaN is skipped.
    SamplingParams p = plain();
    p.temperature = 0;
    std::vector<float> l = {NAN, 1.f, 3.f, 3.f, -2.f};
    REQUIRE_EQ(Sampler(p).sample(l, {}), 2);
}

WEIR_TEST(Sampler, topK1EqualsGreedy) {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.f, 1.f);
    SamplingParams p = plain(5);
    p.topK = 1;
    p.temperature = 1.5f;
    Sampler s(p);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<float> l(5000);
        for (float& x : l) x = nd(rng);
        const int32_t expected = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
        REQUIRE_EQ(s.sample(l, {}), expected);
    }
}

WEIR_TEST(Sampler, temperatureOneFollowsSoftmax) {
    std::string why;
    const auto f = frequencies(plain(), logitsFromProbs(kProbs), 40000);
    REQUIRE_MSG(matchesDistribution(f, {{0, 0.5}, {1, 0.3}, {2, 0.15}, {3, 0.05}}, 0.02, why), why);
}

// At temperature T the probabilities become p^(1/T), renormalised.
WEIR_TEST(Sampler, temperatureReshapes) {
    for (float t : {0.5f, 2.0f}) {
        SamplingParams p = plain(3);
        p.temperature = t;
        std::map<int32_t, double> expected;
        double z = 0;
        for (double q : kProbs) z += std::pow(q, 1.0 / t);
        for (size_t i = 0; i < kProbs.size(); ++i) expected[int32_t(i)] = std::pow(kProbs[i], 1.0 / t) / z;
        std::string why;
        REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000), expected, 0.02, why),
                 weirtest::str("T=", t, ": ") + why);
    }
    // A tiny temperature is practically greedy.
    SamplingParams p = plain(9);
    p.temperature = 0.01f;
    const auto f = frequencies(p, logitsFromProbs(kProbs), 2000);
    REQUIRE_EQ(keys(f), std::set<int32_t>{0});
}

WEIR_TEST(Sampler, topKKeepsTheKBest) {
    SamplingParams p = plain(4);
    p.topK = 2;
    std::string why;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000), {{0, 0.625}, {1, 0.375}}, 0.02, why),
             why);
}

WEIR_TEST(Sampler, topPKeepsTheNucleus) {
    // cumulative 0.5, 0.8, 0.95, 1.0: top-p 0.75 keeps {0, 1}; 0.9 keeps {0, 1, 2}.
    SamplingParams p = plain(8);
    p.topP = 0.75f;
    std::string why;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000), {{0, 0.625}, {1, 0.375}}, 0.02, why),
             why);
    p.topP = 0.9f;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000),
                                 {{0, 0.5 / 0.95}, {1, 0.3 / 0.95}, {2, 0.15 / 0.95}}, 0.02, why),
             why);
    p.topP = 0.0f;  // keeps only the most likely token
    REQUIRE_EQ(keys(frequencies(p, logitsFromProbs(kProbs), 500)), std::set<int32_t>{0});
}

// A wide nucleus (hundreds of tokens, scattered ids) matches a plain full-sort computation.
WEIR_TEST(Sampler, topPWideNucleus) {
    const int n = 600;
    std::vector<int32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(3));
    std::vector<float> logits(n);
    for (int r = 0; r < n; ++r) logits[size_t(ids[size_t(r)])] = -0.01f * float(r);  // rank r -> logit
    // Reference: softmax, sort by probability, take the smallest prefix with mass >= 0.9.
    std::vector<std::pair<double, int32_t>> probs;
    double z = 0;
    for (int i = 0; i < n; ++i) z += std::exp(double(logits[size_t(i)]));
    for (int i = 0; i < n; ++i) probs.push_back({std::exp(double(logits[size_t(i)])) / z, i});
    std::sort(probs.begin(), probs.end(), [](auto a, auto b) { return a.first > b.first; });
    std::set<int32_t> nucleus;
    double cum = 0;
    for (const auto& [q, id] : probs) {
        nucleus.insert(id);
        cum += q;
        if (cum >= 0.9) break;
    }
    REQUIRE(nucleus.size() > 200);  // wide enough to need more than a first partial sort
    SamplingParams p = plain(21);
    p.topP = 0.9f;
    const auto f = frequencies(p, logits, 20000);
    REQUIRE_EQ(keys(f), nucleus);
}

WEIR_TEST(Sampler, minPDropsUnlikelyTokens) {
    // min-p 0.2: threshold 0.2 * 0.5 = 0.1 keeps {0, 1, 2}.
    SamplingParams p = plain(6);
    p.minP = 0.2f;
    std::string why;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000),
                                 {{0, 0.5 / 0.95}, {1, 0.3 / 0.95}, {2, 0.15 / 0.95}}, 0.02, why),
             why);
    p.minP = 0.7f;  // threshold 0.35 keeps only token 0
    REQUIRE_EQ(keys(frequencies(p, logitsFromProbs(kProbs), 500)), std::set<int32_t>{0});
}

// Filters compose: top-k 3 renormalises to {.526, .316, .158}; top-p 0.7 then keeps {0, 1}.
WEIR_TEST(Sampler, filtersCompose) {
    SamplingParams p = plain(12);
    p.topK = 3;
    p.topP = 0.7f;
    std::string why;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000), {{0, 0.625}, {1, 0.375}}, 0.02, why),
             why);
}

// top-p is measured on the full (tempered) distribution, then min-p applies. With
// top-p 0.82 the nucleus is {0, 1, 2} (0.8 < 0.82 <= 0.95) and min-p 0.2 keeps it whole;
// applying min-p first and renormalising would have cut the nucleus to {0, 1}.
WEIR_TEST(Sampler, topPThenMinP) {
    SamplingParams p = plain(14);
    p.topP = 0.82f;
    p.minP = 0.2f;
    std::string why;
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000),
                                 {{0, 0.5 / 0.95}, {1, 0.3 / 0.95}, {2, 0.15 / 0.95}}, 0.02, why),
             why);
    p.minP = 0.4f;  // threshold 0.2 drops token 2 from the nucleus
    REQUIRE_MSG(matchesDistribution(frequencies(p, logitsFromProbs(kProbs), 40000), {{0, 0.625}, {1, 0.375}}, 0.02, why),
             why);
}

WEIR_TEST(Sampler, impossibleTokensAreNeverDrawn) {
    SamplingParams p = plain(13);
    std::vector<float> l = {-INFINITY, 0.f, NAN, 0.f, -INFINITY};
    REQUIRE_EQ(keys(frequencies(p, l, 2000)), (std::set<int32_t>{1, 3}));
    std::vector<float> none = {-INFINITY, -INFINITY};
    const int32_t t = Sampler(p).sample(none, {});
    REQUIRE(t == 0 || t == 1);
    std::vector<float> empty;
    REQUIRE_EQ(Sampler(p).sample(empty, {}), -1);
}

// llama.cpp: positive logits divided by the penalty, negative ones multiplied, once per distinct token.
WEIR_TEST(Sampler, repeatPenalty) {
    SamplingParams p = plain();
    p.temperature = 0;
    p.repeatPenalty = 2.0f;
    std::vector<float> l = {2.f, -2.f, 1.f, 0.5f};
    Sampler(p).sample(l, {0, 1, 1, 1});
    REQUIRE_EQ(l, (std::vector<float>{1.f, -4.f, 1.f, 0.5f}));
    // Only the last repeatLastN tokens count.
    p.repeatLastN = 2;
    l = {2.f, -2.f, 1.f, 0.5f};
    Sampler(p).sample(l, {0, 2, 3});
    REQUIRE_EQ(l, (std::vector<float>{2.f, -2.f, 0.5f, 0.25f}));
    // 0 disables; negative means the whole history.
    p.repeatLastN = 0;
    l = {2.f, -2.f, 1.f, 0.5f};
    Sampler(p).sample(l, {0, 1, 2, 3});
    REQUIRE_EQ(l, (std::vector<float>{2.f, -2.f, 1.f, 0.5f}));
    p.repeatLastN = -1;
    l = {2.f, -2.f, 1.f, 0.5f};
    Sampler(p).sample(l, {0, 1, 2, 3});
    REQUIRE_EQ(l, (std::vector<float>{1.f, -4.f, 0.5f, 0.25f}));
    // Ids outside the vocabulary are ignored.
    l = {2.f, -2.f, 1.f, 0.5f};
    Sampler(p).sample(l, {-5, 4, 1000000});
    REQUIRE_EQ(l, (std::vector<float>{2.f, -2.f, 1.f, 0.5f}));
}

// OpenAI: logit -= count * frequency_penalty + (count > 0) * presence_penalty.
WEIR_TEST(Sampler, presenceAndFrequencyPenalties) {
    SamplingParams p = plain();
    p.temperature = 0;
    p.frequencyPenalty = 0.5f;
    p.presencePenalty = 0.25f;
    std::vector<float> l = {1.f, 1.f, 1.f, 1.f};
    Sampler(p).sample(l, {2, 0, 2, 2});
    REQUIRE_EQ(l, (std::vector<float>{1.f - 0.5f - 0.25f, 1.f, 1.f - 1.5f - 0.25f, 1.f}));
    // Combined with the repeat penalty: repeat first (on the raw logit), then subtraction.
    p.repeatPenalty = 2.0f;
    l = {4.f, 0.f, 0.f, 0.f};
    Sampler(p).sample(l, {0, 0});
    REQUIRE_EQ(l[0], 4.f / 2 - 2 * 0.5f - 0.25f);
}

WEIR_TEST(Sampler, penaltyChangesTheChoice) {
    SamplingParams p = plain();
    p.temperature = 0;
    std::vector<float> l = {3.f, 2.f, 1.f};
    REQUIRE_EQ(Sampler(p).sample(l, {0}), 0);
    p.repeatPenalty = 2.0f;
    l = {3.f, 2.f, 1.f};
    REQUIRE_EQ(Sampler(p).sample(l, {0}), 1);
}

WEIR_TEST(Sampler, sameSeedSameSequence) {
    std::vector<float> logits(50);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(std::sin(double(i)));
    const auto run = [&](uint64_t seed) {
        SamplingParams p = plain(seed);
        p.topK = 40;
        p.topP = 0.95f;
        p.minP = 0.01f;
        p.repeatPenalty = 1.1f;
        Sampler s(p);
        std::vector<int32_t> out;
        for (int i = 0; i < 300; ++i) {
            std::vector<float> l = logits;
            out.push_back(s.sample(l, out));
        }
        return out;
    };
    const auto a = run(1234), b = run(1234), c = run(1235);
    REQUIRE_EQ(a, b);
    REQUIRE(a != c);
    REQUIRE(std::set<int32_t>(a.begin(), a.end()).size() > 5);  // it really samples
}

// OpenAI's logit_bias: added to the token's logit after the penalties; a bias
// of -100 or less bans the token even where every other logit is lower.
WEIR_TEST(Sampler, logitBiasShiftsAndBans) {
    SamplingParams p = plain();
    p.temperature = 0;
    std::vector<float> l = {3.f, 2.f, 1.f};
    p.logitBias = {{2, 2.5f}};
    REQUIRE_EQ(Sampler(p).sample(l, {}), 2);
    REQUIRE_EQ(l[2], 3.5f);
    p.logitBias = {{0, -100.f}};
    l = {-500.f, -1000.f, -2000.f};
    REQUIRE_EQ(Sampler(p).sample(l, {}), 1);
    p.logitBias = {{7, 50.f}, {-1, 50.f}};  // outside the vocabulary: ignored
    l = {3.f, 2.f, 1.f};
    REQUIRE_EQ(Sampler(p).sample(l, {}), 0);
    // Sampled: a banned token never comes, a strongly favoured one always.
    SamplingParams q = plain(7);
    q.logitBias = {{0, -100.f}};
    const auto banned = frequencies(q, logitsFromProbs(kProbs), 2000);
    REQUIRE_EQ(banned.count(0), size_t(0));
    q.logitBias = {{3, 100.f}};
    const auto favoured = frequencies(q, logitsFromProbs(kProbs), 200);
    REQUIRE_EQ(favoured.size(), size_t(1));
    REQUIRE_EQ(favoured.begin()->first, 3);
}
