#include "engine/backend/cuda/graph_key.h"

#include <algorithm>
#include <vector>

namespace weir::cudabackend {

GraphKey graphKey(const Batch& batch, std::span<const int32_t> outputRows) {
    GraphKey k;
    k.tokens = int32_t(batch.tokens.size());
    k.outputs = int32_t(outputRows.size());
    std::vector<int32_t> seqs;
    seqs.reserve(batch.tokens.size());
    for (const BatchToken& t : batch.tokens) seqs.push_back(t.seq);
    std::sort(seqs.begin(), seqs.end());
    k.decodeOnly = std::adjacent_find(seqs.begin(), seqs.end()) == seqs.end();
    return k;
}

} // namespace weir::cudabackend
