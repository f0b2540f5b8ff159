// What one synchronisation point of the thread pool costs, per thread count:
//   round_trip_static:  one parallelFor of `threads` items (one per thread)
//                       of --work-ns of spinning each: the wake-up of the
//                       workers plus the wait for the last of them, the fixed
//                       cost every kernel call of a decode step pays
//                       (overhead_ns: the median less the work). The items
//                       must take time: the caller runs empty ones alone
//                       before a worker comes, and leaves the worker out;
//   round_trip_chunked: one parallelFor of 64 x threads items of a 64th of
//                       that work (the claimed-chunk path of large kernels);
//   barrier:            one spinning barrier among `threads` threads (a
//                       sense-reversing counter; waiters yield now and then):
//                       about the least any hand-off costs, what a job that
//                       ran several kernels between barriers would pay per
//                       kernel.
// Each call is timed on its own (steady_clock, on the calling thread, which
// takes part); median, p90 and mean in ns over up to --seconds per figure,
// and the workers left out per round trip (they came after every chunk was
// taken). Thread counts above the physical cores oversubscribe them: those
// figures are marked ("oversubscribed": true) and mostly measure the scheduler.
//
//   build/bin/pool_handoff_bench [--threads 2,4,8,16] [--seconds 1]
//                                [--figures static,chunked,barrier] [--work-ns 2000]
// prints one JSON object (a figure not asked for has 0 samples). One figure
// at a time under `perf stat -e syscalls:sys_enter_futex,...` gives the
// system calls per hand-off (divide by its samples).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_topology.h"
#include "kernels/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using weir::kernels::ThreadPool;
using Clock = std::chrono::steady_clock;

namespace {

struct Summary {
    double median = 0, p90 = 0, mean = 0;
    size_t samples = 0;
    double workNs = -1;       // round trips: each thread's share of the work
    double leftOutPerTrip = 0;
};

Summary summarise(std::vector<double> ns) {
    Summary s;
    if (ns.empty()) return s;
    std::sort(ns.begin(), ns.end());
    s.samples = ns.size();
    s.median = ns[ns.size() / 2];
    s.p90 = ns[std::min(ns.size() - 1, ns.size() * 9 / 10)];
    double sum = 0;
    for (double v : ns) sum += v;
    s.mean = sum / double(ns.size());
    return s;
}

std::string json(const Summary& s) {
    char buf[320];
    int n = std::snprintf(buf, sizeof buf, "{\"median_ns\":%.0f,\"p90_ns\":%.0f,\"mean_ns\":%.0f,\"samples\":%zu", s.median,
                          s.p90, s.mean, s.samples);
    if (s.workNs >= 0)
        n += std::snprintf(buf + n, sizeof buf - size_t(n),
                           ",\"work_ns\":%.0f,\"overhead_ns\":%.0f,\"left_out_workers_per_round_trip\":%.3f", s.workNs,
                           s.median - s.workNs, s.leftOutPerTrip);
    std::snprintf(buf + n, sizeof buf - size_t(n), "}");
    return buf;
}

constexpr size_t kMaxSamples = 200000;

void spinFor(double ns) {
    const auto until = Clock::now() + std::chrono::nanoseconds(int64_t(ns));
    while (Clock::now() < until) {
    }
}

// Times parallelFor(items of itemNs each) call by call for about `seconds`.
Summary roundTrips(ThreadPool& pool, int64_t items, double itemNs, double seconds) {
    auto work = [itemNs](int64_t b, int64_t e, int) { spinFor(double(e - b) * itemNs); };
    for (int i = 0; i < 200; ++i) pool.parallelFor(items, work);  // workers up and spinning
    std::vector<double> ns;
    ns.reserve(kMaxSamples);
    const uint64_t leftOut = ThreadPool::processCounters().leftOut;
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (ns.size() < kMaxSamples) {
        const auto t0 = Clock::now();
        pool.parallelFor(items, work);
        const auto t1 = Clock::now();
        ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
        if (t1 >= until) break;
    }
    const double trips = double(ns.size());
    Summary s = summarise(std::move(ns));
    s.workNs = itemNs * double(items) / double(pool.size());
    s.leftOutPerTrip = double(ThreadPool::processCounters().leftOut - leftOut) / trips;
    return s;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// A sense-reversing counting barrier: the last thread to arrive resets the
// count and flips the sense; the others spin on the sense (yielding every 64
// pauses, so oversubscribed threads still make progress).
class SpinBarrier {
public:
    explicit SpinBarrier(int parties) : parties_(parties), left_(parties) {}
    void arriveAndWait() {
        const bool sense = !sense_.load(std::memory_order_relaxed);
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            left_.store(parties_, std::memory_order_relaxed);
            sense_.store(sense, std::memory_order_release);
            return;
        }
        for (int i = 1; sense_.load(std::memory_order_acquire) != sense; ++i) {
            cpuRelax();
            if ((i & 63) == 0) std::this_thread::yield();
        }
    }

private:
    const int parties_;
    alignas(64) std::atomic<int> left_;
    alignas(64) std::atomic<bool> sense_{false};
};

// Times barriers among `threads` plain threads (the caller one of them): the
// caller stamps the clock after each barrier; the gaps are the barrier's
// cost, there is no work between. Threads of their own, not the pool's: how
// the pool hands out items is not the question here.
Summary barriers(int threads, double seconds) {
    auto run = [&](int count, std::vector<double>* ns) {
        SpinBarrier barrier(threads);
        std::vector<std::thread> others;
        for (int t = 1; t < threads; ++t)
            others.emplace_back([&] {
                for (int i = 0; i < count; ++i) barrier.arriveAndWait();
            });
        auto last = Clock::now();
        for (int i = 0; i < count; ++i) {
            barrier.arriveAndWait();
            const auto now = Clock::now();
            if (ns) ns->push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count()));
            last = now;
        }
        for (auto& t : others) t.join();
    };
    // How many barriers fit in `seconds`: from a trial run (which also warms up).
    const auto t0 = Clock::now();
    run(1000, nullptr);
    const double per = std::chrono::duration<double>(Clock::now() - t0).count() / 1000.0;
    const int count = int(std::clamp(seconds / std::max(per, 1e-9), 1000.0, double(kMaxSamples)));
    std::vector<double> ns;
    ns.reserve(size_t(count));
    run(count, &ns);
    return summarise(std::move(ns));
}

std::vector<int> parseList(const char* s) {
    std::vector<int> v;
    for (const char* p = s; *p;) {
        char* end = nullptr;
        const long x = std::strtol(p, &end, 10);
        if (end == p || x < 1 || x > 1024) {
            std::fprintf(stderr, "pool_handoff_bench: --threads wants a comma-separated list of counts from 1 to 1024, got '%s'\n", s);
            std::exit(2);
        }
        v.push_back(int(x));
        p = *end == ',' ? end + 1 : end;
    }
    return v;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<int> threadCounts{2, 4, 8, 16};
    double seconds = 1.0;
    std::string figures = "static,chunked,barrier";
    double workNs = 2000;  // per thread and round trip: a small decode kernel's share
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
            threadCounts = parseList(argv[++i]);
        } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
            seconds = std::atof(argv[++i]);
            if (!(seconds > 0 && seconds <= 600)) {
                std::fprintf(stderr, "pool_handoff_bench: --seconds must be from 0 to 600\n");
                return 2;
            }
        } else if (!std::strcmp(argv[i], "--figures") && i + 1 < argc) {
            figures = argv[++i];
        } else if (!std::strcmp(argv[i], "--work-ns") && i + 1 < argc) {
            workNs = std::atof(argv[++i]);
            if (!(workNs >= 0 && workNs <= 1e7)) {
                std::fprintf(stderr, "pool_handoff_bench: --work-ns must be from 0 to 10000000\n");
                return 2;
            }
        } else {
            std::fprintf(stderr, "usage: pool_handoff_bench [--threads 2,4,8,16] [--seconds 1] [--figures static,chunked,barrier] [--work-ns 2000]\n");
            return 2;
        }
    }
    const int cores = weir::kernels::physicalCores();
    std::printf("{\"physical_cores\":%d,\"usable_cpus\":%d,\"seconds_per_figure\":%g,\"results\":[", cores,
                weir::kernels::usableCpus(), seconds);
    for (size_t k = 0; k < threadCounts.size(); ++k) {
        const int t = threadCounts[k];
        ThreadPool pool(t);
        auto wanted = [&](const char* name) { return figures.find(name) != std::string::npos; };
        const Summary stat = wanted("static") ? roundTrips(pool, t, workNs, seconds) : Summary{};
        const Summary chunked = wanted("chunked") ? roundTrips(pool, 64 * int64_t(t), workNs / 64, seconds) : Summary{};
        const Summary bar = t > 1 && wanted("barrier") ? barriers(t, seconds) : Summary{};
        std::printf("%s\n{\"threads\":%d,\"oversubscribed\":%s,\"round_trip_static\":%s,\"round_trip_chunked\":%s,\"barrier\":%s}",
                    k ? "," : "", t, t > cores ? "true" : "false", json(stat).c_str(), json(chunked).c_str(),
                    json(bar).c_str());
        std::fflush(stdout);
    }
    std::printf("]}\n");
    return 0;
}
