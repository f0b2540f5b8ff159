// The concurrency-aware floors and the refusal message. Expected numbers come
// from the formula in weir/types/pool_sizing.h, worked by hand here.
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "engine/kv/kv_sizing.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::kv;

namespace {

// Gemma 3 270M as the GGUF describes it: 18 layers, every 6th global, window 512.
ModelConfig gemma270m() {
    ModelConfig m;
    m.architecture = "gemma3";
    m.nLayer = 18;
    m.nHead = 4;
    m.nHeadKv = 1;
    m.headDimK = m.headDimV = 256;
    m.nCtxTrain = 32768;
    m.slidingWindow = 512;
    for (int l = 0; l < 18; ++l) m.layerSlides.push_back(l % 6 < 5);
    return m;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

} // namespace

class KvSizingTest : public QObject {
    Q_OBJECT

private slots:
    void floorFromTheNotes() {
        WindowFloorInput in;
        in.window = 1024;
        in.pageSize = 16;
        in.maxRunning = 4;
        in.prefillChunk = 2048;
        in.chunksInFlight = 2;
        in.retainGap = 1;
        in.tokensPerDecodeStep = 1;
        const WindowFloor f = windowFloor(in);
        // per_request = 1024 + 16 + 1 + 16 = 1057; 4 * 1057 = 4228; 2 * 2048 = 4096;
        // 4228 + 4096 + 16 = 8340 -> next multiple of 16 = 8352.
        QCOMPARE(f.windowTokens, int64_t(1024));
        QCOMPARE(f.boundaryPage, int64_t(16));
        QCOMPARE(f.retainTokens, int64_t(1));
        QCOMPARE(f.nextDecodePage, int64_t(16));
        QCOMPARE(f.perRequest, int64_t(1057));
        QCOMPARE(f.requestsTerm, int64_t(4228));
        QCOMPARE(f.chunkTerm, int64_t(4096));
        QCOMPARE(f.slackPage, int64_t(16));
        QCOMPARE(f.tokens, int64_t(8352));
        in.prefillChunk = 8192;  // the notes' second example
        QCOMPARE(windowFloor(in).tokens, int64_t(20640));
    }

    void floorForGemma270m() {
        WindowFloorInput in;
        in.window = 512;
        in.pageSize = 16;
        in.maxRunning = 4;
        in.prefillChunk = 512;
        in.chunksInFlight = 2;
        // per_request = 512 + 16 + 1 + 16 = 545; 4 * 545 = 2180; + 1024 + 16 = 3220 -> 3232.
        QCOMPARE(windowFloor(in).perRequest, int64_t(545));
        QCOMPARE(windowFloor(in).tokens, int64_t(3232));
        // A window that is not a page multiple rounds up: W 500 -> 512.
        in.window = 500;
        QCOMPARE(windowFloor(in).windowTokens, int64_t(512));
        // Retain gap 8 with 1 token a step: 8 more tokens per request.
        in.window = 512;
        in.retainGap = 8;
        QCOMPARE(windowFloor(in).perRequest, int64_t(552));
        QCOMPARE(windowPagesPerRequest(in), int64_t(35));  // ceil(552 / 16)
        // No window, no floor.
        in.window = 0;
        QCOMPARE(windowFloor(in).tokens, int64_t(0));
    }

    void largestServableR() {
        WindowFloorInput in;
        in.window = 1024;
        in.pageSize = 16;
        in.maxRunning = 4;
        in.prefillChunk = 2048;
        in.chunksInFlight = 2;
        // floor((S - K*C - P) / per_request)
        QCOMPARE(maxRunningForWindowPool(8352, in), int64_t(4));   // 4240 / 1057
        QCOMPARE(maxRunningForWindowPool(9176, in), int64_t(4));   // 5064 / 1057
        QCOMPARE(maxRunningForWindowPool(6000, in), int64_t(1));   // 1888 / 1057
        QCOMPARE(maxRunningForWindowPool(4000, in), int64_t(0));
        QCOMPARE(maxRunningForWindowPool(8335, in), int64_t(3));   // 4223 / 1057
    }

    void fullFloorAndBytes() {
        QCOMPARE(fullFloorTokens(32768, 16), int64_t(32768));
        QCOMPARE(fullFloorTokens(1000, 16), int64_t(1008));
        const ModelConfig m = gemma270m();
        // f16: 3 global layers x (K + V) x 256 values x 2 bytes.
        QCOMPARE(kvBytesPerToken(m, KvDtype::F16, false), size_t(3 * 2 * 256 * 2));
        QCOMPARE(kvBytesPerToken(m, KvDtype::F16, true), size_t(15 * 2 * 256 * 2));
        // q8_0: 8 blocks of 34 bytes per 256 values.
        QCOMPARE(kvBytesPerToken(m, KvDtype::Q8_0, false), size_t(3 * 2 * 8 * 34));
    }

    void planForGemmaDefaults() {
        EngineOptions o;  // R 4, chunk 512, page 16, retain gap 1
        o.maxContext = 8192;
        const PoolPlan plan = planPoolsOrThrow(o, gemma270m());
        QCOMPARE(plan.window, 512);
        QCOMPARE(plan.fullFloor, int64_t(8192));
        QCOMPARE(plan.fullTokens, int64_t(4 * 8192));
        QCOMPARE(plan.windowTokens, int64_t(3232));  // the floor by default
        QCOMPARE(plan.windowBytes(), size_t(3232) * size_t(15 * 1024));
        o.swaFullTokensRatio = 0.25;
        QCOMPARE(planPools(o, gemma270m()).windowTokens, int64_t(8192));
        o.swaTokens = 5000;  // --swa-tokens wins, rounded up to a page
        QCOMPARE(planPools(o, gemma270m()).windowTokens, int64_t(5008));
    }

    void belowTheWindowFloorIsRefusedWithTheTerms() {
        EngineOptions o;
        o.maxContext = 8192;
        o.swaTokens = 2048;
        const PoolPlan plan = planPools(o, gemma270m());
        const std::string msg = checkPoolPlan(plan);
        QVERIFY2(!msg.empty(), "a 2048-token window pool cannot serve 4 requests");
        QVERIFY2(has(msg, "floor 3232"), msg.c_str());
        QVERIFY2(has(msg, "545"), msg.c_str());            // per request
        QVERIFY2(has(msg, "2180"), msg.c_str());           // R x per request
        QVERIFY2(has(msg, "1024"), msg.c_str());           // K x C
        QVERIFY2(has(msg, "--swa-tokens"), msg.c_str());
        QVERIFY2(has(msg, "--max-running-requests to 1"), msg.c_str());  // (2048-1024-16)/545 = 1
        QVERIFY2(has(msg, "serves at most 1 running request"), msg.c_str());
        QVERIFY2(std::count(msg.begin(), msg.end(), '\n') >= 5, msg.c_str());
        bool threw = false;
        try {
            planPoolsOrThrow(o, gemma270m());
        } catch (const Error& e) {
            threw = true;
            QVERIFY(has(e.what(), "window KV pool too small"));
        }
        QVERIFY(threw);
        // With R lowered to what the pool serves, it is accepted.
        o.maxRunningRequests = 1;
        QVERIFY(checkPoolPlan(planPools(o, gemma270m())).empty());
    }

    void ratioBelowTheFloorNamesTheRatioFlag() {
        EngineOptions o;
        o.maxContext = 8192;
        o.swaFullTokensRatio = 0.05;  // 32768 * 0.05 -> 1639 -> 1648 tokens
        const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
        QVERIFY2(has(msg, "1648 tokens (--swa-full-tokens-ratio)"), msg.c_str());
        QVERIFY2(has(msg, "serves at most 1 running request"), msg.c_str());  // (1648-1040)/545
    }

    void fullPoolBelowItsFloor() {
        EngineOptions o;
        o.maxContext = 8192;
        o.kvReserveTokens = 4000;
        const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
        QVERIFY2(has(msg, "full KV pool too small"), msg.c_str());
        QVERIFY2(has(msg, "--kv-reserve-tokens"), msg.c_str());
        QVERIFY2(has(msg, "8192"), msg.c_str());
    }

    void eightBitDtypesHalveTheBytes() {
        EngineOptions o;
        o.maxContext = 8192;
        const PoolPlan f16 = planPools(o, gemma270m());
        for (KvDtype d : {KvDtype::Q8_0, KvDtype::FP8_E4M3}) {
            o.kvDtype = d;
            const PoolPlan p = planPools(o, gemma270m());
            QVERIFY2(checkPoolPlan(p).empty(), checkPoolPlan(p).c_str());
            QVERIFY(attentionReadsKvDtype(d));
            const double ratio = double(p.windowBytesPerToken) / double(f16.windowBytesPerToken);
            QVERIFY2(ratio >= 0.5 && ratio < 0.54, kvDtypeName(d));  // q8_0: 34/64, fp8: exactly 1/2
        }
    }

    void unreadableDtypeIsRefusedClearly() {
        EngineOptions o;
        o.maxContext = 8192;
        o.kvDtype = static_cast<KvDtype>(77);  // e.g. a value from a newer settings file
        const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
        QVERIFY2(has(msg, "--kv-cache-dtype"), msg.c_str());
        QVERIFY2(has(msg, "f16, q8_0, fp8_e4m3"), msg.c_str());
        QVERIFY(!attentionReadsKvDtype(static_cast<KvDtype>(77)));
    }

    void stepNeedIsPageGranular() {
        QCOMPARE(stepNeed(0, 1, 16, true).fullPages, int64_t(1));
        QCOMPARE(stepNeed(0, 1, 16, true).windowPages, int64_t(1));
        QCOMPARE(stepNeed(15, 1, 16, true).fullPages, int64_t(0));
        QCOMPARE(stepNeed(16, 1, 16, true).fullPages, int64_t(1));
        QCOMPARE(stepNeed(10, 40, 16, true).fullPages, int64_t(3));  // pages(50) - pages(10) = 4 - 1
        QCOMPARE(stepNeed(10, 40, 16, false).windowPages, int64_t(0));
        QCOMPARE(stepNeed(10, 0, 16, true).fullPages, int64_t(0));
    }

    // A model claiming a 2^31-token context with the most running requests:
    // the derived full pool is refused with its size, not wrapped or allocated.
    void oversizedPoolsAreRefusedNotWrapped() {
        ModelConfig m = gemma270m();
        m.nCtxTrain = std::numeric_limits<int32_t>::max();
        EngineOptions o;
        o.maxRunningRequests = 1024;
        const PoolPlan plan = planPools(o, m);
        QVERIFY(plan.fullTokens > 0);
        const std::string msg = checkPoolPlan(plan);
        QVERIFY2(has(msg, "full KV pool of ") && has(msg, "is over the limit of 1073741824 tokens"), msg.c_str());
        QVERIFY_THROWS_EXCEPTION(Error, planPoolsOrThrow(o, m));

        // A ratio far beyond 1 (not range-checked here; validateEngineOptions is)
        // must not overflow the conversion to tokens.
        EngineOptions r;
        r.kvReserveTokens = 1 << 20;
        r.swaFullTokensRatio = 1e300;
        const PoolPlan ratioPlan = planPools(r, gemma270m());
        QVERIFY(ratioPlan.windowTokens > 0);
        QVERIFY2(has(checkPoolPlan(ratioPlan), "window KV pool of "), checkPoolPlan(ratioPlan).c_str());
        QCOMPARE(PoolPlan::bytes(int64_t(1) << 62, size_t(1) << 10), SIZE_MAX);
    }
};

QTEST_APPLESS_MAIN(KvSizingTest)
#include "kv_sizing_test.moc"
