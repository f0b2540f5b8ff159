#pragma once
// One forward pass's input: tokens from several sequences at once. Prefill
// chunks and decode steps mix freely; each token carries its sequence and
// position, which is all continuous batching needs.
#include <cstdint>
#include <vector>

namespace weir {

struct BatchToken {
    int32_t token = 0;
    int32_t seq = 0;        // sequence id as known to the KvAccess
    int32_t pos = 0;        // absolute position in that sequence
    bool wantLogits = false;
    // Round as a batch of its own: the matmul kernels' last bits depend on
    // how many rows of a sequence share a batch (see kernels::RowGroups), and
    // a speculative verify row must give exactly the numbers of the decode
    // step it stands for.
    bool alone = false;
};

struct Batch {
    // Tokens of one sequence must appear in increasing position order; a token
    // attends to every earlier position of its sequence already in the cache
    // plus the earlier tokens of the same sequence in this batch.
    std::vector<BatchToken> tokens;
    void add(int32_t token, int32_t seq, int32_t pos, bool wantLogits, bool alone = false) {
        tokens.push_back({token, seq, pos, wantLogits, alone});
    }
    int32_t logitsCount() const {
        int32_t n = 0;
        for (const auto& t : tokens) n += t.wantLogits ? 1 : 0;
        return n;
    }
};

} // namespace weir
