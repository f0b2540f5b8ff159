// Calls into the engine thread from other threads have a defined outcome:
// an exception on the engine thread reaches the caller that waits for it,
// calls after the engine thread has ended fail at once instead of waiting
// forever, and every request submitted, before, during or after shutdown,
// gets exactly one terminal event. The scheduler runs on a tiny random-weight
// Gemma 3 on a thread this test starts and stops itself.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/scheduler.h"
#include "weir/base/error.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "tests/engine/test_backend.h"

using namespace weir;

namespace {

// Counts what each request received; safe from any thread.
struct Outcomes {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int> terminals;       // per request slot
    std::vector<Event::Kind> lastKind;

    explicit Outcomes(size_t n) : terminals(n, 0), lastKind(n, Event::Kind::Token) {}
    EventSink sink(size_t slot) {
        return [this, slot](const Event& ev) {
            if (!ev.isTerminal()) return;
            std::lock_guard<std::mutex> lock(mutex);
            ++terminals[slot];
            lastKind[slot] = ev.kind;
            cv.notify_all();
        };
    }
    void waitTerminal(size_t slot) {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return terminals[slot] > 0; });
    }
};

// A model, its pools and a scheduler whose engine thread the test controls.
struct Rig {
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<kv::HybridKvCache> cache;
    std::unique_ptr<Scheduler> scheduler;
    std::atomic<bool> stop{false};
    std::thread thread;

    explicit Rig(const std::string& path) {
        file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
        model = loadModel(file, weirtest::cpuBackend(1));
        EngineOptions o;
        o.pageSize = 16;
        o.maxRunningRequests = 2;
        o.prefillChunk = 32;
        o.maxContext = 256;
        const kv::PoolPlan plan = kv::planPoolsOrThrow(o, model->config());
        cache = std::make_unique<kv::HybridKvCache>(kv::KvCacheConfig::fromPlan(plan, model->config()));
        SchedulerOptions so;
        so.maxRunning = 2;
        so.prefillChunk = 32;
        scheduler = std::make_unique<Scheduler>(*model, *cache, nullptr, so);
    }
    void start() {
        thread = std::thread([this] { scheduler->run(stop); });
    }
    void shutDown() {
        stop.store(true);
        scheduler->wake();
        if (thread.joinable()) thread.join();
    }
    ~Rig() { shutDown(); }
};

GenerateRequest shortRequest(int32_t maxTokens = 4) {
    GenerateRequest r;
    r.prompt = {2, 300, 301, 302};
    r.maxTokens = maxTokens;
    r.sampling.temperature = 0.0f;
    r.stopAtEndOfGeneration = false;
    return r;
}

} // namespace

static weirtest::TempDir dir_;
static std::string model_;

WEIR_TEST_SUITE_SETUP(EngineThreadCalls) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny-gemma3.gguf");
    test::writeTinyGemma3(model_);
}

// Before: the exception was swallowed and the caller saw success.
WEIR_TEST(EngineThreadCalls, exceptionOnTheEngineThreadReachesTheCaller) {
    Rig rig(model_);
    rig.start();
    bool threw = false;
    try {
        rig.scheduler->runOnEngineThread([] { throw std::runtime_error("pool maintenance broke"); }, true);
    } catch (const std::runtime_error& e) {
        threw = true;
        REQUIRE_EQ(std::string(e.what()), std::string("pool maintenance broke"));
    }
    REQUIRE(threw);
    // The engine thread is still serving: a request completes afterwards.
    Outcomes out(1);
    rig.scheduler->submit(shortRequest(), out.sink(0));
    out.waitTerminal(0);
    REQUIRE_EQ(out.lastKind[0], Event::Kind::Done);
}

WEIR_TEST(EngineThreadCalls, commandNobodyWaitsForIsReportedWhenItThrows) {
    Rig rig(model_);
    rig.start();
    rig.scheduler->runOnEngineThread([] { throw std::runtime_error("queued command broke"); }, false);
    rig.scheduler->runOnEngineThread([] {}, true);  // commands run in order: the first has run
    rig.shutDown();
    const CacheStatus st = rig.scheduler->status();
    REQUIRE_EQ(st.violations, uint64_t(1));
    REQUIRE(!st.violationDetails.empty());
    REQUIRE_MSG(st.violationDetails.front().find("queued command broke") != std::string::npos,
                st.violationDetails.front());
}

// Before: the caller waited forever for a thread that had ended.
WEIR_TEST(EngineThreadCalls, callsAfterShutdownFailAtOnce) {
    Rig rig(model_);
    rig.start();
    rig.shutDown();
    bool ran = false;
    REQUIRE_THROWS(Error, rig.scheduler->runOnEngineThread([&] { ran = true; }, true));
    REQUIRE_THROWS(Error, rig.scheduler->runOnEngineThread([&] { ran = true; }, false));
    REQUIRE(!ran);
    const MaintenanceResult clear = rig.scheduler->clearPrefixCache();
    REQUIRE_EQ(int(clear.code), int(MaintenanceCode::ShuttingDown));
    REQUIRE_MSG(clear.message.find("shut down") != std::string::npos, clear.message);
    const MaintenanceResult resize = rig.scheduler->resizePool(kv::PoolKind::Full, 4096);
    REQUIRE_EQ(int(resize.code), int(MaintenanceCode::ShuttingDown));
    REQUIRE_MSG(resize.message.find("shut down") != std::string::npos, resize.message);
}

// Before: a request submitted after run() had ended never got an event.
WEIR_TEST(EngineThreadCalls, submitAfterShutdownEndsAtOnce) {
    Rig rig(model_);
    rig.start();
    rig.shutDown();
    Outcomes out(1);
    const uint64_t id = rig.scheduler->submit(shortRequest(), out.sink(0));
    REQUIRE(id != 0);
    // Delivered inside submit(): no engine thread is left to do it later.
    REQUIRE_EQ(out.terminals[0], 1);
    REQUIRE_EQ(out.lastKind[0], Event::Kind::Cancelled);
}

// Submitters race the shutdown and keep going after it: every request
// ends exactly once, whichever side of the shutdown it landed on.
WEIR_TEST(EngineThreadCalls, everyRequestEndsOnceAcrossShutdown) {
    constexpr int kSubmitters = 3, kPerSubmitter = 40;
    Outcomes out(size_t(kSubmitters * kPerSubmitter));
    {
        Rig rig(model_);
        rig.start();
        std::atomic<int> submitted{0};
        std::atomic<bool> joined{false};
        std::vector<std::thread> submitters;
        for (int s = 0; s < kSubmitters; ++s) {
            submitters.emplace_back([&, s] {
                for (int i = 0; i < kPerSubmitter; ++i) {
                    // The last few wait until the engine thread has ended.
                    if (i == kPerSubmitter - 5)
                        while (!joined.load()) std::this_thread::yield();
                    rig.scheduler->submit(shortRequest(2 + i % 3), out.sink(size_t(s * kPerSubmitter + i)));
                    ++submitted;
                }
            });
        }
        while (submitted.load() < kSubmitters * 10) std::this_thread::yield();
        rig.shutDown();
        joined.store(true);
        for (auto& t : submitters) t.join();
    }
    int missing = 0, doubled = 0;
    for (int n : out.terminals) {
        missing += n == 0;
        doubled += n > 1;
    }
    REQUIRE_EQ(missing, 0);
    REQUIRE_EQ(doubled, 0);
}
