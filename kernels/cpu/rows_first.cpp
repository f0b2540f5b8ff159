#include "kernels/cpu/rows_first.h"

#include <algorithm>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace weir::kernels {

void RowsFirst::reset(int64_t rows, int threads, std::function<void(int64_t, int64_t)> fn) {
    rows_ = rows > 0 ? rows : 0;
    run_ = std::max<int64_t>(1, rows_ / (8 * int64_t(std::max(threads, 1))));
    fn_ = std::move(fn);
    next_.value.store(0, std::memory_order_relaxed);
    done_.value.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_ = nullptr;
}

void RowsFirst::help() {
    for (int64_t r; (r = next_.value.fetch_add(1, std::memory_order_relaxed) * run_) < rows_;) {
        const int64_t end = std::min(rows_, r + run_);
        try {
            fn_(r, end);
        } catch (...) {
            // The first failure keeps its exception; the row still counts as
            // done, so no thread waits for it forever.
            bool expected = false;
            if (failed_.compare_exchange_strong(expected, true, std::memory_order_relaxed)) error_ = std::current_exception();
        }
        done_.value.fetch_add(end - r, std::memory_order_acq_rel);
    }
    for (int i = 0; done_.value.load(std::memory_order_acquire) < rows_; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
        if ((i & 63) == 63) std::this_thread::yield();
    }
    if (failed_.load(std::memory_order_relaxed)) rethrowFailure();
}

void RowsFirst::rethrowFailure() {
    // error_ was written before the failing row's done count, which this
    // thread has acquired.
    std::rethrow_exception(error_);
}

} // namespace weir::kernels
