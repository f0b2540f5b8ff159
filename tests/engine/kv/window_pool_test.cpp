// Window pages are bound to exactly one full page, with a reverse map; the
// binding is checked when a window page is released.
#include <QtTest>

#include <string>
#include <vector>

#include "engine/kv/window_pool.h"

using namespace weir::kv;

class WindowPoolTest : public QObject {
    Q_OBJECT

private slots:
    void bindAndRelease() {
        IntegrityLog log;
        PagePool full(PoolKind::Full, 4, 8, &log);
        WindowPool win(4, 4, 8, &log);
        std::vector<PageRef> f, w;
        QCOMPARE(full.allocate(1, 2, f), KvResult::Ok);
        QCOMPARE(win.pages().allocate(1, 2, w), KvResult::Ok);
        QCOMPARE(win.bind(w[0], f[0].page), KvResult::Ok);
        QCOMPARE(win.bind(w[1], f[1].page), KvResult::Ok);
        QCOMPARE(win.fullOf(w[0].page), f[0].page);
        QCOMPARE(win.windowOf(f[0].page), w[0].page);
        QCOMPARE(win.boundCount(), 2);
        QVERIFY(win.checkBindings(full));

        bool freed = false;
        QCOMPARE(win.release(w[0], 1, f[0].page, &freed), KvResult::Ok);
        QVERIFY(freed);
        QCOMPARE(win.windowOf(f[0].page), -1);
        QCOMPARE(win.fullOf(w[0].page), -1);
        QCOMPARE(win.boundCount(), 1);
        QVERIFY(win.checkBindings(full));
        QCOMPARE(log.violations, uint64_t(0));
    }

    void secondBindingOfAFullPageIsRefused() {
        // The peer failure: a second owner overwrote a live full->window mapping.
        IntegrityLog log;
        PagePool full(PoolKind::Full, 4, 8, &log);
        WindowPool win(4, 4, 8, &log);
        std::vector<PageRef> f, w;
        QCOMPARE(full.allocate(1, 1, f), KvResult::Ok);
        QCOMPARE(win.pages().allocate(1, 2, w), KvResult::Ok);
        QCOMPARE(win.bind(w[0], f[0].page), KvResult::Ok);
        QCOMPARE(win.bind(w[1], f[0].page), KvResult::Violation);
        QVERIFY(log.details.front().find("already bound") != std::string::npos);
        QCOMPARE(win.windowOf(f[0].page), w[0].page);  // the live mapping survived
        QCOMPARE(win.fullOf(w[1].page), -1);
        // A window page cannot be bound twice either.
        std::vector<PageRef> f2;
        QCOMPARE(full.allocate(1, 1, f2), KvResult::Ok);
        QCOMPARE(win.bind(w[0], f2[0].page), KvResult::Violation);
        QCOMPARE(win.fullOf(w[0].page), f[0].page);
    }

    void releaseWithTheWrongFullPageIsRefused() {
        IntegrityLog log;
        PagePool full(PoolKind::Full, 4, 8, &log);
        WindowPool win(4, 4, 8, &log);
        std::vector<PageRef> f, w;
        QCOMPARE(full.allocate(9, 2, f), KvResult::Ok);
        QCOMPARE(win.pages().allocate(9, 1, w), KvResult::Ok);
        QCOMPARE(win.bind(w[0], f[0].page), KvResult::Ok);
        QCOMPARE(win.release(w[0], 9, f[1].page), KvResult::Violation);
        QVERIFY(log.details.front().find("bound to full page " + std::to_string(f[0].page)) != std::string::npos);
        QCOMPARE(win.pages().state(w[0].page), PageState::Owned);
        QCOMPARE(win.windowOf(f[0].page), w[0].page);
        // Double free through the window side: the pool names both holders.
        QCOMPARE(win.release(w[0], 9, f[0].page), KvResult::Ok);
        QCOMPARE(win.release(w[0], 10, f[0].page), KvResult::Violation);
        QVERIFY(log.details.front().find("double free") != std::string::npos);
        QVERIFY(log.details.front().find("request 9") != std::string::npos);
        QVERIFY(log.details.front().find("request 10") != std::string::npos);
        QCOMPARE(win.pages().freeCount(), 4);
    }

    void sharedWindowPageKeepsItsBindingUntilTheLastReference() {
        IntegrityLog log;
        PagePool full(PoolKind::Full, 4, 8, &log);
        WindowPool win(4, 4, 8, &log);
        std::vector<PageRef> f, w;
        QCOMPARE(full.allocate(1, 1, f), KvResult::Ok);
        QCOMPARE(win.pages().allocate(1, 1, w), KvResult::Ok);
        QCOMPARE(win.bind(w[0], f[0].page), KvResult::Ok);
        QCOMPARE(win.pages().retain(w[0], 2), KvResult::Ok);
        bool freed = true;
        QCOMPARE(win.release(w[0], 1, f[0].page, &freed), KvResult::Ok);
        QVERIFY(!freed);
        QCOMPARE(win.windowOf(f[0].page), w[0].page);
        QCOMPARE(win.release(w[0], 2, f[0].page, &freed), KvResult::Ok);
        QVERIFY(freed);
        QCOMPARE(win.windowOf(f[0].page), -1);
    }

    void movesKeepBindings() {
        IntegrityLog log;
        PagePool full(PoolKind::Full, 4, 8, &log);
        WindowPool win(4, 4, 8, &log);
        std::vector<PageRef> f, w;
        QCOMPARE(full.allocate(1, 3, f), KvResult::Ok);
        QCOMPARE(win.pages().allocate(1, 3, w), KvResult::Ok);
        for (int i = 0; i < 3; ++i) QCOMPARE(win.bind(w[size_t(i)], f[size_t(i)].page), KvResult::Ok);
        QCOMPARE(win.release(w[0], 1, f[0].page), KvResult::Ok);
        const PageRef moved = win.moveWindowPage(w[2].page, 0);
        QCOMPARE(moved.page, 0);
        QCOMPARE(win.fullOf(0), f[2].page);
        QCOMPARE(win.windowOf(f[2].page), 0);
        full.release(f[0], 1);
        const PageRef fm = full.movePage(f[2].page, f[0].page);
        win.moveFullPage(f[2].page, fm.page);
        QCOMPARE(win.fullOf(0), fm.page);
        QCOMPARE(win.windowOf(fm.page), 0);
        QVERIFY(win.checkBindings(full));
        QCOMPARE(log.violations, uint64_t(0));
    }
};

QTEST_APPLESS_MAIN(WindowPoolTest)
#include "window_pool_test.moc"
