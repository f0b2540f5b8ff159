// The hybrid cache through its public API: storage through KvAccess, window
// release, all-or-nothing allocation, LRU eviction order, the window-reuse
// rule, fork, live resizing and the status it reports.
#include <QtTest>

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

class HybridKvCacheTest : public QObject {
    Q_OBJECT

private slots:
    void storageThroughKvAccess() {
        HybridKvCache c(smallConfig());
        QVERIFY(c.hasWindow());
        const int32_t s = c.openSequence(1);
        QCOMPARE(c.allocate(s, 10), KvResult::Ok);
        QCOMPARE(int(c.pageTable(0, s).size()), 3);
        QCOMPARE(int(c.pageTable(1, s).size()), 3);
        QCOMPARE(c.layer(0).rowBytes, size_t(64));
        QVERIFY(c.layer(0).k != c.layer(1).k);  // different pools, different storage
        for (int32_t pos = 0; pos < 10; ++pos)
            for (int32_t l = 0; l < 2; ++l) std::memset(rowOf(c, l, s, pos), 10 * l + pos, 64);
        for (int32_t pos = 0; pos < 10; ++pos)
            for (int32_t l = 0; l < 2; ++l) QCOMPARE(int(rowOf(c, l, s, pos)[63]), 10 * l + pos);
        QVERIFY(c.pageTable(0, 99).empty());
        QVERIFY(c.checkIntegrity());
    }

    void windowPagesFallBehindAndAreReleased() {
        HybridKvCache c(smallConfig());
        const int32_t s = c.openSequence(1);
        QCOMPARE(c.allocate(s, 20), KvResult::Ok);
        QCOMPARE(c.freePages(PoolKind::Window), int64_t(5));
        // The next token (position 20) attends to 13..20: pages 0..2 are behind.
        QCOMPARE(c.releaseOutOfWindow(s), int64_t(3));
        QCOMPARE(c.sequenceInfo(s).windowStart, int64_t(12));
        const auto wt = c.pageTable(1, s);
        QCOMPARE(wt[0], -1);
        QCOMPARE(wt[2], -1);
        QVERIFY(wt[3] >= 0);
        QCOMPARE(int(c.pageTable(0, s).size()), 5);  // full pages stay
        QCOMPARE(c.freePages(PoolKind::Window), int64_t(8));
        QCOMPARE(c.releaseOutOfWindow(s), int64_t(0));  // nothing more yet
        QCOMPARE(c.allocate(s, 1), KvResult::Ok);         // length 21: 14.. still in page 3
        QCOMPARE(c.releaseOutOfWindow(s), int64_t(0));
        QCOMPARE(c.allocate(s, 3), KvResult::Ok);         // length 24: 17.. page 3 is behind
        QCOMPARE(c.releaseOutOfWindow(s), int64_t(1));
        QCOMPARE(c.sequenceInfo(s).windowStart, int64_t(16));
        QCOMPARE(c.sequenceInfo(s).windowTokens, int64_t(8));
        QVERIFY(c.checkIntegrity());
        c.closeSequence(s);
        QCOMPARE(c.freePages(PoolKind::Window), int64_t(10));
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(16));
        QVERIFY(c.checkIntegrity());
    }

    void allocationIsAllOrNothing() {
        HybridKvCache c(smallConfig());
        const int32_t a = c.openSequence(1);
        QCOMPARE(c.allocate(a, 36), KvResult::Ok);
        c.releaseOutOfWindow(a);
        const int32_t b = c.openSequence(2);
        QCOMPARE(c.need(b, 32).fullPages, int64_t(8));
        QCOMPARE(c.allocate(b, 32), KvResult::OutOfFullPages);  // 7 full pages left
        QCOMPARE(c.sequenceInfo(b).length, int64_t(0));
        QVERIFY(c.pageTable(0, b).empty());
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(7));
        QCOMPARE(c.freePages(PoolKind::Window), int64_t(8));
        // Window pool short while the full pool has room.
        c.closeSequence(a);
        QCOMPARE(c.allocate(b, 44), KvResult::OutOfWindowPages);  // 11 window pages > 10
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(16));
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.allocate(b, 0), KvResult::Ok);
        QCOMPARE(c.allocate(99, 1), KvResult::BadArgument);
    }

    void lruEvictionOrder() {
        HybridKvCache c(smallConfig());
        const auto A = tokens(100, 9), B = tokens(200, 9), C = tokens(300, 9);
        for (const auto* p : {&A, &B, &C}) {
            const int32_t s = c.openSequence(7);
            QCOMPARE(c.allocate(s, 8), KvResult::Ok);
            QCOMPARE(c.cachePrefix(s, std::span(*p).first(8)), int64_t(2));
            c.closeSequence(s);
        }
        QCOMPARE(c.evictablePages(PoolKind::Full), int64_t(6));
        // A is used again: it becomes the most recent.
        const int32_t d = c.openSequence(8);
        QCOMPARE(c.attachPrefix(d, A).reuseTokens, int64_t(8));
        QCOMPARE(c.sequenceInfo(d).prefixHitTokens, int64_t(8));
        QCOMPARE(c.evictablePages(PoolKind::Full), int64_t(4));  // A is pinned while d uses it
        c.closeSequence(d);
        // Least recently used first, leaf first: B goes entirely, then C's tail.
        QCOMPARE(c.evict(PoolKind::Full, 2), int64_t(2));
        QCOMPARE(c.matchPrefix(B).cachedTokens, int64_t(0));
        QCOMPARE(c.matchPrefix(A).cachedTokens, int64_t(8));
        QCOMPARE(c.matchPrefix(C).cachedTokens, int64_t(8));
        QCOMPARE(c.evict(PoolKind::Full, 1), int64_t(1));
        QCOMPARE(c.matchPrefix(C).cachedTokens, int64_t(4));
        QCOMPARE(c.matchPrefix(A).cachedTokens, int64_t(8));
        QVERIFY(c.checkIntegrity());

        // Allocation evicts window content when the window free list is short:
        // 10 window pages needed, 7 free, C's then A's window pages (LRU) go.
        const int32_t e = c.openSequence(9);
        QCOMPARE(c.allocate(e, 40), KvResult::Ok);
        QCOMPARE(c.freePages(PoolKind::Window), int64_t(0));
        const PrefixMatch ma = c.matchPrefix(A);
        QCOMPARE(ma.cachedTokens, int64_t(8));   // full pages survive (tombstones)
        QCOMPARE(ma.reuseTokens, int64_t(0));    // but the window content is gone
        QCOMPARE(ma.windowRecomputeTokens, int64_t(8));
        QVERIFY(c.checkIntegrity());
    }

    void windowReuseRule() {
        // P 4, W 8: a match ending at j pages needs window pages covering
        // positions [4j - 7, 4j).
        HybridKvCache c(smallConfig(64, 64));
        const auto prompt = tokens(1, 25);
        const int32_t a = c.openSequence(1);
        QCOMPARE(c.allocate(a, 24), KvResult::Ok);
        QCOMPARE(c.cachePrefix(a, std::span(prompt).first(24)), int64_t(6));
        c.closeSequence(a);
        PrefixMatch m = c.matchPrefix(prompt);
        QCOMPARE(m.cachedTokens, int64_t(24));
        QCOMPARE(m.reuseTokens, int64_t(24));
        // A short reuse touches pages 0 and 1, so they are the most recent.
        const int32_t b = c.openSequence(2);
        QCOMPARE(c.attachPrefix(b, std::span(prompt).first(9)).reuseTokens, int64_t(8));
        c.closeSequence(b);
        // Tombstone pages 2 and 3 (the least recently used window content):
        // the last window before 24 (pages 4, 5) is intact, so all 24 reuse.
        QCOMPARE(c.evict(PoolKind::Window, 2), int64_t(2));
        m = c.matchPrefix(prompt);
        QCOMPARE(m.reuseTokens, int64_t(24));
        QCOMPARE(m.windowRecomputeTokens, int64_t(0));
        // Tombstone page 4: j = 6, 5, 4, 3 lack window content; j = 2 needs
        // pages 0..1, present -> reuse 8, recompute 16.
        QCOMPARE(c.evict(PoolKind::Window, 1), int64_t(1));
        m = c.matchPrefix(prompt);
        QCOMPARE(m.cachedTokens, int64_t(24));
        QCOMPARE(m.reuseTokens, int64_t(8));
        QCOMPARE(m.windowRecomputeTokens, int64_t(16));
        const int32_t s = c.openSequence(3);
        const PrefixMatch got = c.attachPrefix(s, prompt);
        QCOMPARE(got.reuseTokens, int64_t(8));
        QCOMPARE(c.sequenceInfo(s).length, int64_t(8));
        QCOMPARE(c.sequenceInfo(s).windowStart, int64_t(0));
        QCOMPARE(c.need(s, 17).fullPages, int64_t(5));  // positions 8..24 -> pages 2..6
        QCOMPARE(c.need(got, 17).fullPages, int64_t(5));
        QVERIFY(c.checkIntegrity());
        // The last token is never matched: a prompt of exactly 24 tokens matches 20.
        QCOMPARE(c.matchPrefix(std::span(prompt).first(24)).cachedTokens, int64_t(20));
    }

    void attachTakesOnlyTheLastWindow() {
        HybridKvCache c(smallConfig(64, 64));
        const auto prompt = tokens(1, 21);
        const int32_t a = c.openSequence(1);
        QCOMPARE(c.allocate(a, 20), KvResult::Ok);
        c.cachePrefix(a, std::span(prompt).first(20));
        c.closeSequence(a);
        const int32_t s = c.openSequence(2);
        QCOMPARE(c.attachPrefix(s, prompt).reuseTokens, int64_t(20));
        // Next position 20 attends to 13..20: window pages 3 and 4 only.
        QCOMPARE(c.sequenceInfo(s).windowStart, int64_t(12));
        QCOMPARE(c.sequenceInfo(s).windowTokens, int64_t(8));
        QCOMPARE(c.sequenceInfo(s).fullTokens, int64_t(20));
        QCOMPARE(c.pageTable(1, s)[2], -1);
        QVERIFY(c.pageTable(1, s)[3] >= 0);
        QVERIFY(c.checkIntegrity());
    }

    void prefixComputedTwiceKeepsOneCopy() {
        // Two sequences compute the same 24 tokens (6 pages) side by side; a
        // caches them first and goes on. The copy b made must not sit beside
        // the tree's with the tree's pinned by b's lock: behind b's window b
        // switches to the tree's pages at once; inside it, the tree's copy has
        // lost its window content (tombstones) and is still used by a, so b
        // keeps its own there, uncached, until a is gone.
        HybridKvCache c(smallConfig(64, 64));
        const auto t = tokens(100, 24);
        const int32_t a = c.openSequence(1), b = c.openSequence(2);
        QCOMPARE(c.allocate(a, 24), KvResult::Ok);
        QCOMPARE(c.allocate(b, 24), KvResult::Ok);
        QCOMPARE(c.cachePrefix(a, t), int64_t(6));
        QCOMPARE(c.allocate(a, 8), KvResult::Ok);
        QCOMPARE(c.releaseOutOfWindow(a), int64_t(6));
        QCOMPARE(c.releaseOutOfWindow(b), int64_t(4));
        QCOMPARE(c.evict(PoolKind::Window, 16), int64_t(6));
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(2));

        QCOMPARE(c.cachePrefix(b, t), int64_t(0));
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(6));  // b's first 4 pages: the tree's now
        c.closeSequence(a);
        QVERIFY(c.checkIntegrity());
        // Everything b does not use can be had: free, or cached and unlocked.
        QCOMPARE(c.freePages(PoolKind::Full) + c.evictablePages(PoolKind::Full), int64_t(16 - 6));
        QCOMPARE(c.evictablePages(PoolKind::Full), int64_t(2));

        // b caches again (its next chunk): the unlocked tombstones take b's
        // pages and window content; one copy is left.
        QCOMPARE(c.cachePrefix(b, t), int64_t(0));
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(16 - 6));
        QCOMPARE(c.evictablePages(PoolKind::Full), int64_t(0));
        QCOMPARE(c.sequenceInfo(b).fullTokens, int64_t(24));
        c.closeSequence(b);
        QCOMPARE(c.evictablePages(PoolKind::Full), int64_t(6));
        QCOMPARE(c.matchPrefix(tokens(100, 25)).reuseTokens, int64_t(24));
        QVERIFY(c.checkIntegrity());
    }

    void forkCopiesThePartialPage() {
        HybridKvCache c(smallConfig());
        const int32_t p = c.openSequence(1);
        QCOMPARE(c.allocate(p, 6), KvResult::Ok);
        for (int32_t l = 0; l < 2; ++l) std::memset(rowOf(c, l, p, 5), 0x5a + l, 64);
        const int32_t ch = c.forkSequence(p, 2);
        QVERIFY(ch >= 0);
        QCOMPARE(c.sequenceInfo(ch).length, int64_t(6));
        QCOMPARE(c.pageTable(0, ch)[0], c.pageTable(0, p)[0]);  // shared complete page
        QVERIFY(c.pageTable(0, ch)[1] != c.pageTable(0, p)[1]);  // copied partial page
        QVERIFY(c.pageTable(1, ch)[1] != c.pageTable(1, p)[1]);
        for (int32_t l = 0; l < 2; ++l) QCOMPARE(int(rowOf(c, l, ch, 5)[0]), 0x5a + l);
        std::memset(rowOf(c, 0, ch, 5), 0x11, 64);
        QCOMPARE(int(rowOf(c, 0, p, 5)[0]), 0x5a);
        QVERIFY(c.checkIntegrity());
        c.closeSequence(p);
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.allocate(ch, 3), KvResult::Ok);
        c.closeSequence(ch);
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(16));
        QVERIFY(c.checkIntegrity());
    }

    void resizeGrowAndShrink() {
        KvCacheConfig cfg = smallConfig(128, 40);
        cfg.fullFloorTokens = 8;
        HybridKvCache c(cfg);
        // A cached prefix of 10 pages, then a running sequence on pages 10..13.
        const auto prompt = tokens(1, 40);
        const int32_t a = c.openSequence(1);
        QCOMPARE(c.allocate(a, 40), KvResult::Ok);
        c.cachePrefix(a, prompt);
        c.closeSequence(a);
        const int32_t b = c.openSequence(2);
        QCOMPARE(c.allocate(b, 16), KvResult::Ok);  // evicts 4 cached window pages
        for (int32_t pos = 0; pos < 16; ++pos)
            for (int32_t l = 0; l < 2; ++l) std::memset(rowOf(c, l, b, pos), 1 + pos + 20 * l, 64);
        QVERIFY(c.pageTable(0, b)[0] >= 10);

        // Shrink to 8 pages: 6 cached pages evicted, b's pages moved below 8.
        ResizeResult r = c.resize(PoolKind::Full, 32);
        QCOMPARE(r.result, KvResult::Ok);
        QCOMPARE(r.capacityTokens, int64_t(32));
        QCOMPARE(r.evictedPages, int64_t(6));
        QCOMPARE(c.capacityPages(PoolKind::Full), int64_t(8));
        for (int32_t pg : c.pageTable(0, b)) QVERIFY(pg < 8);
        for (int32_t pos = 0; pos < 16; ++pos)
            for (int32_t l = 0; l < 2; ++l) QCOMPARE(int(rowOf(c, l, b, pos)[7]), 1 + pos + 20 * l);
        QCOMPARE(c.matchPrefix(prompt).cachedTokens, int64_t(16));  // 4 cached pages left
        QVERIFY(c.checkIntegrity());

        // Below what is in use: clamped to b's 4 pages, cache evicted first.
        r = c.resize(PoolKind::Full, 8);
        QCOMPARE(r.result, KvResult::Ok);
        QCOMPARE(r.capacityTokens, int64_t(16));
        QVERIFY(r.message.find("in use") != std::string::npos);
        QCOMPARE(c.matchPrefix(prompt).cachedTokens, int64_t(0));
        QCOMPARE(c.sequenceInfo(b).length, int64_t(16));  // never dropped
        for (int32_t pos = 0; pos < 16; ++pos) QCOMPARE(int(rowOf(c, 0, b, pos)[0]), 1 + pos);
        QVERIFY(c.checkIntegrity());

        // Below the floor: refused, nothing changes.
        r = c.resize(PoolKind::Full, 4);
        QCOMPARE(r.result, KvResult::BadArgument);
        QVERIFY(r.message.find("floor") != std::string::npos);
        QCOMPARE(c.capacityPages(PoolKind::Full), int64_t(4));
        r = c.resize(PoolKind::Window, 20);
        QCOMPARE(r.result, KvResult::BadArgument);

        // Grow both back; b keeps working.
        QCOMPARE(c.resize(PoolKind::Full, 64).capacityTokens, int64_t(64));
        QCOMPARE(c.freePages(PoolKind::Full), int64_t(12));
        // Window: shrink to 6 pages while b holds 4 (pages may move), then grow.
        r = c.resize(PoolKind::Window, 24);
        QCOMPARE(r.result, KvResult::Ok);
        QCOMPARE(c.capacityPages(PoolKind::Window), int64_t(6));
        for (int32_t pg : c.pageTable(1, b)) QVERIFY(pg < 6);
        for (int32_t pos = 0; pos < 16; ++pos) QCOMPARE(int(rowOf(c, 1, b, pos)[0]), 21 + pos);
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.resize(PoolKind::Window, 48).capacityTokens, int64_t(48));
        QCOMPARE(c.allocate(b, 20), KvResult::Ok);
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.log().violations, uint64_t(0));
    }

    void statusReportsBothPools() {
        HybridKvCache c(smallConfig());
        const int32_t s = c.openSequence(5);
        QCOMPARE(c.allocate(s, 12), KvResult::Ok);
        c.cachePrefix(s, tokens(1, 8));
        QVERIFY(c.checkIntegrity());
        CacheStatus st;
        c.fillStatus(st);
        QVERIFY(st.full.kind == PoolKind::Full);
        QCOMPARE(st.full.capacityTokens, int64_t(64));
        QCOMPARE(st.full.freeTokens, int64_t(52));
        QCOMPARE(st.full.ownedTokens, int64_t(4));
        QCOMPARE(st.full.cachedTokens, int64_t(8));
        QCOMPARE(st.full.floorTokens, int64_t(16));
        QCOMPARE(st.full.bytesPerToken, size_t(128));
        QCOMPARE(st.full.totalBytes, size_t(64 * 128));
        QCOMPARE(st.window.capacityTokens, int64_t(40));
        QCOMPARE(st.window.cachedTokens, int64_t(8));
        QCOMPARE(st.window.floorTokens, int64_t(24));
        QCOMPARE(st.integrityChecks, uint64_t(1));
        QCOMPARE(st.violations, uint64_t(0));
        const SequenceInfo info = c.sequenceInfo(s);
        QCOMPARE(info.request, uint64_t(5));
        QCOMPARE(info.fullTokens, int64_t(12));
        QCOMPARE(info.windowTokens, int64_t(12));
    }

    void modelWithoutWindow() {
        KvCacheConfig cfg = smallConfig();
        cfg.window = 0;
        cfg.windowTokens = 0;
        cfg.layers = {{false, 32}, {false, 32}};
        HybridKvCache c(cfg);
        QVERIFY(!c.hasWindow());
        const int32_t s = c.openSequence(1);
        QCOMPARE(c.need(s, 9).windowPages, int64_t(0));
        QCOMPARE(c.allocate(s, 30), KvResult::Ok);
        QCOMPARE(c.releaseOutOfWindow(s), int64_t(0));
        QCOMPARE(int(c.pageTable(1, s).size()), 8);
        c.cachePrefix(s, tokens(1, 30));
        c.closeSequence(s);
        const int32_t t = c.openSequence(2);
        QCOMPARE(c.attachPrefix(t, tokens(1, 31)).reuseTokens, int64_t(28));
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.resize(PoolKind::Window, 40).result, KvResult::BadArgument);
    }

    // The peer failure, replayed at the pool level: 4 concurrent multi-turn
    // conversations sharing a 7.7k-token system prompt, with the window pool
    // exactly at its floor (W 512, P 16, R 4, C 512, K 2, E 1: 3232 tokens).
    // Each step advances at most K prefill chunks plus every decoding
    // conversation by one token, releasing out-of-window pages first. No
    // allocation may fail, and the pools must stay consistent throughout.
    // (With the pool 600 tokens below the floor the same run runs dry.)
    void fourConversationsAtTheWindowFloor() {
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
        QCOMPARE(cfg.windowTokens, int64_t(3232));
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
            if (cv.turn > 0) QVERIFY(m.reuseTokens >= int64_t(cv.history.size()) / 16 * 16 - 16);
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
                    QFAIL(("step " + std::to_string(step) + " conversation " + std::to_string(i) + ": " +
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
            if (step % 8 == 0) QVERIFY(c.checkIntegrity());
        }
        QVERIFY(c.checkIntegrity());
        QCOMPARE(c.log().violations, uint64_t(0));
        QVERIFY(reused > 12 * 7700);  // later turns reuse system prompt and history
    }

    void unreadableDtypeIsRefused() {
        KvCacheConfig cfg = smallConfig();
        cfg.dtype = static_cast<KvDtype>(77);
        bool threw = false;
        try {
            HybridKvCache c(cfg);
        } catch (const Error& e) {
            threw = true;
            QVERIFY(std::string(e.what()).find("--kv-cache-dtype") != std::string::npos);
        }
        QVERIFY(threw);
    }
};

QTEST_APPLESS_MAIN(HybridKvCacheTest)
#include "hybrid_kv_cache_test.moc"
