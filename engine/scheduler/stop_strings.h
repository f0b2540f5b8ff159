#pragma once
// Cuts generated text at the first stop string. Text that could still turn
// into a stop string is held back until the next delta decides it, so a client
// never sees the beginning of a stop string that later completes.
#include <string>
#include <vector>

namespace weir {

class StopStringMatcher {
public:
    explicit StopStringMatcher(std::vector<std::string> stops);

    struct Result {
        std::string text;   // safe to emit now
        bool stopped = false;  // a stop string matched; nothing after it is emitted
    };
    // Appends a text delta; returns what may be emitted.
    Result push(const std::string& delta);
    // End of generation without a stop: everything held back.
    std::string flush();
    bool stopped() const { return stopped_; }
    // After a stop: the index, in the list given to the constructor, of the
    // stop string that matched (the earliest in the text); -1 before.
    int matched() const { return matched_; }

private:
    // Length of the longest suffix of pending_ that is a proper prefix of a stop string.
    size_t heldBackLength() const;

    std::vector<std::string> stops_;
    std::vector<int> index_;  // stops_[i] is the constructor's stops[index_[i]] (empty ones are dropped)
    std::string pending_;
    bool stopped_ = false;
    int matched_ = -1;
};

} // namespace weir
