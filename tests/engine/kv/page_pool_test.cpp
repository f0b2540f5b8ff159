// The page pool: state transitions, counters, and the failures it must catch
// at the call (double free, stale handle, wrong owner, duplicate in one call).
#include "tests/support/weir_test.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/kv/page_pool.h"

using namespace weir::kv;

static bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

WEIR_TEST(PagePool, allocateMovesFreeToOwned) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 8, &log);
    std::vector<PageRef> got;
    REQUIRE_EQ(pool.allocate(7, 3, got), KvResult::Ok);
    REQUIRE_EQ(int(got.size()), 3);
    REQUIRE_EQ(pool.freeCount(), 5);
    REQUIRE_EQ(pool.ownedCount(), 3);
    for (const PageRef& r : got) {
        REQUIRE_EQ(pool.state(r.page), PageState::Owned);
        REQUIRE_EQ(pool.refs(r.page), 1);
        REQUIRE_EQ(pool.owner(r.page), Holder(7));
        REQUIRE(pool.live(r));
    }
    // Low ids first, distinct.
    REQUIRE_EQ(got[0].page, 0);
    REQUIRE_EQ(got[1].page, 1);
    REQUIRE_EQ(got[2].page, 2);
    REQUIRE(pool.checkCounters());
    REQUIRE_EQ(log.violations, uint64_t(0));
}

WEIR_TEST(PagePool, allocateIsAllOrNothing) {
    IntegrityLog log;
    PagePool pool(PoolKind::Window, 16, 4, &log);
    std::vector<PageRef> got;
    REQUIRE_EQ(pool.allocate(1, 3, got), KvResult::Ok);
    std::vector<PageRef> more;
    REQUIRE_EQ(pool.allocate(2, 2, more), KvResult::OutOfWindowPages);
    REQUIRE(more.empty());
    REQUIRE_EQ(pool.freeCount(), 1);
    REQUIRE_EQ(pool.allocate(0, 1, more), KvResult::BadArgument);  // nobody may own a page
}

WEIR_TEST(PagePool, doubleFreeIsCaughtAtTheCallWithBothOwners) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 8, &log);
    std::vector<PageRef> a;
    REQUIRE_EQ(pool.allocate(11, 2, a), KvResult::Ok);
    REQUIRE_EQ(pool.release(a[0], 11), KvResult::Ok);
    const std::vector<int32_t> listBefore(pool.freeList().begin(), pool.freeList().end());
    const int32_t freeBefore = pool.freeCount();

    // Request 22 frees request 11's page again.
    REQUIRE_EQ(pool.release(a[0], 22), KvResult::Violation);
    REQUIRE_EQ(log.violations, uint64_t(1));
    const std::string& msg = log.details.front();
    REQUIRE_MSG(contains(msg, "double free"), msg.c_str());
    REQUIRE_MSG(contains(msg, "request 11"), msg.c_str());
    REQUIRE_MSG(contains(msg, "request 22"), msg.c_str());
    REQUIRE_MSG(contains(msg, "page " + std::to_string(a[0].page)), msg.c_str());
    // The free list did not change: no duplicate entry, same order.
    const std::vector<int32_t> listAfter(pool.freeList().begin(), pool.freeList().end());
    REQUIRE_EQ(listAfter, listBefore);
    REQUIRE_EQ(pool.freeCount(), freeBefore);
    // The recount agrees: one page owned (a[1]), no duplicates.
    std::vector<int32_t> refs(8, 0);
    refs[size_t(a[1].page)] = 1;
    std::vector<uint8_t> inTree(8, 0);
    const uint64_t v = log.violations;
    REQUIRE(pool.checkAgainst(refs, inTree));
    REQUIRE_EQ(log.violations, v);
    // Next allocations hand out distinct pages.
    std::vector<PageRef> b;
    REQUIRE_EQ(pool.allocate(33, 7, b), KvResult::Ok);
    std::vector<int32_t> ids;
    for (auto& r : b) ids.push_back(r.page);
    ids.push_back(a[1].page);
    std::sort(ids.begin(), ids.end());
    REQUIRE(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

WEIR_TEST(PagePool, staleHandleCannotFreeTheNextOwnersPage) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 1, &log);
    std::vector<PageRef> a, b;
    REQUIRE_EQ(pool.allocate(1, 1, a), KvResult::Ok);
    REQUIRE_EQ(pool.release(a[0], 1), KvResult::Ok);
    REQUIRE_EQ(pool.allocate(2, 1, b), KvResult::Ok);
    REQUIRE_EQ(b[0].page, a[0].page);
    REQUIRE(b[0].gen != a[0].gen);
    // Request 1 frees its old handle again: the page now belongs to request 2.
    REQUIRE_EQ(pool.release(a[0], 1), KvResult::Violation);
    const std::string& msg = log.details.front();
    REQUIRE_MSG(contains(msg, "stale"), msg.c_str());
    REQUIRE_MSG(contains(msg, "request 1"), msg.c_str());
    REQUIRE_MSG(contains(msg, "request 2"), msg.c_str());
    REQUIRE_EQ(pool.refs(b[0].page), 1);
    REQUIRE_EQ(pool.state(b[0].page), PageState::Owned);
    REQUIRE_EQ(pool.freeCount(), 0);
}

WEIR_TEST(PagePool, exclusivePageReleasedByAnotherHolderIsRefused) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 2, &log);
    std::vector<PageRef> a;
    REQUIRE_EQ(pool.allocate(5, 1, a), KvResult::Ok);
    REQUIRE_EQ(pool.release(a[0], 6), KvResult::Violation);
    REQUIRE(contains(log.details.front(), "request 5"));
    REQUIRE(contains(log.details.front(), "request 6"));
    REQUIRE_EQ(pool.refs(a[0].page), 1);
    REQUIRE_EQ(pool.release(a[0], 5), KvResult::Ok);
    REQUIRE_EQ(pool.freeCount(), 2);
}

WEIR_TEST(PagePool, samePageTwiceInOneCallIsRefusedWhole) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 4, &log);
    std::vector<PageRef> a;
    REQUIRE_EQ(pool.allocate(3, 2, a), KvResult::Ok);
    REQUIRE_EQ(pool.retain(a[0], 4), KvResult::Ok);  // two holders: a refcount alone would allow it
    std::vector<PageRef> twice{a[0], a[1], a[0]};
    REQUIRE_EQ(pool.releaseMany(twice, 3), KvResult::Violation);
    REQUIRE(contains(log.details.front(), "twice in one call"));
    REQUIRE_EQ(pool.refs(a[0].page), 2);
    REQUIRE_EQ(pool.refs(a[1].page), 1);
    std::vector<PageRef> once{a[0], a[1]};
    REQUIRE_EQ(pool.releaseMany(once, 3), KvResult::Ok);
    REQUIRE_EQ(pool.refs(a[0].page), 1);
    REQUIRE_EQ(pool.state(a[1].page), PageState::Free);
}

WEIR_TEST(PagePool, sharingAndTheTree) {
    IntegrityLog log;
    PagePool pool(PoolKind::Full, 16, 4, &log);
    std::vector<PageRef> a;
    REQUIRE_EQ(pool.allocate(1, 1, a), KvResult::Ok);
    const PageRef p = a[0];
    REQUIRE_EQ(pool.adoptIntoTree(p), KvResult::Ok);
    REQUIRE_EQ(pool.state(p.page), PageState::Cached);
    REQUIRE_EQ(pool.refs(p.page), 2);
    REQUIRE_EQ(pool.evictableCount(), 0);
    REQUIRE_EQ(pool.adoptIntoTree(p), KvResult::Violation);  // adopted twice
    REQUIRE_EQ(pool.retain(p, 2), KvResult::Ok);
    REQUIRE_EQ(pool.release(p, 1), KvResult::Ok);
    REQUIRE_EQ(pool.release(p, 2), KvResult::Ok);
    REQUIRE_EQ(pool.refs(p.page), 1);
    REQUIRE_EQ(pool.evictableCount(), 1);
    // Only the tree holds it now: a sequence cannot release it.
    REQUIRE_EQ(pool.release(p, 2), KvResult::Violation);
    bool freed = false;
    REQUIRE_EQ(pool.releaseFromTree(p, &freed), KvResult::Ok);
    REQUIRE(freed);
    REQUIRE_EQ(pool.state(p.page), PageState::Free);
    REQUIRE_EQ(pool.lastFreedBy(p.page), kTreeHolder);
    REQUIRE_EQ(pool.evictableCount(), 0);
    REQUIRE_EQ(pool.cachedCount(), 0);
    REQUIRE_EQ(pool.releaseFromTree(p), KvResult::Violation);
    REQUIRE(pool.checkCounters());
}

WEIR_TEST(PagePool, growMoveShrink) {
    IntegrityLog log;
    PagePool pool(PoolKind::Window, 4, 4, &log);
    std::vector<PageRef> a;
    REQUIRE_EQ(pool.allocate(1, 4, a), KvResult::Ok);
    pool.grow(8);
    REQUIRE_EQ(pool.capacity(), 8);
    REQUIRE_EQ(pool.freeCount(), 4);
    REQUIRE(!pool.shrinkTo(2));  // pages 2, 3 are live
    REQUIRE_EQ(pool.release(a[0], 1), KvResult::Ok);
    REQUIRE_EQ(pool.release(a[1], 1), KvResult::Ok);
    const PageRef m2 = pool.movePage(2, pool.lowestFreeBelow(2));
    const PageRef m3 = pool.movePage(3, pool.lowestFreeBelow(2));
    REQUIRE_EQ(m2.page, 0);
    REQUIRE_EQ(m3.page, 1);
    REQUIRE(!pool.live(a[2]));  // old handles are stale
    REQUIRE_EQ(pool.owner(0), Holder(1));
    REQUIRE(pool.shrinkTo(2));
    REQUIRE_EQ(pool.capacity(), 2);
    REQUIRE_EQ(pool.freeCount(), 0);
    REQUIRE_EQ(pool.release(m2, 1), KvResult::Ok);
    REQUIRE_EQ(pool.release(m3, 1), KvResult::Ok);
    REQUIRE_EQ(pool.freeCount(), 2);
    REQUIRE(pool.checkCounters());
    REQUIRE_EQ(log.violations, uint64_t(0));
}
