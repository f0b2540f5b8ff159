#pragma once
// A fixed set of worker threads for data-parallel kernels. parallelFor splits
// [0, n) into contiguous ranges, one per thread, and returns when all are done.
//
// A decode step calls parallelFor a few hundred times, each for tens of
// microseconds of work, so waking sleeping threads through the kernel on
// every call would cost a fifth of the step. Workers and the caller therefore
// spin (with a pause instruction) for a short while before they block on a
// condition variable; an idle engine still sleeps.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::kernels {

class ThreadPool {
public:
    // threads <= 0 picks the number of hardware threads.
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // fn(begin, end, threadIndex) is called for disjoint ranges covering [0, n).
    // The calling thread takes part. Not reentrant: do not nest parallelFor.
    void parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);

private:
    void workerLoop(int index);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const std::function<void(int64_t, int64_t, int)>* job_ = nullptr;  // written before generation_
    int64_t jobSize_ = 0;
    std::atomic<uint64_t> generation_{0};  // a new job: bumped under mutex_ (release)
    std::atomic<int> pending_{0};          // workers still running the current job
    bool stop_ = false;                    // under mutex_
};

} // namespace weir::kernels
