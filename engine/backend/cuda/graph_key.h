#pragma once
// Which captured CUDA graph a step can replay. A decode step's ops, their
// launch shapes and the pointers they read are fixed by how many tokens it
// has and how many of them want logits (the transformer gathers the output
// rows after the last attention when fewer than all do); everything else
// that changes between steps (token ids, positions, page tables) travels in
// the step's metadata upload, which the graph replays too. Host-only.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "engine/models/batch.h"

namespace weir::cudabackend {

// Steps with more tokens than this run without graphs: prefill chunks are
// launch-bound far less than decode steps, and each key holds a graph.
inline constexpr int32_t kMaxGraphTokens = 256;

struct GraphKey {
    int32_t tokens = 0;
    int32_t outputs = 0;
    // No sequence has two tokens in the step: every token is a decode (or a
    // one-token prefill chunk, which is the same shape). Steps with several
    // tokens of one sequence are prefill and never replayed.
    bool decodeOnly = false;
    bool operator==(const GraphKey&) const = default;
};

GraphKey graphKey(const Batch& batch, std::span<const int32_t> outputRows);

// Whether steps of this key are captured and replayed.
inline bool graphable(const GraphKey& k) { return k.decodeOnly && k.tokens > 0 && k.tokens <= kMaxGraphTokens; }

struct GraphKeyHash {
    size_t operator()(const GraphKey& k) const {
        return std::hash<uint64_t>()((uint64_t(uint32_t(k.tokens)) << 33) ^ (uint64_t(uint32_t(k.outputs)) << 1) ^
                                     uint64_t(k.decodeOnly));
    }
};

} // namespace weir::cudabackend
