#include "kernels/cpu/thread_pool.h"

#include <algorithm>

namespace weir::kernels {

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

static void rangeFor(int64_t n, int parts, int index, int64_t& begin, int64_t& end) {
    const int64_t chunk = n / parts, rest = n % parts;
    begin = index * chunk + std::min<int64_t>(index, rest);
    end = begin + chunk + (index < rest ? 1 : 0);
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
    if (n <= 0) return;
    const int parts = size();
    if (parts == 1 || n == 1) {
        fn(0, n, 0);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        job_ = &fn;
        jobSize_ = n;
        pending_ = parts - 1;
        ++generation_;
    }
    wake_.notify_all();
    int64_t b, e;
    rangeFor(n, parts, 0, b, e);
    if (b < e) fn(b, e, 0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        const std::function<void(int64_t, int64_t, int)>* job;
        int64_t n;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            n = jobSize_;
        }
        int64_t b, e;
        rangeFor(n, size(), index, b, e);
        if (b < e) (*job)(b, e, index);
        {
            std::lock_guard lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }
}

} // namespace weir::kernels
