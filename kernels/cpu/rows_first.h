#pragma once
// Per-row work that every item of a pool job needs before it runs (a
// matmul's activation conversion, the residual norm that feeds it), done
// inside that job instead of by the caller before it: each thread that
// enters the job claims rows (one at a time for a decode step's few, a run
// of them for a prompt's hundreds) until none is left, then waits until
// every claimed row is done. With 16 rows of a 16-conversation decode step and 16
// threads, the caller's serial conversion (and norm) becomes one row per
// thread, and no extra round trip is paid for it.
//
// Usage: the caller reset()s it before publishing the job (the publish
// orders the reset before the workers' reads), every chunk of the job calls
// ready() before it reads a row, and the caller keeps it alive until the job
// has returned. Each row runs exactly once, on whichever thread claims it, so
// a row's work must give the same bits on any thread (per-row kernels do).
// A thread the system pauses while it holds a row delays the others by that
// row; the waiters spin with a pause and yield now and then, so on a busy
// machine they give their core to it.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>

namespace weir::kernels {

class RowsFirst {
public:
    // fn(begin, end) over rows [0, rows) before the job's items, in runs of
    // about rows / (8 x threads) rows (at least one) for a pool of `threads`;
    // rows 0 leaves nothing to do.
    void reset(int64_t rows, int threads, std::function<void(int64_t, int64_t)> fn);
    // Helps with the rows still unclaimed, then returns once every row is
    // done: at once after the first call on a thread that saw them done.
    // Rethrows a row's exception (on every thread that waited for it).
    void ready() {
        if (done_.value.load(std::memory_order_acquire) >= rows_) {
            if (failed_.load(std::memory_order_relaxed)) rethrowFailure();
            return;
        }
        help();
    }
    int64_t rows() const { return rows_; }

private:
    void help();
    [[noreturn]] void rethrowFailure();

    struct alignas(128) Counter {
        std::atomic<int64_t> value{0};
    };
    int64_t rows_ = 0, run_ = 1;  // rows, and rows per claim
    std::function<void(int64_t, int64_t)> fn_;
    Counter next_;  // the next run to claim
    Counter done_;  // rows finished (acq_rel: a waiter that sees them all sees their writes)
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;  // written once, by the thread that set failed_
};

} // namespace weir::kernels
