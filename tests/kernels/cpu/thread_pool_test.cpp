// The thread pool's contract (kernels/cpu/thread_pool.h): ranges cover [0, n)
// exactly once; an exception in any range, the caller's or a worker's, is
// rethrown to the caller only after every range has finished; the pool is
// usable afterwards; nested or concurrent use is refused, not corrupted; a
// thread held up in its share does not hold up the rest of the job; the
// counters count round trips and chunks exactly.
#include "tests/support/weir_test.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/cpu/thread_pool.h"

using weir::kernels::ThreadPool;

namespace {

// Every index of [0, n) visited exactly once.
bool coversOnce(ThreadPool& pool, int64_t n) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    pool.parallelFor(n, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
    });
    for (auto& s : seen)
        if (s.load() != 1) return false;
    return true;
}

} // namespace

WEIR_TEST(ThreadPool, rangesCoverEverythingOnce) {
    ThreadPool pool(4);
    REQUIRE_EQ(pool.size(), 4);
    for (int64_t n : {1, 2, 3, 4, 5, 17, 1000}) REQUIRE_MSG(coversOnce(pool, n), std::to_string(n));
}

// Before: the caller's exception left parallelFor at once while the
// workers still ran the job through a reference to the caller's fn.
// Threads may run each other's items: the caller's items throw once a worker
// has started one, and every item a worker started must have finished.
WEIR_TEST(ThreadPool, callerExceptionWaitsForTheWorkers) {
    ThreadPool pool(4);
    std::atomic<bool> callerThrew{false};
    std::atomic<int> workersStarted{0}, workersDone{0};
    bool caught = false;
    try {
        pool.parallelFor(4, [&](int64_t, int64_t, int thread) {
            if (thread == 0) {
                while (workersStarted.load() == 0) std::this_thread::yield();
                callerThrew.store(true);
                throw std::runtime_error("caller range failed");
            }
            workersStarted.fetch_add(1);
            // Workers finish only after the caller's range has thrown.
            while (!callerThrew.load()) std::this_thread::yield();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            workersDone.fetch_add(1);
        });
    } catch (const std::runtime_error& e) {
        caught = true;
        REQUIRE_EQ(std::string(e.what()), std::string("caller range failed"));
        // Not a timing check: parallelFor returns only after every range.
        REQUIRE(workersStarted.load() >= 1);
        REQUIRE_EQ(workersDone.load(), workersStarted.load());
    }
    REQUIRE(caught);
    REQUIRE(coversOnce(pool, 1000));
}

// Before: an exception escaping a worker thread called std::terminate.
// Threads may run each other's items, so the caller's items wait until a
// worker has run one: some item then surely ran (and threw) on a worker.
WEIR_TEST(ThreadPool, workerExceptionReachesTheCaller) {
    ThreadPool pool(3);
    std::atomic<int> rangesRun{0};
    std::atomic<bool> workerRan{false};
    bool caught = false;
    try {
        pool.parallelFor(3, [&](int64_t b, int64_t e, int thread) {
            rangesRun.fetch_add(int(e - b));
            if (thread == 0) {
                while (!workerRan.load()) std::this_thread::yield();
                return;
            }
            workerRan.store(true);
            throw std::runtime_error("worker range failed");
        });
    } catch (const std::runtime_error& e) {
        caught = true;
        REQUIRE_EQ(std::string(e.what()), std::string("worker range failed"));
    }
    REQUIRE(caught);
    REQUIRE_EQ(rangesRun.load(), 3);
    REQUIRE(coversOnce(pool, 1000));
}

WEIR_TEST(ThreadPool, firstOfSeveralExceptionsIsRethrown) {
    ThreadPool pool(4);
    int caught = 0;
    for (int round = 0; round < 20; ++round) {
        try {
            pool.parallelFor(4, [](int64_t, int64_t, int thread) {
                throw std::runtime_error("range " + std::to_string(thread));
            });
        } catch (const std::runtime_error& e) {
            ++caught;
            REQUIRE(std::string(e.what()).rfind("range ", 0) == 0);
        }
    }
    REQUIRE_EQ(caught, 20);
    REQUIRE(coversOnce(pool, 1000));
}

// Before: a nested call overwrote the running job and waited on itself.
WEIR_TEST(ThreadPool, nestedCallIsRefused) {
    ThreadPool pool(2);
    std::atomic<int> refused{0};
    pool.parallelFor(2, [&](int64_t, int64_t, int) {
        try {
            pool.parallelFor(2, [](int64_t, int64_t, int) {});
        } catch (const std::logic_error&) {
            refused.fetch_add(1);
        }
    });
    REQUIRE_EQ(refused.load(), 2);  // from the caller's range and the worker's
    REQUIRE(coversOnce(pool, 100));
}

// Every range holds the job open, whichever thread runs it: a worker may
// claim both ranges before the calling thread claims one (TSan's slow start
// made that happen, and a test that waited for thread 0 waited forever).
WEIR_TEST(ThreadPool, secondThreadIsRefusedWhileAJobRuns) {
    ThreadPool pool(2);
    std::atomic<bool> inJob{false}, release{false};
    std::thread first([&] {
        pool.parallelFor(2, [&](int64_t, int64_t, int) {
            inJob.store(true);
            while (!release.load()) std::this_thread::yield();
        });
    });
    while (!inJob.load()) std::this_thread::yield();
    REQUIRE_THROWS(std::logic_error, pool.parallelFor(2, [](int64_t, int64_t, int) {}));
    release.store(true);
    first.join();
    REQUIRE(coversOnce(pool, 100));
}

WEIR_TEST(ThreadPool, singleThreadPoolKeepsTheContract) {
    ThreadPool pool(1);
    REQUIRE_THROWS(std::runtime_error, pool.parallelFor(10, [](int64_t, int64_t, int) {
        throw std::runtime_error("only range failed");
    }));
    REQUIRE(coversOnce(pool, 10));
}

// A thread stuck in its first chunk (a desktop program took its core): the
// other threads run every other chunk, its own share's included, as they did
// when all chunks came from one shared counter. (The wait has a generous way
// out so a regression fails instead of hanging.)
WEIR_TEST(ThreadPool, othersRunTheShareOfAThreadHeldUp) {
    ThreadPool pool(2);
    constexpr int64_t n = 64;  // chunks of 4 items: 8 per thread
    std::atomic<int64_t> itemsDone{0};
    std::atomic<bool> gaveUp{false};
    std::atomic<int> stuckThread{-1};
    pool.parallelFor(n, [&](int64_t b, int64_t e, int thread) {
        if (b == 0) {
            stuckThread.store(thread);
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (itemsDone.load() < n - (e - b)) {
                if (std::chrono::steady_clock::now() > until) {
                    gaveUp.store(true);
                    break;
                }
                std::this_thread::yield();
            }
        }
        itemsDone.fetch_add(e - b);
    });
    REQUIRE(!gaveUp.load());
    REQUIRE_EQ(itemsDone.load(), n);
    REQUIRE(stuckThread.load() >= 0);
}

WEIR_TEST(ThreadPool, countersCountRoundTripsAndChunks) {
    ThreadPool pool(4);
    auto nothing = [](int64_t, int64_t, int) {};
    const ThreadPool::Counters before = ThreadPool::processCounters();
    pool.parallelFor(1, nothing);     // one item: the caller alone
    pool.parallelFor(6, nothing);     // under 2 per thread: 6 chunks of 1
    pool.parallelFor(1000, nothing);  // chunks of 1000 / (4 x 8) = 31 items: 33 chunks
    pool.parallelFor(0, nothing);     // nothing at all
    ThreadPool alone(1);
    alone.parallelFor(50, nothing);   // a pool of one: inline
    const ThreadPool::Counters after = ThreadPool::processCounters();
    REQUIRE_EQ(after.roundTrips - before.roundTrips, uint64_t(2));
    REQUIRE_EQ(after.inlineCalls - before.inlineCalls, uint64_t(2));
    REQUIRE_EQ(after.chunks - before.chunks, uint64_t(6 + 33));
    REQUIRE(after.stolenChunks - before.stolenChunks <= uint64_t(6 + 33));
}

// Timing (ThreadPool::setTiming): on, each round trip's thread time is split
// into the work inside fn and the waits around it; off, nothing is added.
WEIR_TEST(ThreadPool, timingSplitsRoundTripsIntoWorkAndWaiting) {
    ThreadPool pool(3);
    auto spinFor = [](std::chrono::microseconds d) {
        const auto until = std::chrono::steady_clock::now() + d;
        while (std::chrono::steady_clock::now() < until) {
        }
    };
    auto job = [&] { pool.parallelFor(6, [&](int64_t b, int64_t e, int) { spinFor((e - b) * std::chrono::microseconds(200)); }); };
    const ThreadPool::Timing off0 = ThreadPool::processTiming();
    job();
    const ThreadPool::Timing off1 = ThreadPool::processTiming();
    CHECK_EQ(off1.roundTrips, off0.roundTrips);
    CHECK_EQ(off1.busyNs, off0.busyNs);

    ThreadPool::setTiming(true);
    const ThreadPool::Timing a = ThreadPool::processTiming();
    for (int i = 0; i < 5; ++i) job();
    pool.parallelFor(1, [](int64_t, int64_t, int) {});  // inline: not a round trip
    // The caller's item waits for a worker's: at least one worker picks a job up.
    std::atomic<bool> workerRan{false};
    pool.parallelFor(2, [&](int64_t, int64_t, int thread) {
        if (thread != 0) workerRan.store(true);
        else
            while (!workerRan.load()) std::this_thread::yield();
    });
    const ThreadPool::Timing b = ThreadPool::processTiming();
    ThreadPool::setTiming(false);
    const uint64_t trips = b.roundTrips - a.roundTrips, wall = b.wallNs - a.wallNs, busy = b.busyNs - a.busyNs;
    CHECK_EQ(trips, uint64_t(6));
    CHECK_EQ(b.threadNs - a.threadNs, wall * 3);
    // Five jobs of 6 items of 200 us each: at least 6 ms of work.
    CHECK_MSG(busy >= 5 * 1200000, std::to_string(busy) + " ns busy");
    CHECK_MSG(busy <= wall * 3, std::to_string(busy) + " ns busy in " + std::to_string(wall * 3) + " ns of thread time");
    CHECK_MSG(b.wakes - a.wakes >= 1 && b.wakes - a.wakes <= trips * 2,
              std::to_string(b.wakes - a.wakes) + " wake-ups of two workers in 6 jobs");
    CHECK_MSG(b.wakeNs - a.wakeNs <= wall * 2, "the workers waited longer than the round trips lasted");
    CHECK_MSG(b.tailNs - a.tailNs <= wall, "the caller waited longer than its round trips lasted");
}

namespace {
// A worker "the system does not run": a signal handler that holds the thread
// until released (lock-free atomics are safe in a handler).
std::atomic<bool> gHeld{false}, gRelease{false};
void holdThread(int) {
    gHeld.store(true);
    while (!gRelease.load()) {
    }
}
} // namespace

// Before: the caller waited for every worker's done-flag, so a worker that
// was not running (preempted on a loaded machine) held up each round trip
// until the scheduler ran it, though the caller had claimed every chunk.
// Now it is left out of the job; once it runs again it skips that job and
// takes part in the next. (A generous way out fails instead of hanging.)
WEIR_TEST(ThreadPool, aWorkerNotRunningIsLeftOutOnceEveryChunkIsTaken) {
    ThreadPool pool(2);
    std::atomic<pthread_t> worker{};
    std::atomic<bool> sawWorker{false};
    while (!sawWorker.load())  // the worker's thread, from a job it takes part in
        pool.parallelFor(2, [&](int64_t, int64_t, int thread) {
            if (thread == 0) {
                for (int i = 0; i < 1000000 && !sawWorker.load(); ++i) std::this_thread::yield();
            } else {
                worker.store(pthread_self());
                sawWorker.store(true);
            }
        });
    struct sigaction sa {};
    sa.sa_handler = holdThread;
    sigemptyset(&sa.sa_mask);
    struct sigaction old {};
    REQUIRE_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    REQUIRE_EQ(pthread_kill(worker.load(), SIGUSR1), 0);
    while (!gHeld.load()) std::this_thread::yield();

    const ThreadPool::Counters before = ThreadPool::processCounters();
    std::atomic<bool> returned{false};
    std::vector<std::atomic<int>> seen(64);
    std::thread caller([&] {
        pool.parallelFor(64, [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
        });
        returned.store(true);
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!returned.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    const bool returnedWhileHeld = returned.load();
    gRelease.store(true);
    caller.join();
    sigaction(SIGUSR1, &old, nullptr);
    CHECK_MSG(returnedWhileHeld, "the job waited for a worker that was not running and had nothing left to do");
    const ThreadPool::Counters after = ThreadPool::processCounters();
    CHECK_EQ(after.leftOut - before.leftOut, uint64_t(1));
    for (auto& s : seen) CHECK_EQ(s.load(), 1);
    // Running again, it skips the job it was left out of and joins the next ones.
    std::atomic<bool> workerRan{false};
    pool.parallelFor(2, [&](int64_t, int64_t, int thread) {
        if (thread != 0) workerRan.store(true);
        else
            while (!workerRan.load()) std::this_thread::yield();
    });
    CHECK(workerRan.load());
    REQUIRE(coversOnce(pool, 1000));
}
