#pragma once
// A fixed set of worker threads for data-parallel kernels. parallelFor splits
// [0, n) into contiguous ranges and returns when all are done: one range per
// thread when n is below twice the threads, else chunks of about n / (8 x
// threads) that threads claim as they go, so one the system pauses (a busy
// desktop) holds up a chunk, not a whole share.
//
// A decode step calls parallelFor a few hundred times, each for tens of
// microseconds of work, so waking sleeping threads through the kernel on
// every call would cost a fifth of the step. Workers and the caller therefore
// spin (with a pause instruction) for a short while before they block on a
// condition variable; an idle engine still sleeps.
//
// Contract:
// - One job at a time. parallelFor called while another parallelFor of the
//   same pool runs (nested from inside fn, or from a second thread) throws
//   std::logic_error at once and runs nothing.
// - fn may throw. parallelFor still waits for every range to finish (no
//   thread is left inside a job whose fn no longer exists), then rethrows the
//   first exception on the calling thread. The pool stays usable.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::kernels {

class ThreadPool {
public:
    // threads <= 0 picks the number of hardware threads. Throws
    // std::runtime_error when the system refuses to start that many.
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // fn(begin, end, threadIndex) is called for disjoint ranges covering [0, n).
    // The calling thread takes part. See the contract above.
    void parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);

private:
    void workerLoop(int index);
    void stopWorkers();
    void runRange(int64_t n, int index);
    void keepFirstError(std::exception_ptr e);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const std::function<void(int64_t, int64_t, int)>* job_ = nullptr;  // written before generation_
    int64_t jobSize_ = 0;
    int64_t chunk_ = 0;                    // items per claimed chunk; 0: one static range per thread
    std::atomic<int64_t> nextChunk_{0};    // the next chunk to claim
    std::atomic<uint64_t> generation_{0};  // a new job: bumped under mutex_ (release)
    std::atomic<int> pending_{0};          // workers still running the current job
    std::atomic<bool> busy_{false};        // a parallelFor is in progress
    std::mutex errorMutex_;
    std::exception_ptr firstError_;        // under errorMutex_: the job's first exception
    bool stop_ = false;                    // under mutex_
};

} // namespace weir::kernels
