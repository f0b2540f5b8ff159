// HybridKvCache::truncate, the rollback of a speculative verify step's
// rejected drafts: pages wholly past the new length go back to both pools
// (window pages unbound first), a cached prefix and the released window are
// never cut into, and the full recount stays clean.
#include "tests/support/weir_test.h"

#include <numeric>
#include <vector>

#include "engine/kv/hybrid_kv_cache.h"

using namespace weir;
using namespace weir::kv;

namespace {

// P 4, W 8; layer 0 full-attention, layer 1 sliding.
KvCacheConfig smallConfig() {
    KvCacheConfig c;
    c.pageSize = 4;
    c.window = 8;
    c.fullTokens = 64;
    c.windowTokens = 40;
    c.fullFloorTokens = 16;
    c.windowFloorTokens = 24;
    c.layers = {{false, 32}, {true, 32}};
    return c;
}

std::vector<int32_t> tokens(int32_t first, int32_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), first);
    return t;
}

} // namespace

WEIR_TEST(KvTruncate, returnsTheDraftPagesToBothPools) {
    HybridKvCache c(smallConfig());
    const int32_t s = c.openSequence(1);
    REQUIRE_EQ(c.allocate(s, 6), KvResult::Ok);  // 2 pages
    const int64_t freeFull = c.freePages(PoolKind::Full), freeWindow = c.freePages(PoolKind::Window);
    REQUIRE_EQ(c.allocate(s, 9), KvResult::Ok);  // 15 positions: 4 pages
    CHECK_EQ(c.freePages(PoolKind::Full), freeFull - 2);
    CHECK_EQ(c.freePages(PoolKind::Window), freeWindow - 2);
    REQUIRE_EQ(c.truncate(s, 7), KvResult::Ok);  // back inside the second page
    CHECK_EQ(c.sequenceInfo(s).length, 7);
    CHECK_EQ(c.sequenceInfo(s).fullTokens, 8);
    CHECK_EQ(c.sequenceInfo(s).windowTokens, 8);
    CHECK_EQ(c.freePages(PoolKind::Full), freeFull);
    CHECK_EQ(c.freePages(PoolKind::Window), freeWindow);
    CHECK(c.checkIntegrity());
    // Growing again after a rollback takes fresh pages as usual.
    REQUIRE_EQ(c.allocate(s, 5), KvResult::Ok);
    CHECK_EQ(c.sequenceInfo(s).fullTokens, 12);
    REQUIRE_EQ(c.truncate(s, 12), KvResult::Ok);  // to the same length: nothing changes
    CHECK(c.checkIntegrity());
    c.closeSequence(s);
    CHECK(c.checkIntegrity());
    CHECK_EQ(c.freePages(PoolKind::Full), c.capacityPages(PoolKind::Full));
    CHECK_EQ(c.freePages(PoolKind::Window), c.capacityPages(PoolKind::Window));
    CHECK_EQ(c.log().violations, uint64_t(0));
}

WEIR_TEST(KvTruncate, refusesWhatItMustNotCut) {
    HybridKvCache c(smallConfig());
    const int32_t s = c.openSequence(1);
    REQUIRE_EQ(c.allocate(s, 20), KvResult::Ok);
    CHECK_EQ(c.truncate(s, 21), KvResult::BadArgument);  // past the end
    CHECK_EQ(c.truncate(s, -1), KvResult::BadArgument);
    CHECK_EQ(c.truncate(99, 1), KvResult::BadArgument);  // unknown sequence
    REQUIRE(c.releaseOutOfWindow(s) > 0);                // boundary floor_4(20 - 8 + 1) = 12
    CHECK_EQ(c.truncate(s, 18), KvResult::BadArgument);  // its window would start past 11
    CHECK_EQ(c.sequenceInfo(s).length, 20);
    CHECK_EQ(c.truncate(s, 19), KvResult::Ok);
    c.closeSequence(s);
    // Cached pages are never dropped: that would cut into the tree.
    const int32_t t = c.openSequence(2);
    REQUIRE_EQ(c.allocate(t, 10), KvResult::Ok);
    c.cachePrefix(t, tokens(100, 10));  // pages 0 and 1 are complete
    CHECK_EQ(c.truncate(t, 5), KvResult::Ok);  // drops page 2 only
    CHECK_EQ(c.truncate(t, 3), KvResult::Violation);
    CHECK_EQ(c.sequenceInfo(t).length, 5);
    CHECK_EQ(c.log().violations, uint64_t(1));
    c.closeSequence(t);
}
