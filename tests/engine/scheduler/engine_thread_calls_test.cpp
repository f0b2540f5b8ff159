// Calls into the engine thread from other threads have a defined outcome:
// an exception on the engine thread reaches the caller that waits for it,
// calls after the engine thread has ended fail at once instead of waiting
// forever, and every request submitted, before, during or after shutdown,
// gets exactly one terminal event. The scheduler runs on a tiny random-weight
// Gemma 3 on a thread this test starts and stops itself.
#include <QTemporaryDir>
#include <QtTest>

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
#include "kernels/cpu/thread_pool.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

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
    kernels::ThreadPool pool{1};
    std::unique_ptr<Scheduler> scheduler;
    std::atomic<bool> stop{false};
    std::thread thread;

    explicit Rig(const std::string& path) {
        file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
        model = loadModel(file);
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
        scheduler = std::make_unique<Scheduler>(*model, *cache, pool, nullptr, so);
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

class EngineThreadCallsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny-gemma3.gguf").toStdString();
        test::writeTinyGemma3(model_);
    }

    // Before: the exception was swallowed and the caller saw success.
    void exceptionOnTheEngineThreadReachesTheCaller() {
        Rig rig(model_);
        rig.start();
        bool threw = false;
        try {
            rig.scheduler->runOnEngineThread([] { throw std::runtime_error("pool maintenance broke"); }, true);
        } catch (const std::runtime_error& e) {
            threw = true;
            QCOMPARE(std::string(e.what()), std::string("pool maintenance broke"));
        }
        QVERIFY(threw);
        // The engine thread is still serving: a request completes afterwards.
        Outcomes out(1);
        rig.scheduler->submit(shortRequest(), out.sink(0));
        out.waitTerminal(0);
        QCOMPARE(out.lastKind[0], Event::Kind::Done);
    }

    void commandNobodyWaitsForIsReportedWhenItThrows() {
        Rig rig(model_);
        rig.start();
        rig.scheduler->runOnEngineThread([] { throw std::runtime_error("queued command broke"); }, false);
        rig.scheduler->runOnEngineThread([] {}, true);  // commands run in order: the first has run
        rig.shutDown();
        const CacheStatus st = rig.scheduler->status();
        QCOMPARE(st.violations, uint64_t(1));
        QVERIFY(!st.violationDetails.empty());
        QVERIFY2(st.violationDetails.front().find("queued command broke") != std::string::npos,
                 st.violationDetails.front().c_str());
    }

    // Before: the caller waited forever for a thread that had ended.
    void callsAfterShutdownFailAtOnce() {
        Rig rig(model_);
        rig.start();
        rig.shutDown();
        bool ran = false;
        QVERIFY_THROWS_EXCEPTION(Error, rig.scheduler->runOnEngineThread([&] { ran = true; }, true));
        QVERIFY_THROWS_EXCEPTION(Error, rig.scheduler->runOnEngineThread([&] { ran = true; }, false));
        QVERIFY(!ran);
        const std::string clear = rig.scheduler->clearPrefixCache();
        QVERIFY2(clear.find("shut down") != std::string::npos, clear.c_str());
        const std::string resize = rig.scheduler->resizePool(kv::PoolKind::Full, 4096);
        QVERIFY2(resize.find("shut down") != std::string::npos, resize.c_str());
    }

    // Before: a request submitted after run() had ended never got an event.
    void submitAfterShutdownEndsAtOnce() {
        Rig rig(model_);
        rig.start();
        rig.shutDown();
        Outcomes out(1);
        const uint64_t id = rig.scheduler->submit(shortRequest(), out.sink(0));
        QVERIFY(id != 0);
        // Delivered inside submit(): no engine thread is left to do it later.
        QCOMPARE(out.terminals[0], 1);
        QCOMPARE(out.lastKind[0], Event::Kind::Cancelled);
    }

    // Submitters race the shutdown and keep going after it: every request
    // ends exactly once, whichever side of the shutdown it landed on.
    void everyRequestEndsOnceAcrossShutdown() {
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
        QCOMPARE(missing, 0);
        QCOMPARE(doubled, 0);
    }
};

QTEST_GUILESS_MAIN(EngineThreadCallsTest)
#include "engine_thread_calls_test.moc"
