// validateEngineOptions: every numeric option has a range, and the message
// names the flag and the value. Engine's constructor refuses the same options
// before it touches the model file.
#include "tests/support/weir_test.h"

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "weir/engine.h"
#include "weir/types/engine_limits.h"
#include "weir/base/error.h"

using namespace weir;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

} // namespace

WEIR_TEST(EngineLimits, defaultsAreValid) { REQUIRE_EQ(validateEngineOptions(EngineOptions{}), std::string()); }

WEIR_TEST(EngineLimits, threadsAtMostFourPerHardwareThread) {
    const int32_t hw = int32_t(std::max(1u, std::thread::hardware_concurrency()));
    REQUIRE_EQ(EngineLimits::maxThreads(), hw * 4);
    EngineOptions o;
    o.threads = hw * 4;
    REQUIRE_EQ(validateEngineOptions(o), std::string());
    o.threads = hw * 4 + 1;
    std::string m = validateEngineOptions(o);
    REQUIRE_MSG(has(m, "--threads") && has(m, "(got " + std::to_string(hw * 4 + 1) + ")"), m);
    o.threads = std::numeric_limits<int32_t>::max();  // used to hang at start
    REQUIRE(has(validateEngineOptions(o), "--threads"));
    o.threads = -1;  // used to be accepted
    m = validateEngineOptions(o);
    REQUIRE_MSG(has(m, "--threads") && has(m, "(got -1)"), m);
    REQUIRE_MSG(has(m, "0 = one per physical core"), m);
}

// --threads 0 means one per physical core; more than the cores stays allowed.
WEIR_TEST(EngineLimits, threadsBeyondThePhysicalCoresAreAllowed) {
    const int32_t hw = int32_t(std::max(1u, std::thread::hardware_concurrency()));
    const int32_t cores = EngineLimits::physicalCores();
    REQUIRE(cores >= 1 && cores <= hw);
    EngineOptions o;
    o.threads = cores + 1;
    REQUIRE_EQ(validateEngineOptions(o), std::string());
}

namespace {
struct PageSizeRow {
    const char* name;
    int pageSize;
    bool valid;
};
struct RangeRow {
    const char* name;
    std::string flag;
    int64_t bad;
};
} // namespace

WEIR_TEST(EngineLimits, pageSizeIsAPowerOfTwoWithinLimits) {
    const std::vector<PageSizeRow> rows = {{"1", 1, true},     {"16", 16, true},   {"1024", 1024, true},
                                           {"0", 0, false},    {"-16", -16, false}, {"24", 24, false},
                                           {"2048", 2048, false}, {"2^30", 1 << 30, false}};
    weirtest::eachRow(rows, [](const PageSizeRow& row) {
        EngineOptions o;
        o.pageSize = row.pageSize;
        const std::string m = validateEngineOptions(o);
        if (row.valid) {
            REQUIRE_EQ(m, std::string());
        } else {
            REQUIRE_MSG(has(m, "--page-size must be a power of two from 1 to 1024"), m);
            REQUIRE_MSG(has(m, "(got " + std::to_string(row.pageSize) + ")"), m);
        }
    });
}

WEIR_TEST(EngineLimits, everyOtherOptionHasARange) {
    const std::vector<RangeRow> rows = {
        {"max running 0", "--max-running-requests", 0},
        {"max running huge", "--max-running-requests", 1025},
        {"prefill 0", "--prefill-chunk", 0},
        {"prefill huge", "--prefill-chunk", 65537},
        {"reserve negative", "--kv-reserve-tokens", -1},
        {"reserve huge", "--kv-reserve-tokens", int64_t(1) << 40},
        {"swa tokens negative", "--swa-tokens", -5},
        {"swa tokens huge", "--swa-tokens", int64_t(1) << 62},
        {"retain gap 0", "--retain-gap", 0},
        {"max context negative", "--max-context", -1},
        {"max waiting negative", "--max-waiting", -1},
        {"draft tokens 0", "--draft-tokens", 0},
        {"draft tokens huge", "--draft-tokens", 65},
        {"draft n-gram 0", "--draft-ngram-max", 0},
        {"draft n-gram huge", "--draft-ngram-max", 17},
        {"draft n-gram min 0", "--draft-ngram-min", 0},
        {"draft n-gram min over max", "--draft-ngram-min", 4},
    };
    weirtest::eachRow(rows, [](const RangeRow& row) {
        EngineOptions o;
        const std::string& f = row.flag;
        if (f == "--max-running-requests") o.maxRunningRequests = int32_t(row.bad);
        if (f == "--prefill-chunk") o.prefillChunk = int32_t(row.bad);
        if (f == "--kv-reserve-tokens") o.kvReserveTokens = row.bad;
        if (f == "--swa-tokens") o.swaTokens = row.bad;
        if (f == "--retain-gap") o.retainGap = int32_t(row.bad);
        if (f == "--max-context") o.maxContext = int32_t(row.bad);
        if (f == "--max-waiting") o.maxWaiting = int32_t(row.bad);
        if (f == "--draft-tokens") o.draftTokens = int32_t(row.bad);
        if (f == "--draft-ngram-max") o.draftNgramMax = int32_t(row.bad);
        if (f == "--draft-ngram-min") o.draftNgramMin = int32_t(row.bad);
        const std::string m = validateEngineOptions(o);
        REQUIRE_MSG(m.rfind(f + " must be from ", 0) == 0, m);
        REQUIRE_MSG(has(m, "(got " + std::to_string(row.bad) + ")"), m);
    });
}

WEIR_TEST(EngineLimits, ratioIsFiniteAndAtMostOne) {
    EngineOptions o;
    for (double r : {0.0, 0.25, 1.0}) {
        o.swaFullTokensRatio = r;
        REQUIRE_EQ(validateEngineOptions(o), std::string());
    }
    for (double r : {-0.5, 1.5, 1e300, std::nan(""), std::numeric_limits<double>::infinity()}) {
        o.swaFullTokensRatio = r;
        REQUIRE_MSG(has(validateEngineOptions(o), "--swa-full-tokens-ratio must be from 0 to 1"), std::to_string(r));
    }
}

// The options are checked before the model file is opened.
WEIR_TEST(EngineLimits, engineRefusesBeforeLoading) {
    EngineOptions o;
    o.modelPath = "/nonexistent/model.gguf";
    o.pageSize = 24;
    bool threw = false;
    try {
        Engine engine(o);
    } catch (const Error& e) {
        threw = true;
        REQUIRE_MSG(has(e.what(), "--page-size"), e.what());
    }
    REQUIRE(threw);
}
