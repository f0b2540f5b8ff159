#pragma once
// What the CUDA kernels need to know of a step, flattened into one array of
// int32 words so it reaches the device in a single upload (pinned memory, one
// async copy, which a captured CUDA graph replays as it is). Host-only: no
// CUDA headers, so it is tested without a GPU.
//
// Layout, for n tokens and nOut output rows (offsets in words):
//   [0, n)                     token ids
//   [n, 2n)                    positions
//   [2n, 2n + nOut)            output rows (batch indices wanting logits, increasing)
//   [fullTables, +n)           per token: word offset of its sequence's page
//                              table in the full pool (-1: the model has none)
//   [windowTables, +n)         the same for the window pool
//   [fullTables + 2n, size)    the page tables of each distinct sequence, one
//                              copy per sequence and pool, back to back
// Everything before the tables has a place fixed by (n, nOut), so kernels
// captured in a graph read the right words on every replay.
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"

namespace weir::cudabackend {

struct StepLayout {
    int32_t tokens = 0;        // n
    int32_t outputs = 0;       // nOut
    int32_t tokenIds = 0;      // word offsets of the sections above
    int32_t positions = 0;
    int32_t outputRows = 0;
    int32_t fullTables = 0;
    int32_t windowTables = 0;
    int32_t words = 0;         // total size
};

// Fills `words` (resized to the layout's size) and returns the layout.
// Throws weir::Error when a token's sequence has no page table in a pool the
// model has or its table does not reach the token's position (the kernels
// index tables without bounds), or an output row is outside the batch.
StepLayout flattenStep(const StepInfo& step, std::vector<int32_t>& words);

} // namespace weir::cudabackend
