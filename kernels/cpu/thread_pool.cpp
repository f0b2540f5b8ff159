#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace weir::kernels {

namespace {

// How long a thread spins for the next job (worker) or for the workers to
// finish (caller) before it blocks. It must outlast the time the system takes
// to wake a blocked thread, or the pool locks into a pattern where every job
// waits for a wake-up: with 50 us on a 2-core VM, once a caller blocked while
// its worker slept, each waited out the other's wake-up from then on, and a
// 2-thread decode through the Engine ran at 31.8 tok/s instead of 100.5.
// Spinning yields now and then, so on a busy machine the spin gives its core
// to whoever is runnable (often the very thread it waits for).
constexpr auto kSpin = std::chrono::microseconds(1000);

// Chunks per thread when a job has many items (see parallelFor).
constexpr int64_t kChunksPerThread = 8;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spins until done() or the budget is spent; true if done() held.
template <class Done>
bool spinUntil(Done done) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
        if (done()) return true;
        cpuRelax();
        if ((i & 63) == 63) {
            if (std::chrono::steady_clock::now() >= until) return done();
            std::this_thread::yield();
        }
    }
}
} // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    try {
        for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
    } catch (const std::system_error& e) {
        // The destructor does not run for a half-built pool: stop what started.
        stopWorkers();
        throw std::runtime_error("cannot start " + std::to_string(threads) + " threads (started " +
                                 std::to_string(workers_.size() + 1) + "): " + e.what());
    }
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::stopWorkers() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1, std::memory_order_release);  // spinning workers look at once
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

static void rangeFor(int64_t n, int parts, int index, int64_t& begin, int64_t& end) {
    const int64_t chunk = n / parts, rest = n % parts;
    begin = index * chunk + std::min<int64_t>(index, rest);
    end = begin + chunk + (index < rest ? 1 : 0);
}

namespace {

// Clears busy_ however parallelFor leaves.
struct BusyGuard {
    std::atomic<bool>& busy;
    ~BusyGuard() { busy.store(false, std::memory_order_release); }
};

} // namespace

void ThreadPool::keepFirstError(std::exception_ptr e) {
    std::lock_guard lock(errorMutex_);
    if (!firstError_) firstError_ = std::move(e);
}

void ThreadPool::runRange(int64_t n, int index) {
    auto run = [&](int64_t b, int64_t e) {
        try {
            (*job_)(b, e, index);
        } catch (...) {
            keepFirstError(std::current_exception());
        }
    };
    if (chunk_ == 0) {
        int64_t b, e;
        rangeFor(n, size(), index, b, e);
        if (b < e) run(b, e);
        return;
    }
    for (;;) {
        const int64_t b = nextChunk_.fetch_add(1, std::memory_order_relaxed) * chunk_;
        if (b >= n) return;
        run(b, std::min(n, b + chunk_));
    }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
    if (n <= 0) return;
    if (busy_.exchange(true, std::memory_order_acq_rel))
        throw std::logic_error("ThreadPool::parallelFor called while another parallelFor of the same pool runs "
                               "(nested inside a job, or from a second thread); the pool runs one job at a time");
    BusyGuard guard{busy_};
    const int parts = size();
    if (parts == 1 || n == 1) {
        fn(0, n, 0);
        return;
    }
    job_ = &fn;
    jobSize_ = n;
    // Few items: one range per thread. Many: claimed in chunks, about
    // kChunksPerThread per thread, so a thread the system pauses (other
    // programs on the cores) delays one chunk, not its whole share.
    chunk_ = n < 2 * parts ? 0 : std::max<int64_t>(1, n / (int64_t(parts) * kChunksPerThread));
    nextChunk_.store(0, std::memory_order_relaxed);
    pending_.store(parts - 1, std::memory_order_relaxed);
    {
        // Under the mutex, so a worker about to block sees either the old
        // generation and then this notify, or the new one before it waits.
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    // The caller's own range: even when it throws, the workers' ranges still
    // read fn, so wait for them before leaving.
    runRange(n, 0);
    if (!spinUntil([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    job_ = nullptr;
    std::exception_ptr error;
    {
        std::lock_guard lock(errorMutex_);
        error = std::exchange(firstError_, nullptr);
    }
    if (error) std::rethrow_exception(error);
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
        if (!spinUntil(fresh)) {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || fresh(); });
        }
        {
            std::lock_guard lock(mutex_);
            if (stop_) return;
        }
        seen = generation_.load(std::memory_order_acquire);
        runRange(jobSize_, index);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard lock(mutex_);  // pairs with the caller's check under the mutex
            done_.notify_one();
        }
    }
}

} // namespace weir::kernels
