#pragma once
// Runs a Grammar over bytes as a lazily built deterministic automaton.
//
// Where the parser can be after some text is a set of stacks (several when
// the grammar is ambiguous so far, e.g. anyOf with a common prefix). A stack
// is a chain of frames, each a position in the flat elements; its top is
// always a byte set, the frames below are where to go on when a rule ends.
// Frames and sets of stacks are interned, so the same parser position is the
// same state id wherever it is reached: a state's transitions (and the
// token masks cached per state) are computed once and reused.
//
// Not thread-safe: one automaton is used by one thread at a time (the
// engine thread, or a test).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.h"

namespace weir::grammar {

class GrammarAutomaton {
public:
    static constexpr int32_t kDead = -1;  // no text continues this way

    // Throws weir::Error when the grammar's start is left-recursive.
    explicit GrammarAutomaton(std::shared_ptr<const Grammar> grammar);

    int32_t initial() const { return initial_; }
    // The state after `byte` (kDead when the byte cannot come next). Throws
    // weir::Error for a left-recursive rule met on the way.
    int32_t next(int32_t state, uint8_t byte) {
        const int32_t n = transitions_[size_t(state) * 256 + byte];
        return n != kUnknown ? n : computeNext(state, byte);
    }
    // The text so far is a whole document of the grammar.
    bool isComplete(int32_t state) const { return states_[size_t(state)].complete; }
    // Some byte may still follow.
    bool canContinue(int32_t state) const { return !states_[size_t(state)].stacks.empty(); }

    size_t stateCount() const { return states_.size(); }
    const Grammar& grammar() const { return *grammar_; }

private:
    static constexpr int32_t kUnknown = -2;
    struct Frame {
        int32_t pos;     // index in the flat elements
        int32_t parent;  // frame below, -1 at the bottom
    };
    struct State {
        std::vector<int32_t> stacks;  // top frames, sorted, each on a byte set
        bool complete = false;
    };
    struct StacksHash {
        size_t operator()(const std::vector<int32_t>& v) const;
    };

    int32_t computeNext(int32_t state, uint8_t byte);
    int32_t frame(int32_t pos, int32_t parent);
    // Every stack reachable from position `pos` over `parent` without
    // consuming a byte: rules expanded, ended alternatives popped.
    void settle(int32_t pos, int32_t parent, std::vector<int32_t>& stacks, bool& complete, int depth);
    int32_t intern(std::vector<int32_t> stacks, bool complete);

    std::shared_ptr<const Grammar> grammar_;
    const std::vector<Element>* elements_;
    std::vector<Frame> frames_;
    std::unordered_map<uint64_t, int32_t> frameIds_;
    std::vector<State> states_;
    std::unordered_map<std::vector<int32_t>, int32_t, StacksHash> stateIds_[2];  // by `complete`
    std::vector<int32_t> transitions_;  // 256 per state
    int32_t initial_ = kDead;
};

} // namespace weir::grammar
