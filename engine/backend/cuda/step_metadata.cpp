#include "engine/backend/cuda/step_metadata.h"

#include <string>
#include <unordered_map>

#include "weir/base/error.h"

namespace weir::cudabackend {

StepLayout flattenStep(const StepInfo& step, std::vector<int32_t>& words) {
    if (!step.batch) throw Error("CUDA step without a batch");
    const auto& tokens = step.batch->tokens;
    StepLayout L;
    L.tokens = int32_t(tokens.size());
    L.outputs = int32_t(step.outputRows.size());
    L.tokenIds = 0;
    L.positions = L.tokens;
    L.outputRows = 2 * L.tokens;
    L.fullTables = L.outputRows + L.outputs;
    L.windowTables = L.fullTables + L.tokens;
    const int32_t tablesStart = L.windowTables + L.tokens;

    words.assign(size_t(tablesStart), 0);
    for (int32_t i = 0; i < L.tokens; ++i) {
        words[size_t(L.tokenIds + i)] = tokens[size_t(i)].token;
        words[size_t(L.positions + i)] = tokens[size_t(i)].pos;
    }
    for (int32_t r = 0; r < L.outputs; ++r) {
        const int32_t row = step.outputRows[size_t(r)];
        if (row < 0 || row >= L.tokens)
            throw Error("CUDA step: output row " + std::to_string(row) + " outside the batch of " + std::to_string(L.tokens));
        words[size_t(L.outputRows + r)] = row;
    }

    const int32_t poolLayer[2] = {step.fullLayer, step.windowLayer};
    const int32_t sectionOf[2] = {L.fullTables, L.windowTables};
    for (int pool = 0; pool < 2; ++pool) {
        if (poolLayer[pool] < 0) {
            for (int32_t i = 0; i < L.tokens; ++i) words[size_t(sectionOf[pool] + i)] = -1;
            continue;
        }
        if (!step.kv) throw Error("CUDA step: the model has KV layers but the step has no cache");
        for (const BatchToken& t : tokens)
            if (t.pos < 0) throw Error("CUDA step: negative position " + std::to_string(t.pos));
        const int32_t pageSize = step.kv->pageSize();
        if (pageSize <= 0) throw Error("CUDA step: KV page size must be positive");
        std::unordered_map<int32_t, int32_t> copied;  // sequence -> word offset of its table
        std::unordered_map<int32_t, size_t> tableSize;
        for (int32_t i = 0; i < L.tokens; ++i) {
            const int32_t seq = tokens[size_t(i)].seq;
            auto it = copied.find(seq);
            if (it == copied.end()) {
                const auto table = step.kv->pageTable(poolLayer[pool], seq);
                if (table.empty())
                    throw Error("CUDA step: sequence " + std::to_string(seq) + " has no page table for layer " +
                                std::to_string(poolLayer[pool]));
                tableSize.emplace(seq, table.size());
                it = copied.emplace(seq, int32_t(words.size())).first;
                words.insert(words.end(), table.begin(), table.end());
            }
            // The kernels index the table without bounds: every position must have its entry.
            if (size_t(tokens[size_t(i)].pos) / size_t(pageSize) >= tableSize[seq])
                throw Error("CUDA step: sequence " + std::to_string(seq) + " has no KV page for position " +
                            std::to_string(tokens[size_t(i)].pos));
            words[size_t(sectionOf[pool] + i)] = it->second;
        }
    }
    L.words = int32_t(words.size());
    return L;
}

} // namespace weir::cudabackend
