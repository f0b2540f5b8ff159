// Window pages are bound to exactly one full page, with a reverse map; the
// binding is checked when a window page is released.
#include "tests/support/weir_test.h"

#include <string>
#include <vector>

#include "engine/kv/window_pool.h"

using namespace weir::kv;

WEIR_TEST(WindowPool, bindAndRelease) {
    IntegrityLog log;
    PagePool full(PoolKind::Full, 4, 8, &log);
    WindowPool win(4, 4, 8, &log);
    std::vector<PageRef> f, w;
    REQUIRE_EQ(full.allocate(1, 2, f), KvResult::Ok);
    REQUIRE_EQ(win.pages().allocate(1, 2, w), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[0], f[0].page), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[1], f[1].page), KvResult::Ok);
    REQUIRE_EQ(win.fullOf(w[0].page), f[0].page);
    REQUIRE_EQ(win.windowOf(f[0].page), w[0].page);
    REQUIRE_EQ(win.boundCount(), 2);
    REQUIRE(win.checkBindings(full));

    bool freed = false;
    REQUIRE_EQ(win.release(w[0], 1, f[0].page, &freed), KvResult::Ok);
    REQUIRE(freed);
    REQUIRE_EQ(win.windowOf(f[0].page), -1);
    REQUIRE_EQ(win.fullOf(w[0].page), -1);
    REQUIRE_EQ(win.boundCount(), 1);
    REQUIRE(win.checkBindings(full));
    REQUIRE_EQ(log.violations, uint64_t(0));
}

WEIR_TEST(WindowPool, secondBindingOfAFullPageIsRefused) {
    // The peer failure: a second owner overwrote a live full->window mapping.
    IntegrityLog log;
    PagePool full(PoolKind::Full, 4, 8, &log);
    WindowPool win(4, 4, 8, &log);
    std::vector<PageRef> f, w;
    REQUIRE_EQ(full.allocate(1, 1, f), KvResult::Ok);
    REQUIRE_EQ(win.pages().allocate(1, 2, w), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[0], f[0].page), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[1], f[0].page), KvResult::Violation);
    REQUIRE(log.details.front().find("already bound") != std::string::npos);
    REQUIRE_EQ(win.windowOf(f[0].page), w[0].page);  // the live mapping survived
    REQUIRE_EQ(win.fullOf(w[1].page), -1);
    // A window page cannot be bound twice either.
    std::vector<PageRef> f2;
    REQUIRE_EQ(full.allocate(1, 1, f2), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[0], f2[0].page), KvResult::Violation);
    REQUIRE_EQ(win.fullOf(w[0].page), f[0].page);
}

WEIR_TEST(WindowPool, releaseWithTheWrongFullPageIsRefused) {
    IntegrityLog log;
    PagePool full(PoolKind::Full, 4, 8, &log);
    WindowPool win(4, 4, 8, &log);
    std::vector<PageRef> f, w;
    REQUIRE_EQ(full.allocate(9, 2, f), KvResult::Ok);
    REQUIRE_EQ(win.pages().allocate(9, 1, w), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[0], f[0].page), KvResult::Ok);
    REQUIRE_EQ(win.release(w[0], 9, f[1].page), KvResult::Violation);
    REQUIRE(log.details.front().find("bound to full page " + std::to_string(f[0].page)) != std::string::npos);
    REQUIRE_EQ(win.pages().state(w[0].page), PageState::Owned);
    REQUIRE_EQ(win.windowOf(f[0].page), w[0].page);
    // Double free through the window side: the pool names both holders.
    REQUIRE_EQ(win.release(w[0], 9, f[0].page), KvResult::Ok);
    REQUIRE_EQ(win.release(w[0], 10, f[0].page), KvResult::Violation);
    REQUIRE(log.details.front().find("double free") != std::string::npos);
    REQUIRE(log.details.front().find("request 9") != std::string::npos);
    REQUIRE(log.details.front().find("request 10") != std::string::npos);
    REQUIRE_EQ(win.pages().freeCount(), 4);
}

WEIR_TEST(WindowPool, sharedWindowPageKeepsItsBindingUntilTheLastReference) {
    IntegrityLog log;
    PagePool full(PoolKind::Full, 4, 8, &log);
    WindowPool win(4, 4, 8, &log);
    std::vector<PageRef> f, w;
    REQUIRE_EQ(full.allocate(1, 1, f), KvResult::Ok);
    REQUIRE_EQ(win.pages().allocate(1, 1, w), KvResult::Ok);
    REQUIRE_EQ(win.bind(w[0], f[0].page), KvResult::Ok);
    REQUIRE_EQ(win.pages().retain(w[0], 2), KvResult::Ok);
    bool freed = true;
    REQUIRE_EQ(win.release(w[0], 1, f[0].page, &freed), KvResult::Ok);
    REQUIRE(!freed);
    REQUIRE_EQ(win.windowOf(f[0].page), w[0].page);
    REQUIRE_EQ(win.release(w[0], 2, f[0].page, &freed), KvResult::Ok);
    REQUIRE(freed);
    REQUIRE_EQ(win.windowOf(f[0].page), -1);
}

WEIR_TEST(WindowPool, movesKeepBindings) {
    IntegrityLog log;
    PagePool full(PoolKind::Full, 4, 8, &log);
    WindowPool win(4, 4, 8, &log);
    std::vector<PageRef> f, w;
    REQUIRE_EQ(full.allocate(1, 3, f), KvResult::Ok);
    REQUIRE_EQ(win.pages().allocate(1, 3, w), KvResult::Ok);
    for (int i = 0; i < 3; ++i) REQUIRE_EQ(win.bind(w[size_t(i)], f[size_t(i)].page), KvResult::Ok);
    REQUIRE_EQ(win.release(w[0], 1, f[0].page), KvResult::Ok);
    const PageRef moved = win.moveWindowPage(w[2].page, 0);
    REQUIRE_EQ(moved.page, 0);
    REQUIRE_EQ(win.fullOf(0), f[2].page);
    REQUIRE_EQ(win.windowOf(f[2].page), 0);
    full.release(f[0], 1);
    const PageRef fm = full.movePage(f[2].page, f[0].page);
    win.moveFullPage(f[2].page, fm.page);
    REQUIRE_EQ(win.fullOf(0), fm.page);
    REQUIRE_EQ(win.windowOf(fm.page), 0);
    REQUIRE(win.checkBindings(full));
    REQUIRE_EQ(log.violations, uint64_t(0));
}
