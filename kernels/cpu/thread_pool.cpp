#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "kernels/cpu/cpu_topology.h"

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
// to whoever is runnable (often the very thread it waits for). That costs
// on an idle many-core machine: a yield is a system call, during which the
// thread does not see the job it waits for, and a hand-off waits for the
// last of its threads to see it. Not yielding for the first 20 us of a spin
// made 2-thread decode on a 2-core VM shared with compilers 22% slower (one
// series of 12 alternating pairs, medians), so yields start at once unless
// WEIR_POOL_YIELD_AFTER_US says otherwise (for measuring on many cores).
constexpr auto kSpin = std::chrono::microseconds(1000);

// WEIR_POOL_YIELD_AFTER_US: microseconds of a spin without yields (0 to
// 1000, default 0); read once.
std::chrono::microseconds yieldAfter() {
    static const std::chrono::microseconds after = [] {
        const char* v = std::getenv("WEIR_POOL_YIELD_AFTER_US");
        if (!v || !*v) return std::chrono::microseconds(0);
        char* end = nullptr;
        const long us = std::strtol(v, &end, 10);
        if (*end || us < 0 || us > 1000) return std::chrono::microseconds(0);
        return std::chrono::microseconds(us);
    }();
    return after;
}

// Chunks per thread when a job has many items (see parallelFor).
constexpr int64_t kChunksPerThread = 8;

// Share::next: the job's generation above a chunk index of kIndexBits bits
// (a job has at most about 16 chunks per thread, see parallelFor, and a pool
// at most kMaxThreads threads). The generation's 40 bits repeat after 2^40
// jobs, a year at 30,000 a second.
constexpr int kIndexBits = 24;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
constexpr int kMaxThreads = 1 << 16;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spins until done() or the budget is spent; true if done() held.
template <class Done>
bool spinUntil(Done done) {
    const auto start = std::chrono::steady_clock::now();
    const auto yieldFrom = start + yieldAfter(), until = start + kSpin;
    for (int i = 0;; ++i) {
        if (done()) return true;
        cpuRelax();
        if ((i & 63) == 63) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= until) return done();
            if (now >= yieldFrom) std::this_thread::yield();
        }
    }
}

// The process-wide counters (ThreadPool::Counters). The caller's three share
// a line (one writer per pool, pools rarely run at once); steals, written by
// any thread, get their own.
struct alignas(128) CallerCounters {
    std::atomic<uint64_t> roundTrips{0}, inlineCalls{0}, chunks{0};
};
struct alignas(128) StealCounter {
    std::atomic<uint64_t> stolen{0};
};
struct alignas(128) LeftOutCounter {
    std::atomic<uint64_t> leftOut{0};
};
LeftOutCounter gLeftOut;

// WorkerSlot::state: a generation above two bits of what happened to it.
constexpr uint64_t kEntered = 1, kDone = 2, kLeftOut = 3;
constexpr uint64_t slotState(uint64_t generation, uint64_t what) { return generation << 2 | what; }
constexpr uint64_t slotGeneration(uint64_t state) { return state >> 2; }
CallerCounters gCaller;
StealCounter gSteals;

// ThreadPool::Timing's sums; written only while timing is on.
struct alignas(128) TimingSums {
    std::atomic<bool> on{false};
    std::atomic<uint64_t> roundTrips{0}, wallNs{0}, threadNs{0}, busyNs{0}, wakeNs{0}, wakes{0}, tailNs{0};
};
TimingSums gTiming;

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void rangeFor(int64_t n, int parts, int index, int64_t& begin, int64_t& end) {
    const int64_t chunk = n / parts, rest = n % parts;
    begin = index * chunk + std::min<int64_t>(index, rest);
    end = begin + chunk + (index < rest ? 1 : 0);
}

// Clears busy however parallelFor leaves.
struct BusyGuard {
    std::atomic<bool>& busy;
    ~BusyGuard() { busy.store(false, std::memory_order_release); }
};

} // namespace

ThreadPool::Counters ThreadPool::processCounters() {
    Counters c;
    c.roundTrips = gCaller.roundTrips.load(std::memory_order_relaxed);
    c.inlineCalls = gCaller.inlineCalls.load(std::memory_order_relaxed);
    c.chunks = gCaller.chunks.load(std::memory_order_relaxed);
    c.stolenChunks = gSteals.stolen.load(std::memory_order_relaxed);
    c.leftOut = gLeftOut.leftOut.load(std::memory_order_relaxed);
    return c;
}

void ThreadPool::setTiming(bool on) { gTiming.on.store(on, std::memory_order_relaxed); }

ThreadPool::Timing ThreadPool::processTiming() {
    Timing t;
    t.roundTrips = gTiming.roundTrips.load(std::memory_order_relaxed);
    t.wallNs = gTiming.wallNs.load(std::memory_order_relaxed);
    t.threadNs = gTiming.threadNs.load(std::memory_order_relaxed);
    t.busyNs = gTiming.busyNs.load(std::memory_order_relaxed);
    t.wakeNs = gTiming.wakeNs.load(std::memory_order_relaxed);
    t.wakes = gTiming.wakes.load(std::memory_order_relaxed);
    t.tailNs = gTiming.tailNs.load(std::memory_order_relaxed);
    return t;
}

ThreadPool::ThreadPool(int threads) {
    threads_ = threads > 0 ? threads : physicalCores();
    if (threads_ > kMaxThreads)
        throw std::runtime_error("cannot start " + std::to_string(threads_) + " threads: a pool has at most " +
                                 std::to_string(kMaxThreads));
    shares_ = std::make_unique<Share[]>(size_t(threads_));
    slots_ = std::make_unique<WorkerSlot[]>(size_t(threads_));
    try {
        for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
    } catch (const std::system_error& e) {
        // The destructor does not run for a half-built pool: stop what started.
        stopWorkers();
        throw std::runtime_error("cannot start " + std::to_string(threads_) + " threads (started " +
                                 std::to_string(workers_.size() + 1) + "): " + e.what());
    }
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::stopWorkers() {
    job_.stop.store(true, std::memory_order_relaxed);
    job_.generation.fetch_add(1, std::memory_order_seq_cst);  // spinning workers look at once
    { std::lock_guard lock(mutex_); }                         // a worker about to block sees it or the notify
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::keepFirstError(std::exception_ptr e) {
    std::lock_guard lock(errorMutex_);
    if (!firstError_) firstError_ = std::move(e);
}

void ThreadPool::runShares(int self, uint64_t generation) {
    const int64_t n = job_.size, chunk = job_.chunk, chunks = job_.chunks;
    const uint64_t tag = generation << kIndexBits;
    // The next chunk of thread j's share [first, last), or -1 when none is
    // left. The first to reach a share this job (its owner, or a thief when
    // the owner is late) finds an older job's tag and swaps in this job's
    // with the first chunk claimed; everyone after adds one.
    auto claim = [&](int j, int64_t first, int64_t last) -> int64_t {
        Share& s = shares_[size_t(j)];
        uint64_t v = s.next.load(std::memory_order_relaxed);
        for (;;) {
            if ((v & ~kIndexMask) != tag) {
                if (s.next.compare_exchange_weak(v, tag | uint64_t(first + 1), std::memory_order_relaxed)) return first;
                continue;  // v reloaded
            }
            // Look before claiming: a finished share is only read, not written.
            if (int64_t(v & kIndexMask) >= last) return -1;
            const int64_t c = int64_t(s.next.fetch_add(1, std::memory_order_relaxed) & kIndexMask);
            return c < last ? c : -1;
        }
    };
    const bool timed = job_.timed;
    int64_t firstNs = 0, busyNs = 0;
    auto run = [&](int64_t c) {
        const int64_t b = c * chunk;
        const int64_t t0 = timed ? nowNs() : 0;
        if (timed && !firstNs) firstNs = t0;
        try {
            (*job_.fn)(b, std::min(n, b + chunk), self);
        } catch (...) {
            keepFirstError(std::current_exception());
        }
        if (timed) busyNs += nowNs() - t0;
    };
    // Its own share, then what is left of the others', the next thread's first.
    uint64_t stolen = 0;
    for (int k = 0; k < threads_; ++k) {
        const int j = self + k < threads_ ? self + k : self + k - threads_;
        int64_t first, last;
        rangeFor(chunks, threads_, j, first, last);
        if (first == last) continue;  // never touched: its counter may hold any old tag
        for (int64_t c; (c = claim(j, first, last)) >= 0;) {
            run(c);
            stolen += k != 0;
        }
    }
    if (stolen) gSteals.stolen.fetch_add(stolen, std::memory_order_relaxed);
    if (timed) {
        gTiming.busyNs.fetch_add(uint64_t(busyNs), std::memory_order_relaxed);
        if (self != 0 && firstNs) {  // a worker that found every chunk taken did not wait for one
            gTiming.wakeNs.fetch_add(uint64_t(std::max<int64_t>(0, firstNs - job_.publishNs)), std::memory_order_relaxed);
            gTiming.wakes.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
    if (n <= 0) return;
    if (busy_.exchange(true, std::memory_order_acq_rel))
        throw std::logic_error("ThreadPool::parallelFor called while another parallelFor of the same pool runs "
                               "(nested inside a job, or from a second thread); the pool runs one job at a time");
    BusyGuard guard{busy_};
    const int parts = threads_;
    if (parts == 1 || n == 1) {
        gCaller.inlineCalls.fetch_add(1, std::memory_order_relaxed);
        fn(0, n, 0);
        return;
    }
    // Few items: one per chunk. Many: about kChunksPerThread chunks per
    // thread, so a thread the system pauses (other programs on the cores)
    // delays one chunk, not its whole share.
    const int64_t chunk = n < 2 * parts ? 1 : std::max<int64_t>(1, n / (int64_t(parts) * kChunksPerThread));
    job_.fn = &fn;
    job_.size = n;
    job_.chunk = chunk;
    job_.chunks = (n + chunk - 1) / chunk;
    job_.timed = gTiming.on.load(std::memory_order_relaxed);
    job_.publishNs = job_.timed ? nowNs() : 0;
    const uint64_t generation = job_.generation.load(std::memory_order_relaxed) + 1;
    // seq_cst store, then the sleepers' count: a worker about to block counts
    // itself first and then looks at the generation, so either it sees this
    // job or this thread sees it and wakes it.
    job_.generation.store(generation, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
        { std::lock_guard lock(mutex_); }  // it is waiting, or will see the generation under the mutex
        wake_.notify_all();
    }
    gCaller.roundTrips.fetch_add(1, std::memory_order_relaxed);
    gCaller.chunks.fetch_add(uint64_t(job_.chunks), std::memory_order_relaxed);

    // The caller's share (and steals): even when fn throws, the workers'
    // ranges still read fn, so wait for them before leaving.
    runShares(0, generation);
    const int64_t callerDoneNs = job_.timed ? nowNs() : 0;
    // Every chunk is claimed now: wait for the workers that entered the job
    // (some may still run a chunk); leave out those that have not.
    int pending = 1;  // the first worker not yet seen done or left out
    uint64_t leftOut = 0;
    auto allDone = [&](std::memory_order order) {
        for (; pending < parts; ++pending) {
            std::atomic<uint64_t>& slot = slots_[size_t(pending)].state;
            uint64_t v = slot.load(order);
            if (slotGeneration(v) < generation &&
                slot.compare_exchange_strong(v, slotState(generation, kLeftOut), std::memory_order_seq_cst)) {
                ++leftOut;
                continue;
            }
            // It entered this job (v says so, or the exchange failed because it just did).
            if (v != slotState(generation, kDone)) return false;
        }
        return true;
    };
    if (!spinUntil([&] { return allDone(std::memory_order_acquire); })) {
        std::unique_lock lock(mutex_);
        callerSleeping_.store(true, std::memory_order_seq_cst);  // then look: see workerLoop's end
        finished_.wait(lock, [&] { return allDone(std::memory_order_seq_cst); });
        callerSleeping_.store(false, std::memory_order_relaxed);
    }
    if (leftOut) gLeftOut.leftOut.fetch_add(leftOut, std::memory_order_relaxed);
    if (job_.timed) {
        const int64_t end = nowNs();
        const uint64_t wall = uint64_t(std::max<int64_t>(0, end - job_.publishNs));
        gTiming.roundTrips.fetch_add(1, std::memory_order_relaxed);
        gTiming.wallNs.fetch_add(wall, std::memory_order_relaxed);
        gTiming.threadNs.fetch_add(wall * uint64_t(parts), std::memory_order_relaxed);
        gTiming.tailNs.fetch_add(uint64_t(std::max<int64_t>(0, end - callerDoneNs)), std::memory_order_relaxed);
    }
    job_.fn = nullptr;
    std::exception_ptr error;
    {
        std::lock_guard lock(errorMutex_);
        error = std::exchange(firstError_, nullptr);
    }
    if (error) std::rethrow_exception(error);
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0, generation = 0;
    auto fresh = [&](std::memory_order order) {
        generation = job_.generation.load(order);
        return generation != seen;
    };
    for (;;) {
        if (!spinUntil([&] { return fresh(std::memory_order_acquire); })) {
            std::unique_lock lock(mutex_);
            sleepers_.fetch_add(1, std::memory_order_seq_cst);  // then look (see parallelFor)
            wake_.wait(lock, [&] { return fresh(std::memory_order_seq_cst); });
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
        seen = generation;
        if (job_.stop.load(std::memory_order_relaxed)) return;  // stored before the generation we acquired
        // Enter the job, unless the caller has left this worker out of it
        // (every chunk was taken before it came): then it reads nothing of
        // the job, which the caller may already be replacing.
        std::atomic<uint64_t>& slot = slots_[size_t(index)].state;
        uint64_t v = slot.load(std::memory_order_acquire);
        bool entered = false;
        while (slotGeneration(v) < generation &&
               !(entered = slot.compare_exchange_weak(v, slotState(generation, kEntered), std::memory_order_acq_rel))) {
        }
        if (!entered) continue;
        runShares(index, generation);
        // seq_cst store, then look at the caller: it marks itself asleep and
        // then looks at the slots, so it sees this one or is woken.
        slot.store(slotState(generation, kDone), std::memory_order_seq_cst);
        if (callerSleeping_.load(std::memory_order_seq_cst)) {
            { std::lock_guard lock(mutex_); }
            finished_.notify_one();
        }
    }
}

} // namespace weir::kernels
