// The hybrid cache through its public API: storage through KvAccess, window
// release, all-or-nothing allocation, LRU eviction order, the window-reuse
// rule, live resizing and the status it reports.
#include "tests/support/weir_test.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "engine/kv/hybrid_kv_cache.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::kv;

namespace {

// P 4, W 8; layer 0 full-attention, layer 1 sliding; 32 values a row (f16: 64 bytes).
KvCacheConfig smallConfig(int64_t fullTokens = 64, int64_t windowTokens = 40) {
    KvCacheConfig c;
    c.pageSize = 4;
    c.window = 8;
    c.fullTokens = fullTokens;
    c.windowTokens = windowTokens;
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

uint8_t* rowOf(const HybridKvCache& c, int32_t layer, int32_t seq, int32_t pos) {
    const auto table = c.pageTable(layer, seq);
    const int32_t page = table[size_t(pos / c.pageSize())];
    if (page < 0) return nullptr;
    const KvLayerStorage st = c.layer(layer);
    return st.k + size_t(page * c.pageSize() + pos % c.pageSize()) * st.rowBytes;
}

} // namespace

WEIR_TEST(HybridKvCache, storageThroughKvAccess) {
    HybridKvCache c(smallConfig());
    REQUIRE(c.hasWindow());
    const int32_t s = c.openSequence(1);
    REQUIRE_EQ(c.allocate(s, 10), KvResult::Ok);
    REQUIRE_EQ(int(c.pageTable(0, s).size()), 3);
    REQUIRE_EQ(int(c.pageTable(1, s).size()), 3);
    REQUIRE_EQ(c.layer(0).rowBytes, size_t(64));
    REQUIRE(c.layer(0).k != c.layer(1).k);  // different pools, different storage
    for (int32_t pos = 0; pos < 10; ++pos)
        for (int32_t l = 0; l < 2; ++l) std::memset(rowOf(c, l, s, pos), 10 * l + pos, 64);
    for (int32_t pos = 0; pos < 10; ++pos)
        for (int32_t l = 0; l < 2; ++l) REQUIRE_EQ(int(rowOf(c, l, s, pos)[63]), 10 * l + pos);
    REQUIRE(c.pageTable(0, 99).empty());
    REQUIRE(c.checkIntegrity());
}

WEIR_TEST(HybridKvCache, windowPagesFallBehindAndAreReleased) {
    HybridKvCache c(smallConfig());
    const int32_t s = c.openSequence(1);
    REQUIRE_EQ(c.allocate(s, 20), KvResult::Ok);
    REQUIRE_EQ(c.freePages(PoolKind::Window), int64_t(5));
    // The next token (position 20) attends to 13..20: pages 0..2 are behind.
    REQUIRE_EQ(c.releaseOutOfWindow(s), int64_t(3));
    REQUIRE_EQ(c.sequenceInfo(s).windowStart, int64_t(12));
    const auto wt = c.pageTable(1, s);
    REQUIRE_EQ(wt[0], -1);
    REQUIRE_EQ(wt[2], -1);
    REQUIRE(wt[3] >= 0);
    REQUIRE_EQ(int(c.pageTable(0, s).size()), 5);  // full pages stay
    REQUIRE_EQ(c.freePages(PoolKind::Window), int64_t(8));
    REQUIRE_EQ(c.releaseOutOfWindow(s), int64_t(0));  // nothing more yet
    REQUIRE_EQ(c.allocate(s, 1), KvResult::Ok);         // length 21: 14.. still in page 3
    REQUIRE_EQ(c.releaseOutOfWindow(s), int64_t(0));
    REQUIRE_EQ(c.allocate(s, 3), KvResult::Ok);         // length 24: 17.. page 3 is behind
    REQUIRE_EQ(c.releaseOutOfWindow(s), int64_t(1));
    REQUIRE_EQ(c.sequenceInfo(s).windowStart, int64_t(16));
    REQUIRE_EQ(c.sequenceInfo(s).windowTokens, int64_t(8));
    REQUIRE(c.checkIntegrity());
    c.closeSequence(s);
    REQUIRE_EQ(c.freePages(PoolKind::Window), int64_t(10));
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(16));
    REQUIRE(c.checkIntegrity());
}

WEIR_TEST(HybridKvCache, allocationIsAllOrNothing) {
    HybridKvCache c(smallConfig());
    const int32_t a = c.openSequence(1);
    REQUIRE_EQ(c.allocate(a, 36), KvResult::Ok);
    c.releaseOutOfWindow(a);
    const int32_t b = c.openSequence(2);
    REQUIRE_EQ(c.need(b, 32).fullPages, int64_t(8));
    REQUIRE_EQ(c.allocate(b, 32), KvResult::OutOfFullPages);  // 7 full pages left
    REQUIRE_EQ(c.sequenceInfo(b).length, int64_t(0));
    REQUIRE(c.pageTable(0, b).empty());
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(7));
    REQUIRE_EQ(c.freePages(PoolKind::Window), int64_t(8));
    // Window pool short while the full pool has room.
    c.closeSequence(a);
    REQUIRE_EQ(c.allocate(b, 44), KvResult::OutOfWindowPages);  // 11 window pages > 10
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(16));
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.allocate(b, 0), KvResult::Ok);
    REQUIRE_EQ(c.allocate(99, 1), KvResult::BadArgument);
}

WEIR_TEST(HybridKvCache, lruEvictionOrder) {
    HybridKvCache c(smallConfig());
    const auto A = tokens(100, 9), B = tokens(200, 9), C = tokens(300, 9);
    for (const auto* p : {&A, &B, &C}) {
        const int32_t s = c.openSequence(7);
        REQUIRE_EQ(c.allocate(s, 8), KvResult::Ok);
        REQUIRE_EQ(c.cachePrefix(s, std::span(*p).first(8)), int64_t(2));
        c.closeSequence(s);
    }
    REQUIRE_EQ(c.evictablePages(PoolKind::Full), int64_t(6));
    // A is used again: it becomes the most recent.
    const int32_t d = c.openSequence(8);
    REQUIRE_EQ(c.attachPrefix(d, A).reuseTokens, int64_t(8));
    REQUIRE_EQ(c.sequenceInfo(d).prefixHitTokens, int64_t(8));
    REQUIRE_EQ(c.evictablePages(PoolKind::Full), int64_t(4));  // A is pinned while d uses it
    c.closeSequence(d);
    // Least recently used first, leaf first: B goes entirely, then C's tail.
    REQUIRE_EQ(c.evict(PoolKind::Full, 2), int64_t(2));
    REQUIRE_EQ(c.matchPrefix(B).cachedTokens, int64_t(0));
    REQUIRE_EQ(c.matchPrefix(A).cachedTokens, int64_t(8));
    REQUIRE_EQ(c.matchPrefix(C).cachedTokens, int64_t(8));
    REQUIRE_EQ(c.evict(PoolKind::Full, 1), int64_t(1));
    REQUIRE_EQ(c.matchPrefix(C).cachedTokens, int64_t(4));
    REQUIRE_EQ(c.matchPrefix(A).cachedTokens, int64_t(8));
    REQUIRE(c.checkIntegrity());

    // Allocation evicts window content when the window free list is short:
    // 10 window pages needed, 7 free, C's then A's window pages (LRU) go.
    const int32_t e = c.openSequence(9);
    REQUIRE_EQ(c.allocate(e, 40), KvResult::Ok);
    REQUIRE_EQ(c.freePages(PoolKind::Window), int64_t(0));
    const PrefixMatch ma = c.matchPrefix(A);
    REQUIRE_EQ(ma.cachedTokens, int64_t(8));   // full pages survive (tombstones)
    REQUIRE_EQ(ma.reuseTokens, int64_t(0));    // but the window content is gone
    REQUIRE_EQ(ma.windowRecomputeTokens, int64_t(8));
    REQUIRE(c.checkIntegrity());
}

WEIR_TEST(HybridKvCache, windowReuseRule) {
    // P 4, W 8: a match ending at j pages needs window pages covering
    // positions [4j - 7, 4j).
    HybridKvCache c(smallConfig(64, 64));
    const auto prompt = tokens(1, 25);
    const int32_t a = c.openSequence(1);
    REQUIRE_EQ(c.allocate(a, 24), KvResult::Ok);
    REQUIRE_EQ(c.cachePrefix(a, std::span(prompt).first(24)), int64_t(6));
    c.closeSequence(a);
    PrefixMatch m = c.matchPrefix(prompt);
    REQUIRE_EQ(m.cachedTokens, int64_t(24));
    REQUIRE_EQ(m.reuseTokens, int64_t(24));
    // A short reuse touches pages 0 and 1, so they are the most recent.
    const int32_t b = c.openSequence(2);
    REQUIRE_EQ(c.attachPrefix(b, std::span(prompt).first(9)).reuseTokens, int64_t(8));
    c.closeSequence(b);
    // Tombstone pages 2 and 3 (the least recently used window content):
    // the last window before 24 (pages 4, 5) is intact, so all 24 reuse.
    REQUIRE_EQ(c.evict(PoolKind::Window, 2), int64_t(2));
    m = c.matchPrefix(prompt);
    REQUIRE_EQ(m.reuseTokens, int64_t(24));
    REQUIRE_EQ(m.windowRecomputeTokens, int64_t(0));
    // Tombstone page 4: j = 6, 5, 4, 3 lack window content; j = 2 needs
    // pages 0..1, present -> reuse 8, recompute 16.
    REQUIRE_EQ(c.evict(PoolKind::Window, 1), int64_t(1));
    m = c.matchPrefix(prompt);
    REQUIRE_EQ(m.cachedTokens, int64_t(24));
    REQUIRE_EQ(m.reuseTokens, int64_t(8));
    REQUIRE_EQ(m.windowRecomputeTokens, int64_t(16));
    const int32_t s = c.openSequence(3);
    const PrefixMatch got = c.attachPrefix(s, prompt);
    REQUIRE_EQ(got.reuseTokens, int64_t(8));
    REQUIRE_EQ(c.sequenceInfo(s).length, int64_t(8));
    REQUIRE_EQ(c.sequenceInfo(s).windowStart, int64_t(0));
    REQUIRE_EQ(c.need(s, 17).fullPages, int64_t(5));  // positions 8..24 -> pages 2..6
    REQUIRE_EQ(c.need(got, 17).fullPages, int64_t(5));
    REQUIRE(c.checkIntegrity());
    // The last token is never matched: a prompt of exactly 24 tokens matches 20.
    REQUIRE_EQ(c.matchPrefix(std::span(prompt).first(24)).cachedTokens, int64_t(20));
}

WEIR_TEST(HybridKvCache, attachTakesOnlyTheLastWindow) {
    HybridKvCache c(smallConfig(64, 64));
    const auto prompt = tokens(1, 21);
    const int32_t a = c.openSequence(1);
    REQUIRE_EQ(c.allocate(a, 20), KvResult::Ok);
    c.cachePrefix(a, std::span(prompt).first(20));
    c.closeSequence(a);
    const int32_t s = c.openSequence(2);
    REQUIRE_EQ(c.attachPrefix(s, prompt).reuseTokens, int64_t(20));
    // Next position 20 attends to 13..20: window pages 3 and 4 only.
    REQUIRE_EQ(c.sequenceInfo(s).windowStart, int64_t(12));
    REQUIRE_EQ(c.sequenceInfo(s).windowTokens, int64_t(8));
    REQUIRE_EQ(c.sequenceInfo(s).fullTokens, int64_t(20));
    REQUIRE_EQ(c.pageTable(1, s)[2], -1);
    REQUIRE(c.pageTable(1, s)[3] >= 0);
    REQUIRE(c.checkIntegrity());
}

WEIR_TEST(HybridKvCache, prefixComputedTwiceKeepsOneCopy) {
    // Two sequences compute the same 24 tokens (6 pages) side by side; a
    // caches them first and goes on. The copy b made must not sit beside
    // the tree's with the tree's pinned by b's lock: behind b's window b
    // switches to the tree's pages at once; inside it, the tree's copy has
    // lost its window content (tombstones) and is still used by a, so b
    // keeps its own there, uncached, until a is gone.
    HybridKvCache c(smallConfig(64, 64));
    const auto t = tokens(100, 24);
    const int32_t a = c.openSequence(1), b = c.openSequence(2);
    REQUIRE_EQ(c.allocate(a, 24), KvResult::Ok);
    REQUIRE_EQ(c.allocate(b, 24), KvResult::Ok);
    REQUIRE_EQ(c.cachePrefix(a, t), int64_t(6));
    REQUIRE_EQ(c.allocate(a, 8), KvResult::Ok);
    REQUIRE_EQ(c.releaseOutOfWindow(a), int64_t(6));
    REQUIRE_EQ(c.releaseOutOfWindow(b), int64_t(4));
    REQUIRE_EQ(c.evict(PoolKind::Window, 16), int64_t(6));
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(2));

    REQUIRE_EQ(c.cachePrefix(b, t), int64_t(0));
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(6));  // b's first 4 pages: the tree's now
    c.closeSequence(a);
    REQUIRE(c.checkIntegrity());
    // Everything b does not use can be had: free, or cached and unlocked.
    REQUIRE_EQ(c.freePages(PoolKind::Full) + c.evictablePages(PoolKind::Full), int64_t(16 - 6));
    REQUIRE_EQ(c.evictablePages(PoolKind::Full), int64_t(2));

    // b caches again (its next chunk): the unlocked tombstones take b's
    // pages and window content; one copy is left.
    REQUIRE_EQ(c.cachePrefix(b, t), int64_t(0));
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(16 - 6));
    REQUIRE_EQ(c.evictablePages(PoolKind::Full), int64_t(0));
    REQUIRE_EQ(c.sequenceInfo(b).fullTokens, int64_t(24));
    c.closeSequence(b);
    REQUIRE_EQ(c.evictablePages(PoolKind::Full), int64_t(6));
    REQUIRE_EQ(c.matchPrefix(tokens(100, 25)).reuseTokens, int64_t(24));
    REQUIRE(c.checkIntegrity());
}

WEIR_TEST(HybridKvCache, resizeGrowAndShrink) {
    KvCacheConfig cfg = smallConfig(128, 40);
    cfg.fullFloorTokens = 8;
    HybridKvCache c(cfg);
    // A cached prefix of 10 pages, then a running sequence on pages 10..13.
    const auto prompt = tokens(1, 40);
    const int32_t a = c.openSequence(1);
    REQUIRE_EQ(c.allocate(a, 40), KvResult::Ok);
    c.cachePrefix(a, prompt);
    c.closeSequence(a);
    const int32_t b = c.openSequence(2);
    REQUIRE_EQ(c.allocate(b, 16), KvResult::Ok);  // evicts 4 cached window pages
    for (int32_t pos = 0; pos < 16; ++pos)
        for (int32_t l = 0; l < 2; ++l) std::memset(rowOf(c, l, b, pos), 1 + pos + 20 * l, 64);
    REQUIRE(c.pageTable(0, b)[0] >= 10);

    // Shrink to 8 pages: 6 cached pages evicted, b's pages moved below 8.
    ResizeResult r = c.resize(PoolKind::Full, 32);
    REQUIRE_EQ(r.result, KvResult::Ok);
    REQUIRE_EQ(r.capacityTokens, int64_t(32));
    REQUIRE_EQ(r.evictedPages, int64_t(6));
    REQUIRE_EQ(c.capacityPages(PoolKind::Full), int64_t(8));
    for (int32_t pg : c.pageTable(0, b)) REQUIRE(pg < 8);
    for (int32_t pos = 0; pos < 16; ++pos)
        for (int32_t l = 0; l < 2; ++l) REQUIRE_EQ(int(rowOf(c, l, b, pos)[7]), 1 + pos + 20 * l);
    REQUIRE_EQ(c.matchPrefix(prompt).cachedTokens, int64_t(16));  // 4 cached pages left
    REQUIRE(c.checkIntegrity());

    // Below what is in use: clamped to b's 4 pages, cache evicted first.
    r = c.resize(PoolKind::Full, 8);
    REQUIRE_EQ(r.result, KvResult::Ok);
    REQUIRE_EQ(r.capacityTokens, int64_t(16));
    REQUIRE(r.message.find("in use") != std::string::npos);
    REQUIRE_EQ(c.matchPrefix(prompt).cachedTokens, int64_t(0));
    REQUIRE_EQ(c.sequenceInfo(b).length, int64_t(16));  // never dropped
    for (int32_t pos = 0; pos < 16; ++pos) REQUIRE_EQ(int(rowOf(c, 0, b, pos)[0]), 1 + pos);
    REQUIRE(c.checkIntegrity());

    // Below the floor: refused, nothing changes.
    r = c.resize(PoolKind::Full, 4);
    REQUIRE_EQ(r.result, KvResult::BadArgument);
    REQUIRE(r.message.find("floor") != std::string::npos);
    REQUIRE_EQ(c.capacityPages(PoolKind::Full), int64_t(4));
    r = c.resize(PoolKind::Window, 20);
    REQUIRE_EQ(r.result, KvResult::BadArgument);

    // Grow both back; b keeps working.
    REQUIRE_EQ(c.resize(PoolKind::Full, 64).capacityTokens, int64_t(64));
    REQUIRE_EQ(c.freePages(PoolKind::Full), int64_t(12));
    // Window: shrink to 6 pages while b holds 4 (pages may move), then grow.
    r = c.resize(PoolKind::Window, 24);
    REQUIRE_EQ(r.result, KvResult::Ok);
    REQUIRE_EQ(c.capacityPages(PoolKind::Window), int64_t(6));
    for (int32_t pg : c.pageTable(1, b)) REQUIRE(pg < 6);
    for (int32_t pos = 0; pos < 16; ++pos) REQUIRE_EQ(int(rowOf(c, 1, b, pos)[0]), 21 + pos);
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.resize(PoolKind::Window, 48).capacityTokens, int64_t(48));
    REQUIRE_EQ(c.allocate(b, 20), KvResult::Ok);
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.log().violations, uint64_t(0));
}

WEIR_TEST(HybridKvCache, statusReportsBothPools) {
    HybridKvCache c(smallConfig());
    const int32_t s = c.openSequence(5);
    REQUIRE_EQ(c.allocate(s, 12), KvResult::Ok);
    c.cachePrefix(s, tokens(1, 8));
    REQUIRE(c.checkIntegrity());
    CacheStatus st;
    c.fillStatus(st);
    REQUIRE(st.full.kind == PoolKind::Full);
    REQUIRE_EQ(st.full.capacityTokens, int64_t(64));
    REQUIRE_EQ(st.full.freeTokens, int64_t(52));
    REQUIRE_EQ(st.full.ownedTokens, int64_t(4));
    REQUIRE_EQ(st.full.cachedTokens, int64_t(8));
    REQUIRE_EQ(st.full.floorTokens, int64_t(16));
    REQUIRE_EQ(st.full.bytesPerToken, size_t(128));
    REQUIRE_EQ(st.full.totalBytes, size_t(64 * 128));
    REQUIRE_EQ(st.window.capacityTokens, int64_t(40));
    REQUIRE_EQ(st.window.cachedTokens, int64_t(8));
    REQUIRE_EQ(st.window.floorTokens, int64_t(24));
    REQUIRE_EQ(st.integrityChecks, uint64_t(1));
    REQUIRE_EQ(st.violations, uint64_t(0));
    const SequenceInfo info = c.sequenceInfo(s);
    REQUIRE_EQ(info.request, uint64_t(5));
    REQUIRE_EQ(info.fullTokens, int64_t(12));
    REQUIRE_EQ(info.windowTokens, int64_t(12));
}

WEIR_TEST(HybridKvCache, modelWithoutWindow) {
    KvCacheConfig cfg = smallConfig();
    cfg.window = 0;
    cfg.windowTokens = 0;
    cfg.layers = {{false, 32}, {false, 32}};
    HybridKvCache c(cfg);
    REQUIRE(!c.hasWindow());
    const int32_t s = c.openSequence(1);
    REQUIRE_EQ(c.need(s, 9).windowPages, int64_t(0));
    REQUIRE_EQ(c.allocate(s, 30), KvResult::Ok);
    REQUIRE_EQ(c.releaseOutOfWindow(s), int64_t(0));
    REQUIRE_EQ(int(c.pageTable(1, s).size()), 8);
    c.cachePrefix(s, tokens(1, 30));
    c.closeSequence(s);
    const int32_t t = c.openSequence(2);
    REQUIRE_EQ(c.attachPrefix(t, tokens(1, 31)).reuseTokens, int64_t(28));
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.resize(PoolKind::Window, 40).result, KvResult::BadArgument);
}

// The peer failure, replayed at the pool level: 4 concurrent multi-turn
// conversations sharing a 7.7k-token system prompt, with the window pool
// exactly at its floor (W 512, P 16, R 4, C 512, K 2, E 1: 3232 tokens).
// Each step advances at most K prefill chunks plus every decoding
// conversation by one token, releasing out-of-window pages first. No
// allocation may fail, and the pools must stay consistent throughout.
// (With the pool 600 tokens below the floor the same run runs dry.)
WEIR_TEST(HybridKvCache, fourConversationsAtTheWindowFloor) {
    WindowFloorInput in;
    in.window = 512;
    in.pageSize = 16;
    in.maxRunning = 4;
    in.prefillChunk = 512;
    in.chunksInFlight = 2;
    KvCacheConfig cfg;
    cfg.pageSize = 16;
    cfg.window = 512;
    cfg.windowTokens = windowFloor(in).tokens;
    REQUIRE_EQ(cfg.windowTokens, int64_t(3232));
    cfg.fullTokens = 4 * 16384;
    cfg.fullFloorTokens = 16384;
    cfg.windowFloorTokens = cfg.windowTokens;
    HybridKvCache c(cfg);

    std::vector<int32_t> system = tokens(1, 7700);
    struct Conv {
        std::vector<int32_t> history;  // tokens with KV computed, across turns
        std::vector<int32_t> prompt;   // this turn's full prompt
        int32_t seq = -1;
        int64_t done = 0;              // tokens of this turn computed
        int32_t generated = 0;
        int turn = 0;
    };
    std::vector<Conv> convs(4);
    uint64_t request = 1;
    int64_t reused = 0;
    auto startTurn = [&](Conv& cv, int idx) {
        cv.prompt = cv.history.empty() ? system : cv.history;
        const auto user = tokens(100000 * (idx + 1) + 1000 * cv.turn, 300);
        cv.prompt.insert(cv.prompt.end(), user.begin(), user.end());
        cv.seq = c.openSequence(request++);
        const PrefixMatch m = c.attachPrefix(cv.seq, cv.prompt);
        cv.done = m.reuseTokens;
        cv.generated = 0;
        if (cv.turn > 0) REQUIRE(m.reuseTokens >= int64_t(cv.history.size()) / 16 * 16 - 16);
        reused += m.reuseTokens;
    };
    for (int i = 0; i < 4; ++i) startTurn(convs[size_t(i)], i);
    int finishedTurns = 0;
    for (int step = 0; finishedTurns < 16; ++step) {
        int chunks = 0;
        for (int i = 0; i < 4; ++i) {
            Conv& cv = convs[size_t(i)];
            if (cv.seq < 0) continue;
            c.releaseOutOfWindow(cv.seq);
            const bool prefilling = cv.done < int64_t(cv.prompt.size());
            if (prefilling && chunks == 2) continue;  // K chunks per step
            const int64_t n = prefilling ? std::min<int64_t>(512, int64_t(cv.prompt.size()) - cv.done) : 1;
            chunks += prefilling;
            const KvResult r = c.allocate(cv.seq, n);
            if (r != KvResult::Ok)
                FAIL(("step " + std::to_string(step) + " conversation " + std::to_string(i) + ": " +
                       kvResultName(r) + " with " + std::to_string(c.availablePages(PoolKind::Window)) +
                       " window pages available").c_str());
            if (prefilling) {
                cv.done += n;
                if (cv.done == int64_t(cv.prompt.size())) c.cachePrefix(cv.seq, cv.prompt);
            } else if (++cv.generated == 200) {
                cv.history = cv.prompt;
                const auto out = tokens(500000 + 1000 * i + 10 * cv.turn, 199);  // last token not yet fed
                cv.history.insert(cv.history.end(), out.begin(), out.end());
                c.cachePrefix(cv.seq, cv.history);
                c.closeSequence(cv.seq);
                cv.seq = -1;
                ++finishedTurns;
                if (++cv.turn < 4) startTurn(cv, i);
            }
        }
        if (step % 8 == 0) REQUIRE(c.checkIntegrity());
    }
    REQUIRE(c.checkIntegrity());
    REQUIRE_EQ(c.log().violations, uint64_t(0));
    REQUIRE(reused > 12 * 7700);  // later turns reuse system prompt and history
}

WEIR_TEST(HybridKvCache, unreadableDtypeIsRefused) {
    KvCacheConfig cfg = smallConfig();
    cfg.dtype = static_cast<KvDtype>(77);
    bool threw = false;
    try {
        HybridKvCache c(cfg);
    } catch (const Error& e) {
        threw = true;
        REQUIRE(std::string(e.what()).find("--kv-cache-dtype") != std::string::npos);
    }
    REQUIRE(threw);
}
