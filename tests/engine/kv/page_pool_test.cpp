// The page pool: state transitions, counters, and the failures it must catch
// at the call (double free, stale handle, wrong owner, duplicate in one call).
#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/kv/page_pool.h"

using namespace weir::kv;

class PagePoolTest : public QObject {
    Q_OBJECT

    static bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

private slots:
    void allocateMovesFreeToOwned() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 8, &log);
        std::vector<PageRef> got;
        QCOMPARE(pool.allocate(7, 3, got), KvResult::Ok);
        QCOMPARE(int(got.size()), 3);
        QCOMPARE(pool.freeCount(), 5);
        QCOMPARE(pool.ownedCount(), 3);
        for (const PageRef& r : got) {
            QCOMPARE(pool.state(r.page), PageState::Owned);
            QCOMPARE(pool.refs(r.page), 1);
            QCOMPARE(pool.owner(r.page), Holder(7));
            QVERIFY(pool.live(r));
        }
        // Low ids first, distinct.
        QCOMPARE(got[0].page, 0);
        QCOMPARE(got[1].page, 1);
        QCOMPARE(got[2].page, 2);
        QVERIFY(pool.checkCounters());
        QCOMPARE(log.violations, uint64_t(0));
    }

    void allocateIsAllOrNothing() {
        IntegrityLog log;
        PagePool pool(PoolKind::Window, 16, 4, &log);
        std::vector<PageRef> got;
        QCOMPARE(pool.allocate(1, 3, got), KvResult::Ok);
        std::vector<PageRef> more;
        QCOMPARE(pool.allocate(2, 2, more), KvResult::OutOfWindowPages);
        QVERIFY(more.empty());
        QCOMPARE(pool.freeCount(), 1);
        QCOMPARE(pool.allocate(0, 1, more), KvResult::BadArgument);  // nobody may own a page
    }

    void doubleFreeIsCaughtAtTheCallWithBothOwners() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 8, &log);
        std::vector<PageRef> a;
        QCOMPARE(pool.allocate(11, 2, a), KvResult::Ok);
        QCOMPARE(pool.release(a[0], 11), KvResult::Ok);
        const std::vector<int32_t> listBefore(pool.freeList().begin(), pool.freeList().end());
        const int32_t freeBefore = pool.freeCount();

        // Request 22 frees request 11's page again.
        QCOMPARE(pool.release(a[0], 22), KvResult::Violation);
        QCOMPARE(log.violations, uint64_t(1));
        const std::string& msg = log.details.front();
        QVERIFY2(contains(msg, "double free"), msg.c_str());
        QVERIFY2(contains(msg, "request 11"), msg.c_str());
        QVERIFY2(contains(msg, "request 22"), msg.c_str());
        QVERIFY2(contains(msg, "page " + std::to_string(a[0].page)), msg.c_str());
        // The free list did not change: no duplicate entry, same order.
        const std::vector<int32_t> listAfter(pool.freeList().begin(), pool.freeList().end());
        QCOMPARE(listAfter, listBefore);
        QCOMPARE(pool.freeCount(), freeBefore);
        // The recount agrees: one page owned (a[1]), no duplicates.
        std::vector<int32_t> refs(8, 0);
        refs[size_t(a[1].page)] = 1;
        std::vector<uint8_t> inTree(8, 0);
        const uint64_t v = log.violations;
        QVERIFY(pool.checkAgainst(refs, inTree));
        QCOMPARE(log.violations, v);
        // Next allocations hand out distinct pages.
        std::vector<PageRef> b;
        QCOMPARE(pool.allocate(33, 7, b), KvResult::Ok);
        std::vector<int32_t> ids;
        for (auto& r : b) ids.push_back(r.page);
        ids.push_back(a[1].page);
        std::sort(ids.begin(), ids.end());
        QVERIFY(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
    }

    void staleHandleCannotFreeTheNextOwnersPage() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 1, &log);
        std::vector<PageRef> a, b;
        QCOMPARE(pool.allocate(1, 1, a), KvResult::Ok);
        QCOMPARE(pool.release(a[0], 1), KvResult::Ok);
        QCOMPARE(pool.allocate(2, 1, b), KvResult::Ok);
        QCOMPARE(b[0].page, a[0].page);
        QVERIFY(b[0].gen != a[0].gen);
        // Request 1 frees its old handle again: the page now belongs to request 2.
        QCOMPARE(pool.release(a[0], 1), KvResult::Violation);
        const std::string& msg = log.details.front();
        QVERIFY2(contains(msg, "stale"), msg.c_str());
        QVERIFY2(contains(msg, "request 1"), msg.c_str());
        QVERIFY2(contains(msg, "request 2"), msg.c_str());
        QCOMPARE(pool.refs(b[0].page), 1);
        QCOMPARE(pool.state(b[0].page), PageState::Owned);
        QCOMPARE(pool.freeCount(), 0);
    }

    void exclusivePageReleasedByAnotherHolderIsRefused() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 2, &log);
        std::vector<PageRef> a;
        QCOMPARE(pool.allocate(5, 1, a), KvResult::Ok);
        QCOMPARE(pool.release(a[0], 6), KvResult::Violation);
        QVERIFY(contains(log.details.front(), "request 5"));
        QVERIFY(contains(log.details.front(), "request 6"));
        QCOMPARE(pool.refs(a[0].page), 1);
        QCOMPARE(pool.release(a[0], 5), KvResult::Ok);
        QCOMPARE(pool.freeCount(), 2);
    }

    void samePageTwiceInOneCallIsRefusedWhole() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 4, &log);
        std::vector<PageRef> a;
        QCOMPARE(pool.allocate(3, 2, a), KvResult::Ok);
        QCOMPARE(pool.retain(a[0], 4), KvResult::Ok);  // two holders: a refcount alone would allow it
        std::vector<PageRef> twice{a[0], a[1], a[0]};
        QCOMPARE(pool.releaseMany(twice, 3), KvResult::Violation);
        QVERIFY(contains(log.details.front(), "twice in one call"));
        QCOMPARE(pool.refs(a[0].page), 2);
        QCOMPARE(pool.refs(a[1].page), 1);
        std::vector<PageRef> once{a[0], a[1]};
        QCOMPARE(pool.releaseMany(once, 3), KvResult::Ok);
        QCOMPARE(pool.refs(a[0].page), 1);
        QCOMPARE(pool.state(a[1].page), PageState::Free);
    }

    void sharingAndTheTree() {
        IntegrityLog log;
        PagePool pool(PoolKind::Full, 16, 4, &log);
        std::vector<PageRef> a;
        QCOMPARE(pool.allocate(1, 1, a), KvResult::Ok);
        const PageRef p = a[0];
        QCOMPARE(pool.adoptIntoTree(p), KvResult::Ok);
        QCOMPARE(pool.state(p.page), PageState::Cached);
        QCOMPARE(pool.refs(p.page), 2);
        QCOMPARE(pool.evictableCount(), 0);
        QCOMPARE(pool.adoptIntoTree(p), KvResult::Violation);  // adopted twice
        QCOMPARE(pool.retain(p, 2), KvResult::Ok);
        QCOMPARE(pool.release(p, 1), KvResult::Ok);
        QCOMPARE(pool.release(p, 2), KvResult::Ok);
        QCOMPARE(pool.refs(p.page), 1);
        QCOMPARE(pool.evictableCount(), 1);
        // Only the tree holds it now: a sequence cannot release it.
        QCOMPARE(pool.release(p, 2), KvResult::Violation);
        bool freed = false;
        QCOMPARE(pool.releaseFromTree(p, &freed), KvResult::Ok);
        QVERIFY(freed);
        QCOMPARE(pool.state(p.page), PageState::Free);
        QCOMPARE(pool.lastFreedBy(p.page), kTreeHolder);
        QCOMPARE(pool.evictableCount(), 0);
        QCOMPARE(pool.cachedCount(), 0);
        QCOMPARE(pool.releaseFromTree(p), KvResult::Violation);
        QVERIFY(pool.checkCounters());
    }

    void growMoveShrink() {
        IntegrityLog log;
        PagePool pool(PoolKind::Window, 4, 4, &log);
        std::vector<PageRef> a;
        QCOMPARE(pool.allocate(1, 4, a), KvResult::Ok);
        pool.grow(8);
        QCOMPARE(pool.capacity(), 8);
        QCOMPARE(pool.freeCount(), 4);
        QVERIFY(!pool.shrinkTo(2));  // pages 2, 3 are live
        QCOMPARE(pool.release(a[0], 1), KvResult::Ok);
        QCOMPARE(pool.release(a[1], 1), KvResult::Ok);
        const PageRef m2 = pool.movePage(2, pool.lowestFreeBelow(2));
        const PageRef m3 = pool.movePage(3, pool.lowestFreeBelow(2));
        QCOMPARE(m2.page, 0);
        QCOMPARE(m3.page, 1);
        QVERIFY(!pool.live(a[2]));  // old handles are stale
        QCOMPARE(pool.owner(0), Holder(1));
        QVERIFY(pool.shrinkTo(2));
        QCOMPARE(pool.capacity(), 2);
        QCOMPARE(pool.freeCount(), 0);
        QCOMPARE(pool.release(m2, 1), KvResult::Ok);
        QCOMPARE(pool.release(m3, 1), KvResult::Ok);
        QCOMPARE(pool.freeCount(), 2);
        QVERIFY(pool.checkCounters());
        QCOMPARE(log.violations, uint64_t(0));
    }
};

QTEST_APPLESS_MAIN(PagePoolTest)
#include "page_pool_test.moc"
