#pragma once
// Cuts generated text at the first stop string. Text that could still turn
// into a stop string is held back until the next delta decides it, so a client
// never sees the beginning of a stop string that later completes.
#include <string>
#include <vector>

namespace weir {

class StopStringMatcher {
public:
    // `openers`: stop strings that, found where the reply so far is only
    // whitespace, are kept as text instead of ending it. A chat format's
    // tool-result marker stops a model that starts inventing a result
    // mid-reply, but a model that merely opens its answer with it (echoing the
    // template) would otherwise reply with nothing.
    explicit StopStringMatcher(std::vector<std::string> stops, const std::vector<std::string>& openers = {});

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
    std::vector<bool> opener_;  // stops_[i] is one of the openers
    std::string pending_;
    bool emittedText_ = false;  // something other than whitespace went out
    bool stopped_ = false;
    int matched_ = -1;
};

} // namespace weir
