#include "engine/scheduler/stop_strings.h"

#include <algorithm>
#include <string_view>

namespace weir {

namespace {

bool allWhitespace(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

} // namespace

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops, const std::vector<std::string>& openers) {
    for (size_t i = 0; i < stops.size(); ++i) {
        if (stops[i].empty()) continue;
        opener_.push_back(std::find(openers.begin(), openers.end(), stops[i]) != openers.end());
        stops_.push_back(std::move(stops[i]));
        index_.push_back(int(i));
    }
}

StopStringMatcher::Result StopStringMatcher::push(const std::string& delta) {
    Result r;
    if (stopped_) { r.stopped = true; return r; }
    pending_ += delta;
    for (;;) {
        // Earliest complete match wins; a stop string may span several deltas.
        size_t cut = std::string::npos, which = 0;
        for (size_t i = 0; i < stops_.size(); ++i) {
            const size_t at = pending_.find(stops_[i]);
            if (at != std::string::npos && at < cut) {
                cut = at;
                which = i;
            }
        }
        if (cut == std::string::npos) break;
        if (opener_[which] && !emittedText_ && allWhitespace(std::string_view(pending_).substr(0, cut))) {
            // The reply opens with it: it is text, and the reply goes on. (A
            // fence kept whole renders as a code block; dropping only its
            // opening line would leave its closing ``` to swallow the answer.)
            const size_t end = cut + stops_[which].size();
            r.text += pending_.substr(0, end);
            pending_.erase(0, end);
            emittedText_ = true;
            continue;
        }
        matched_ = index_[which];
        r.text += pending_.substr(0, cut);
        r.stopped = stopped_ = true;
        pending_.clear();
        return r;
    }
    const size_t hold = heldBackLength();
    r.text += pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    emittedText_ = emittedText_ || !allWhitespace(r.text);
    return r;
}

std::string StopStringMatcher::flush() {
    std::string out;
    if (!stopped_) out.swap(pending_);
    pending_.clear();
    return out;
}

size_t StopStringMatcher::heldBackLength() const {
    size_t best = 0;
    for (const auto& s : stops_) {
        const size_t maxLen = std::min(s.size() - 1, pending_.size());
        for (size_t len = maxLen; len > best; --len) {
            if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
                best = len;
                break;
            }
        }
    }
    return best;
}

} // namespace weir
