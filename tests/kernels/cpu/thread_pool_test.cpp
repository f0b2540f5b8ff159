// The thread pool's contract (kernels/cpu/thread_pool.h): ranges cover [0, n)
// exactly once; an exception in any range, the caller's or a worker's, is
// rethrown to the caller only after every range has finished; the pool is
// usable afterwards; nested or concurrent use is refused, not corrupted.
#include "tests/support/weir_test.h"

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
WEIR_TEST(ThreadPool, callerExceptionWaitsForTheWorkers) {
    ThreadPool pool(4);
    std::atomic<bool> callerThrew{false};
    std::atomic<int> workersDone{0};
    bool caught = false;
    try {
        pool.parallelFor(4, [&](int64_t, int64_t, int thread) {
            if (thread == 0) {
                callerThrew.store(true);
                throw std::runtime_error("caller range failed");
            }
            // Workers finish only after the caller's range has thrown.
            while (!callerThrew.load()) std::this_thread::yield();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            workersDone.fetch_add(1);
        });
    } catch (const std::runtime_error& e) {
        caught = true;
        REQUIRE_EQ(std::string(e.what()), std::string("caller range failed"));
        // Not a timing check: parallelFor returns only after every range.
        REQUIRE_EQ(workersDone.load(), 3);
    }
    REQUIRE(caught);
    REQUIRE(coversOnce(pool, 1000));
}

// Before: an exception escaping a worker thread called std::terminate.
WEIR_TEST(ThreadPool, workerExceptionReachesTheCaller) {
    ThreadPool pool(3);
    std::atomic<int> rangesRun{0};
    bool caught = false;
    try {
        pool.parallelFor(3, [&](int64_t, int64_t, int thread) {
            rangesRun.fetch_add(1);
            if (thread == 2) throw std::runtime_error("worker range failed");
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

WEIR_TEST(ThreadPool, secondThreadIsRefusedWhileAJobRuns) {
    ThreadPool pool(2);
    std::atomic<bool> inJob{false}, release{false};
    std::thread first([&] {
        pool.parallelFor(2, [&](int64_t, int64_t, int thread) {
            if (thread != 0) return;
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
