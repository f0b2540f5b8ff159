#pragma once
// Prompt-lookup drafting (speculative decoding without a draft model): the
// tokens that followed the latest earlier occurrence of the context's last
// n tokens are a cheap guess at what comes next. Code being edited, a
// summary that quotes its source and tool-call JSON that repeats a schema's
// names all continue text that is already in the context.
#include <cstdint>
#include <span>
#include <vector>

namespace weir {

struct PromptLookupOptions {
    int32_t ngramMax = 3;   // the longest suffix looked up first
    int32_t ngramMin = 1;   // the shortest tried before giving up
};

// Up to `maxDraft` tokens proposed to follow `context`: for n from ngramMax
// down to ngramMin, the latest earlier occurrence of the context's last n
// tokens (a match ending before the context's end) and what followed it.
// Empty when nothing matches or maxDraft <= 0. O(context x n).
std::vector<int32_t> proposeDraft(std::span<const int32_t> context, const PromptLookupOptions& options,
                                  int32_t maxDraft);

} // namespace weir
