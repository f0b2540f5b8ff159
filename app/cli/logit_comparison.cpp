#include "app/cli/logit_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "weir/base/error.h"

namespace weir::cli {

namespace {

std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

} // namespace

double LogitStep::relMargin() const {
    return (double(top1Ref) - double(top2Ref)) / std::max(1.0, std::fabs(double(top1Ref)));
}

LogitStep compareLogits(std::span<const float> ref, std::span<const float> other) {
    if (ref.size() != other.size() || ref.size() < 2)
        throw Error("compare-devices: logit vectors of " + std::to_string(ref.size()) + " and " +
                    std::to_string(other.size()) + " entries");
    LogitStep s;
    s.identical = std::memcmp(ref.data(), other.data(), ref.size() * sizeof(float)) == 0;
    double maxRef = 0, maxDiff = 0;
    float bestOther = 0;
    s.top1Ref = -INFINITY, s.top2Ref = -INFINITY;
    for (size_t i = 0; i < ref.size(); ++i) {
        const float a = ref[i], b = other[i];
        if (!std::isfinite(a)) {
            s.refFinite = false;
            continue;
        }
        if (a > s.top1Ref) {
            s.top2Ref = s.top1Ref;
            s.top1Ref = a;
            s.argmaxRef = int32_t(i);
        } else if (a > s.top2Ref) {
            s.top2Ref = a;
        }
        if (!std::isfinite(b)) {
            s.otherFinite = false;
            continue;
        }
        if (s.argmaxOther < 0 || b > bestOther) {
            bestOther = b;
            s.argmaxOther = int32_t(i);
        }
        maxRef = std::max(maxRef, std::fabs(double(a)));
        maxDiff = std::max(maxDiff, std::fabs(double(a) - double(b)));
    }
    s.relError = maxRef > 0 ? maxDiff / maxRef : maxDiff;
    return s;
}

void PromptComparison::add(const LogitStep& s) {
    if (s.argmaxRef != s.argmaxOther) {
        Divergence d;
        d.step = steps_;
        d.tokenRef = s.argmaxRef;
        d.tokenOther = s.argmaxOther;
        d.margin = double(s.top1Ref) - double(s.top2Ref);
        d.relMargin = s.relMargin();
        d.nearTie = s.refFinite && s.otherFinite && d.relMargin < tieMargin_;
        divergences_.push_back(d);
    }
    maxRelError_ = std::max(maxRelError_, s.relError);
    if (s.refFinite) minRelMargin_ = std::min(minRelMargin_, s.relMargin());
    allFinite_ = allFinite_ && s.refFinite && s.otherFinite;
    allIdentical_ = allIdentical_ && s.identical;
    ++steps_;
}

int32_t PromptComparison::hardDivergences() const {
    return int32_t(std::count_if(divergences_.begin(), divergences_.end(), [](const Divergence& d) { return !d.nearTie; }));
}

std::string PromptComparison::toJson() const {
    std::string out = "{\"steps\":" + std::to_string(steps_) + ",\"first_divergence\":" + std::to_string(firstDivergence()) +
                      ",\"max_rel_logit_error\":" + number(maxRelError_) +
                      ",\"min_reference_rel_margin\":" + number(steps_ ? minRelMargin_ : 0.0) + ",\"finite\":" + (allFinite_ ? "true" : "false") +
                      ",\"bit_identical\":" + (allIdentical_ ? "true" : "false") + ",\"divergences\":[";
    for (size_t i = 0; i < divergences_.size(); ++i) {
        const Divergence& d = divergences_[i];
        out += std::string(i ? "," : "") + "{\"step\":" + std::to_string(d.step) + ",\"reference_token\":" +
               std::to_string(d.tokenRef) + ",\"other_token\":" + std::to_string(d.tokenOther) +
               ",\"reference_margin\":" + number(d.margin) + ",\"reference_rel_margin\":" + number(d.relMargin) +
               ",\"near_tie\":" + (d.nearTie ? "true" : "false") + "}";
    }
    return out + "],\"pass\":" + (pass() ? "true" : "false") + "}";
}

} // namespace weir::cli
