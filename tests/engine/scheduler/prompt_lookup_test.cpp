// proposeDraft: the latest earlier occurrence of the longest suffix that
// occurs, what followed it, cut at maxDraft and at the context's end.
#include "tests/support/weir_test.h"

#include <vector>

#include "engine/scheduler/prompt_lookup.h"

using namespace weir;

namespace {
using V = std::vector<int32_t>;
}

WEIR_TEST(PromptLookup, longestSuffixFirstThenLatestMatch) {
    const PromptLookupOptions o{3, 1};
    // "1 2 3 4 5 | 9 2 3 7 | 1 2 3": the 3-gram (1 2 3) occurs at 0, followed by 4 5 9.
    const V ctx{1, 2, 3, 4, 5, 9, 2, 3, 7, 1, 2, 3};
    CHECK_EQ(proposeDraft(ctx, o, 3), (V{4, 5, 9}));
    // With n at most 2 the latest (2 3) is at 6, followed by 7 1 2 3.
    CHECK_EQ(proposeDraft(ctx, {2, 1}, 8), (V{7, 1, 2, 3}));
    // A 1-gram when nothing longer matches; maxDraft cuts.
    CHECK_EQ(proposeDraft(V{5, 6, 7, 8, 6}, o, 2), (V{7, 8}));
}

WEIR_TEST(PromptLookup, nothingToPropose) {
    const PromptLookupOptions o{3, 1};
    CHECK(proposeDraft(V{1, 2, 3, 4}, o, 8).empty());          // no token repeats
    CHECK(proposeDraft(V{1, 2, 1}, o, 0).empty());             // no room
    CHECK(proposeDraft(V{}, o, 8).empty());
    CHECK(proposeDraft(V{7}, o, 8).empty());
    CHECK(proposeDraft(V{1, 2, 9, 2}, {3, 2}, 8).empty());     // only a 1-gram matches, and 1 is below the minimum
    CHECK_EQ(proposeDraft(V{1, 2, 9, 2}, {3, 1}, 8), (V{9, 2}));
}
