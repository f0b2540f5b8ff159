#include "kernels/cpu/read_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace weir::kernels {
namespace {

// Sums a slice with four independent accumulators so the loads, not the
// adds, set the pace; the compiler vectorizes the loop.
uint64_t sumSlice(const uint64_t* p, size_t n) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
    }
    for (; i < n; ++i) a += p[i];
    return a ^ b ^ c ^ d;
}

} // namespace

double measureReadBandwidth(ThreadPool& pool, size_t bytes, int repeats) {
    const size_t words = std::max<size_t>(bytes / sizeof(uint64_t), 1024);
    std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
    // Written by the threads that will read it, so pages sit where they run.
    const int64_t slices = pool.size();
    pool.parallelFor(slices, [&](int64_t begin, int64_t end, int) {
        for (int64_t s = begin; s < end; ++s) {
            const size_t from = words * size_t(s) / size_t(slices), to = words * size_t(s + 1) / size_t(slices);
            for (size_t i = from; i < to; ++i) buffer[i] = i * 0x9e3779b97f4a7c15ull;
        }
    });
    std::atomic<uint64_t> sink{0};  // an atomic the sums go to: the reads cannot be dropped
    double best = 0;
    for (int pass = 0; pass <= repeats; ++pass) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallelFor(slices, [&](int64_t begin, int64_t end, int) {
            for (int64_t s = begin; s < end; ++s) {
                const size_t from = words * size_t(s) / size_t(slices), to = words * size_t(s + 1) / size_t(slices);
                sink.fetch_xor(sumSlice(buffer.get() + from, to - from), std::memory_order_relaxed);
            }
        });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (pass > 0 && seconds > 0) best = std::max(best, double(words * sizeof(uint64_t)) / seconds);  // pass 0 warms up
    }
    return best;
}

} // namespace weir::kernels
