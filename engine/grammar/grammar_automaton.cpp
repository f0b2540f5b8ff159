// GrammarAutomaton: stacks of frames, interned, advanced one byte at a time.
#include "engine/grammar/grammar_automaton.h"

#include <algorithm>

#include "weir/base/error.h"

namespace weir::grammar {

namespace {
// Rules nested this deep without a byte can only be left recursion.
constexpr int kMaxSettleDepth = 2000;
// A set this large means an ambiguity that multiplies with every byte.
constexpr size_t kMaxStacks = 4096;
}

size_t GrammarAutomaton::StacksHash::operator()(const std::vector<int32_t>& v) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int32_t x : v) h = (h ^ uint32_t(x)) * 0x100000001b3ull;
    return size_t(h ^ (h >> 29));
}

GrammarAutomaton::GrammarAutomaton(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)), elements_(&grammar_->elements()) {
    std::vector<int32_t> stacks;
    bool complete = false;
    for (int32_t start : grammar_->alternativeStarts(grammar_->root())) settle(start, -1, stacks, complete, 0);
    initial_ = intern(std::move(stacks), complete);
    if (initial_ == kDead) throw Error("grammar: the root rule matches nothing");
}

int32_t GrammarAutomaton::frame(int32_t pos, int32_t parent) {
    const uint64_t key = (uint64_t(uint32_t(pos)) << 32) | uint32_t(parent + 1);
    auto [it, inserted] = frameIds_.try_emplace(key, int32_t(frames_.size()));
    if (inserted) frames_.push_back({pos, parent});
    return it->second;
}

void GrammarAutomaton::settle(int32_t pos, int32_t parent, std::vector<int32_t>& stacks, bool& complete, int depth) {
    if (depth > kMaxSettleDepth)
        throw Error("grammar: a rule reaches itself before matching any byte (left recursion)");
    const Element& e = (*elements_)[size_t(pos)];
    switch (e.kind) {
    case Element::Kind::Bytes:
        stacks.push_back(frame(pos, parent));
        return;
    case Element::Kind::End:
        // The alternative is over: go on where the rule was referenced.
        if (parent < 0) {
            complete = true;
        } else {
            const Frame f = frames_[size_t(parent)];
            settle(f.pos, f.parent, stacks, complete, depth + 1);
        }
        return;
    case Element::Kind::Rule: {
        // A reference in last place needs no return frame (a tail call), so
        // right recursion (lists, strings) does not grow the stack.
        const bool last = (*elements_)[size_t(pos) + 1].kind == Element::Kind::End;
        const int32_t below = last ? parent : frame(pos + 1, parent);
        for (int32_t start : grammar_->alternativeStarts(e.rule)) settle(start, below, stacks, complete, depth + 1);
        return;
    }
    }
}

int32_t GrammarAutomaton::intern(std::vector<int32_t> stacks, bool complete) {
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    if (stacks.empty() && !complete) return kDead;
    if (stacks.size() > kMaxStacks)
        throw Error("grammar: more than " + std::to_string(kMaxStacks) + " parses of the same text (too ambiguous)");
    auto& ids = stateIds_[complete ? 1 : 0];
    auto it = ids.find(stacks);
    if (it != ids.end()) return it->second;
    const int32_t id = int32_t(states_.size());
    ids.emplace(stacks, id);
    states_.push_back({std::move(stacks), complete});
    transitions_.resize(states_.size() * 256, kUnknown);
    return id;
}

int32_t GrammarAutomaton::computeNext(int32_t state, uint8_t byte) {
    std::vector<int32_t> stacks;
    bool complete = false;
    // Copied: interning below may grow states_.
    const std::vector<int32_t> current = states_[size_t(state)].stacks;
    for (int32_t top : current) {
        const Frame f = frames_[size_t(top)];
        if ((*elements_)[size_t(f.pos)].bytes.test(byte)) settle(f.pos + 1, f.parent, stacks, complete, 0);
    }
    const int32_t next = intern(std::move(stacks), complete);
    transitions_[size_t(state) * 256 + byte] = next;
    return next;
}

} // namespace weir::grammar
