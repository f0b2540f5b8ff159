#pragma once
// The CPU backend's side of weir/step_profile.h: an OpClock on an op's stack
// adds its wall time to that op kind's process-wide sum while profiling is
// on; off, it costs one relaxed load.
#include <atomic>
#include <chrono>
#include <cstdint>

#include "weir/types/step_op.h"

namespace weir {

struct OpClockSums {
    std::atomic<bool> on{false};
    std::atomic<uint64_t> steps{0}, forwardNs{0};
    std::atomic<uint64_t> opNs[kStepOps] = {}, opCalls[kStepOps] = {};
};
OpClockSums& opClockSums();

inline int64_t opClockNow() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

class OpClock {
public:
    explicit OpClock(StepOp op) : op_(op), start_(opClockSums().on.load(std::memory_order_relaxed) ? opClockNow() : 0) {}
    ~OpClock() {
        if (!start_) return;
        OpClockSums& s = opClockSums();
        s.opNs[int(op_)].fetch_add(uint64_t(opClockNow() - start_), std::memory_order_relaxed);
        s.opCalls[int(op_)].fetch_add(1, std::memory_order_relaxed);
    }
    OpClock(const OpClock&) = delete;
    OpClock& operator=(const OpClock&) = delete;

private:
    StepOp op_;
    int64_t start_;
};

} // namespace weir
