#pragma once
// The CPU backend's side of weir/step_profile.h: an OpClock on an op's stack
// adds its wall time to that op kind's process-wide sum while profiling is
// on, and what the thread pools' timing (ThreadPool::Timing) gained
// meanwhile: the op's round trips, the thread time they held and computed.
// Off, it costs one relaxed load.
#include <atomic>
#include <chrono>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"
#include "weir/types/step_op.h"

namespace weir {

struct OpClockSums {
    std::atomic<bool> on{false};
    std::atomic<uint64_t> steps{0}, forwardNs{0};
    std::atomic<uint64_t> opNs[kStepOps] = {}, opCalls[kStepOps] = {};
    std::atomic<uint64_t> opPoolWallNs[kStepOps] = {}, opPoolThreadNs[kStepOps] = {}, opPoolBusyNs[kStepOps] = {};
};
OpClockSums& opClockSums();

inline int64_t opClockNow() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

class OpClock {
public:
    explicit OpClock(StepOp op) : op_(op), start_(opClockSums().on.load(std::memory_order_relaxed) ? opClockNow() : 0) {
        if (start_) pool_ = kernels::ThreadPool::processTiming();
    }
    ~OpClock() {
        if (!start_) return;
        OpClockSums& s = opClockSums();
        const int k = int(op_);
        s.opNs[k].fetch_add(uint64_t(opClockNow() - start_), std::memory_order_relaxed);
        s.opCalls[k].fetch_add(1, std::memory_order_relaxed);
        const kernels::ThreadPool::Timing t = kernels::ThreadPool::processTiming();
        s.opPoolWallNs[k].fetch_add(t.wallNs - pool_.wallNs, std::memory_order_relaxed);
        s.opPoolThreadNs[k].fetch_add(t.threadNs - pool_.threadNs, std::memory_order_relaxed);
        s.opPoolBusyNs[k].fetch_add(t.busyNs - pool_.busyNs, std::memory_order_relaxed);
    }
    OpClock(const OpClock&) = delete;
    OpClock& operator=(const OpClock&) = delete;

private:
    StepOp op_;
    int64_t start_;
    kernels::ThreadPool::Timing pool_;
};

} // namespace weir
