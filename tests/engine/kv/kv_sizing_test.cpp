// The concurrency-aware floors and the refusal message. Expected numbers come
// from the formula in weir/types/pool_sizing.h, worked by hand here.
#include "tests/support/weir_test.h"

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

WEIR_TEST(KvSizing, floorFromTheNotes) {
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
    REQUIRE_EQ(f.windowTokens, int64_t(1024));
    REQUIRE_EQ(f.boundaryPage, int64_t(16));
    REQUIRE_EQ(f.retainTokens, int64_t(1));
    REQUIRE_EQ(f.nextDecodePage, int64_t(16));
    REQUIRE_EQ(f.perRequest, int64_t(1057));
    REQUIRE_EQ(f.requestsTerm, int64_t(4228));
    REQUIRE_EQ(f.chunkTerm, int64_t(4096));
    REQUIRE_EQ(f.slackPage, int64_t(16));
    REQUIRE_EQ(f.tokens, int64_t(8352));
    in.prefillChunk = 8192;  // the notes' second example
    REQUIRE_EQ(windowFloor(in).tokens, int64_t(20640));
}

WEIR_TEST(KvSizing, floorForGemma270m) {
    WindowFloorInput in;
    in.window = 512;
    in.pageSize = 16;
    in.maxRunning = 4;
    in.prefillChunk = 512;
    in.chunksInFlight = 2;
    // per_request = 512 + 16 + 1 + 16 = 545; 4 * 545 = 2180; + 1024 + 16 = 3220 -> 3232.
    REQUIRE_EQ(windowFloor(in).perRequest, int64_t(545));
    REQUIRE_EQ(windowFloor(in).tokens, int64_t(3232));
    // A window that is not a page multiple rounds up: W 500 -> 512.
    in.window = 500;
    REQUIRE_EQ(windowFloor(in).windowTokens, int64_t(512));
    // Retain gap 8 with 1 token a step: 8 more tokens per request.
    in.window = 512;
    in.retainGap = 8;
    REQUIRE_EQ(windowFloor(in).perRequest, int64_t(552));
    REQUIRE_EQ(windowPagesPerRequest(in), int64_t(35));  // ceil(552 / 16)
    // No window, no floor.
    in.window = 0;
    REQUIRE_EQ(windowFloor(in).tokens, int64_t(0));
}

WEIR_TEST(KvSizing, largestServableR) {
    WindowFloorInput in;
    in.window = 1024;
    in.pageSize = 16;
    in.maxRunning = 4;
    in.prefillChunk = 2048;
    in.chunksInFlight = 2;
    // floor((S - K*C - P) / per_request)
    REQUIRE_EQ(maxRunningForWindowPool(8352, in), int64_t(4));   // 4240 / 1057
    REQUIRE_EQ(maxRunningForWindowPool(9176, in), int64_t(4));   // 5064 / 1057
    REQUIRE_EQ(maxRunningForWindowPool(6000, in), int64_t(1));   // 1888 / 1057
    REQUIRE_EQ(maxRunningForWindowPool(4000, in), int64_t(0));
    REQUIRE_EQ(maxRunningForWindowPool(8335, in), int64_t(3));   // 4223 / 1057
}

WEIR_TEST(KvSizing, fullFloorAndBytes) {
    REQUIRE_EQ(fullFloorTokens(32768, 16), int64_t(32768));
    REQUIRE_EQ(fullFloorTokens(1000, 16), int64_t(1008));
    const ModelConfig m = gemma270m();
    // f16: 3 global layers x (K + V) x 256 values x 2 bytes.
    REQUIRE_EQ(kvBytesPerToken(m, KvDtype::F16, false), size_t(3 * 2 * 256 * 2));
    REQUIRE_EQ(kvBytesPerToken(m, KvDtype::F16, true), size_t(15 * 2 * 256 * 2));
    // q8_0: 8 blocks of 34 bytes per 256 values.
    REQUIRE_EQ(kvBytesPerToken(m, KvDtype::Q8_0, false), size_t(3 * 2 * 8 * 34));
}

WEIR_TEST(KvSizing, planForGemmaDefaults) {
    EngineOptions o;  // R 4, chunk 512, page 16, retain gap 1
    o.maxContext = 8192;
    const PoolPlan plan = planPoolsOrThrow(o, gemma270m());
    REQUIRE_EQ(plan.window, 512);
    REQUIRE_EQ(plan.fullFloor, int64_t(8192));
    REQUIRE_EQ(plan.fullTokens, int64_t(4 * 8192));
    REQUIRE_EQ(plan.windowTokens, int64_t(3232));  // the floor by default
    REQUIRE_EQ(plan.windowBytes(), size_t(3232) * size_t(15 * 1024));
    o.swaFullTokensRatio = 0.25;
    REQUIRE_EQ(planPools(o, gemma270m()).windowTokens, int64_t(8192));
    o.swaTokens = 5000;  // --swa-tokens wins, rounded up to a page
    REQUIRE_EQ(planPools(o, gemma270m()).windowTokens, int64_t(5008));
}

WEIR_TEST(KvSizing, belowTheWindowFloorIsRefusedWithTheTerms) {
    EngineOptions o;
    o.maxContext = 8192;
    o.swaTokens = 2048;
    const PoolPlan plan = planPools(o, gemma270m());
    const std::string msg = checkPoolPlan(plan);
    REQUIRE_MSG(!msg.empty(), "a 2048-token window pool cannot serve 4 requests");
    REQUIRE_MSG(has(msg, "floor 3232"), msg.c_str());
    REQUIRE_MSG(has(msg, "545"), msg.c_str());            // per request
    REQUIRE_MSG(has(msg, "2180"), msg.c_str());           // R x per request
    REQUIRE_MSG(has(msg, "1024"), msg.c_str());           // K x C
    REQUIRE_MSG(has(msg, "--swa-tokens"), msg.c_str());
    REQUIRE_MSG(has(msg, "--max-running-requests to 1"), msg.c_str());  // (2048-1024-16)/545 = 1
    REQUIRE_MSG(has(msg, "serves at most 1 running request"), msg.c_str());
    REQUIRE_MSG(std::count(msg.begin(), msg.end(), '\n') >= 5, msg.c_str());
    bool threw = false;
    try {
        planPoolsOrThrow(o, gemma270m());
    } catch (const Error& e) {
        threw = true;
        REQUIRE(has(e.what(), "window KV pool too small"));
    }
    REQUIRE(threw);
    // With R lowered to what the pool serves, it is accepted.
    o.maxRunningRequests = 1;
    REQUIRE(checkPoolPlan(planPools(o, gemma270m())).empty());
}

WEIR_TEST(KvSizing, ratioBelowTheFloorNamesTheRatioFlag) {
    EngineOptions o;
    o.maxContext = 8192;
    o.swaFullTokensRatio = 0.05;  // 32768 * 0.05 -> 1639 -> 1648 tokens
    const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
    REQUIRE_MSG(has(msg, "1648 tokens (--swa-full-tokens-ratio)"), msg.c_str());
    REQUIRE_MSG(has(msg, "serves at most 1 running request"), msg.c_str());  // (1648-1040)/545
}

WEIR_TEST(KvSizing, fullPoolBelowItsFloor) {
    EngineOptions o;
    o.maxContext = 8192;
    o.kvReserveTokens = 4000;
    const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
    REQUIRE_MSG(has(msg, "full KV pool too small"), msg.c_str());
    REQUIRE_MSG(has(msg, "--kv-reserve-tokens"), msg.c_str());
    REQUIRE_MSG(has(msg, "8192"), msg.c_str());
}

WEIR_TEST(KvSizing, eightBitDtypesHalveTheBytes) {
    EngineOptions o;
    o.maxContext = 8192;
    const PoolPlan f16 = planPools(o, gemma270m());
    for (KvDtype d : {KvDtype::Q8_0, KvDtype::FP8_E4M3}) {
        o.kvDtype = d;
        const PoolPlan p = planPools(o, gemma270m());
        REQUIRE_MSG(checkPoolPlan(p).empty(), checkPoolPlan(p).c_str());
        REQUIRE(attentionReadsKvDtype(d));
        const double ratio = double(p.windowBytesPerToken) / double(f16.windowBytesPerToken);
        REQUIRE_MSG(ratio >= 0.5 && ratio < 0.54, kvDtypeName(d));  // q8_0: 34/64, fp8: exactly 1/2
    }
}

WEIR_TEST(KvSizing, unreadableDtypeIsRefusedClearly) {
    EngineOptions o;
    o.maxContext = 8192;
    o.kvDtype = static_cast<KvDtype>(77);  // e.g. a value from a newer settings file
    const std::string msg = checkPoolPlan(planPools(o, gemma270m()));
    REQUIRE_MSG(has(msg, "--kv-cache-dtype"), msg.c_str());
    REQUIRE_MSG(has(msg, "f16, q8_0, fp8_e4m3"), msg.c_str());
    REQUIRE(!attentionReadsKvDtype(static_cast<KvDtype>(77)));
}

WEIR_TEST(KvSizing, stepNeedIsPageGranular) {
    REQUIRE_EQ(stepNeed(0, 1, 16, true).fullPages, int64_t(1));
    REQUIRE_EQ(stepNeed(0, 1, 16, true).windowPages, int64_t(1));
    REQUIRE_EQ(stepNeed(15, 1, 16, true).fullPages, int64_t(0));
    REQUIRE_EQ(stepNeed(16, 1, 16, true).fullPages, int64_t(1));
    REQUIRE_EQ(stepNeed(10, 40, 16, true).fullPages, int64_t(3));  // pages(50) - pages(10) = 4 - 1
    REQUIRE_EQ(stepNeed(10, 40, 16, false).windowPages, int64_t(0));
    REQUIRE_EQ(stepNeed(10, 0, 16, true).fullPages, int64_t(0));
}

// A model claiming a 2^31-token context with the most running requests:
// the derived full pool is refused with its size, not wrapped or allocated.
WEIR_TEST(KvSizing, oversizedPoolsAreRefusedNotWrapped) {
    ModelConfig m = gemma270m();
    m.nCtxTrain = std::numeric_limits<int32_t>::max();
    EngineOptions o;
    o.maxRunningRequests = 1024;
    const PoolPlan plan = planPools(o, m);
    REQUIRE(plan.fullTokens > 0);
    const std::string msg = checkPoolPlan(plan);
    REQUIRE_MSG(has(msg, "full KV pool of ") && has(msg, "is over the limit of 1073741824 tokens"), msg);
    REQUIRE_THROWS(Error, planPoolsOrThrow(o, m));

    // A ratio far beyond 1 (not range-checked here; validateEngineOptions is)
    // must not overflow the conversion to tokens.
    EngineOptions r;
    r.kvReserveTokens = 1 << 20;
    r.swaFullTokensRatio = 1e300;
    const PoolPlan ratioPlan = planPools(r, gemma270m());
    REQUIRE(ratioPlan.windowTokens > 0);
    REQUIRE_MSG(has(checkPoolPlan(ratioPlan), "window KV pool of "), checkPoolPlan(ratioPlan));
    REQUIRE_EQ(PoolPlan::bytes(int64_t(1) << 62, size_t(1) << 10), SIZE_MAX);
}
