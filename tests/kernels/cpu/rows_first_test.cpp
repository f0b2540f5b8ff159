// RowsFirst: the rows a job needs first run inside the job, each exactly
// once, and no chunk starts before all of them are done; a failing row
// reaches the caller without leaving a thread waiting; one object serves job
// after job.
#include "tests/support/weir_test.h"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/cpu/rows_first.h"
#include "kernels/cpu/thread_pool.h"

using namespace weir::kernels;

WEIR_TEST(RowsFirst, everyRowOnceAndAllBeforeAnyChunk) {
    for (const int threads : {1, 2, 4}) {
        ThreadPool pool(threads);
        RowsFirst first;
        for (const int64_t rows : {0, 1, 3, 16, 257}) {
            std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[size_t(rows) + 1]);
            for (int64_t r = 0; r < rows; ++r) runs[size_t(r)].store(0);
            first.reset(rows, threads, [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) runs[size_t(r)].fetch_add(1, std::memory_order_relaxed);
            });
            std::atomic<int> early{0};
            pool.parallelFor(64, [&](int64_t b, int64_t e, int) {
                first.ready();
                for (int64_t i = b; i < e; ++i)
                    for (int64_t r = 0; r < rows; ++r)
                        if (runs[size_t(r)].load(std::memory_order_relaxed) != 1) early.fetch_add(1);
            });
            int wrong = 0;
            for (int64_t r = 0; r < rows; ++r) wrong += runs[size_t(r)].load() != 1;
            const std::string where = std::to_string(threads) + " threads, " + std::to_string(rows) + " rows";
            CHECK_MSG(wrong == 0, where + ": " + std::to_string(wrong) + " rows not run exactly once");
            CHECK_MSG(early.load() == 0, where + ": a chunk saw a row not yet done");
        }
    }
}

WEIR_TEST(RowsFirst, aFailingRowReachesTheCallerAndThePoolGoesOn) {
    ThreadPool pool(4);
    RowsFirst first;
    std::atomic<int> ran{0};
    first.reset(32, 4, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            ran.fetch_add(1);
            if (r == 5) throw std::runtime_error("row 5 failed");
        }
    });
    bool threw = false;
    try {
        pool.parallelFor(16, [&](int64_t, int64_t, int) { first.ready(); });
    } catch (const std::runtime_error& e) {
        threw = std::string(e.what()) == "row 5 failed";
    }
    CHECK(threw);
    CHECK_EQ(ran.load(), 32);  // one row per claim (32 rows, 4 threads): the others still ran, nobody waits forever
    // The next job, with new rows, runs normally.
    std::atomic<int> second{0};
    first.reset(8, 4, [&](int64_t b, int64_t e) { second.fetch_add(int(e - b)); });
    pool.parallelFor(16, [&](int64_t, int64_t, int) { first.ready(); });
    CHECK_EQ(second.load(), 8);
}
