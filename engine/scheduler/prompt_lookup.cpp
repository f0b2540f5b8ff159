#include "engine/scheduler/prompt_lookup.h"

#include <algorithm>

namespace weir {

std::vector<int32_t> proposeDraft(std::span<const int32_t> context, const PromptLookupOptions& options,
                                  int32_t maxDraft) {
    std::vector<int32_t> draft;
    const int64_t size = int64_t(context.size());
    if (maxDraft <= 0) return draft;
    const int32_t lo = std::max(1, options.ngramMin);
    for (int32_t n = options.ngramMax; n >= lo; --n) {
        if (size <= n) continue;
        const auto suffix = context.subspan(size_t(size - n));
        // Latest first: a match at `start` must leave at least one token after it.
        for (int64_t start = size - n - 1; start >= 0; --start) {
            if (context[size_t(start)] != suffix[0] ||
                !std::equal(suffix.begin(), suffix.end(), context.begin() + start))
                continue;
            const int64_t from = start + n;
            const int64_t to = std::min<int64_t>(size, from + maxDraft);
            draft.assign(context.begin() + from, context.begin() + to);
            return draft;
        }
    }
    return draft;
}

} // namespace weir
