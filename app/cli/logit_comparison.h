#pragma once
// How far one device's logits are from another's (weir-cli compare-devices):
// per step, whether the greedy choices agree, how close the reference's top
// two were (a near-tie may flip on any rounding), and the largest logit
// error relative to the reference's largest logit.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weir::cli {

struct LogitStep {
    int32_t argmaxRef = -1, argmaxOther = -1;
    float top1Ref = 0, top2Ref = 0;   // the reference's two largest logits
    double relError = 0;              // max |ref - other| / max |ref|
    bool refFinite = true;            // every logit of the reference finite
    bool otherFinite = true;          // every logit of the other device finite
    bool identical = true;            // bit for bit
    // (top1 - top2) / max(|top1|, 1): below the tie margin, either choice is right.
    double relMargin() const;
};

// Compares two logit vectors of the same length (throws weir::Error otherwise).
LogitStep compareLogits(std::span<const float> ref, std::span<const float> other);

struct Divergence {
    int32_t step = 0;
    int32_t tokenRef = 0, tokenOther = 0;
    double margin = 0, relMargin = 0;  // the reference's top-2 margin, absolute and relative
    bool nearTie = false;
};

// One prompt's steps, in order.
class PromptComparison {
public:
    explicit PromptComparison(double tieMargin) : tieMargin_(tieMargin) {}
    void add(const LogitStep& s);

    int32_t steps() const { return steps_; }
    int32_t firstDivergence() const { return divergences_.empty() ? -1 : divergences_.front().step; }
    const std::vector<Divergence>& divergences() const { return divergences_; }
    int32_t hardDivergences() const;   // divergences that are not near-ties
    double maxRelError() const { return maxRelError_; }
    double minRelMargin() const { return minRelMargin_; }  // the reference's closest top two

    bool allFinite() const { return allFinite_; }
    bool allIdentical() const { return allIdentical_; }
    // Same greedy choice at every step but near-ties, and finite logits on both.
    bool pass() const { return allFinite_ && hardDivergences() == 0; }
    std::string toJson() const;

private:
    double tieMargin_;
    int32_t steps_ = 0;
    std::vector<Divergence> divergences_;
    double maxRelError_ = 0;
    double minRelMargin_ = 1e300;
    bool allFinite_ = true, allIdentical_ = true;
};

} // namespace weir::cli
