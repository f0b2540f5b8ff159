#include "weir/step_profile.h"

#include "engine/backend/op_clock.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

OpClockSums& opClockSums() {
    static OpClockSums sums;
    return sums;
}

const char* stepOpName(StepOp op) {
    switch (op) {
    case StepOp::Embed: return "embed";
    case StepOp::Norms: return "norms";
    case StepOp::Projections: return "projections";
    case StepOp::RopeAndStore: return "rope_and_store";
    case StepOp::Attention: return "attention";
    case StepOp::OutputHead: return "output_head";
    case StepOp::Gather: return "gather";
    case StepOp::Count: break;
    }
    return "?";
}

StepProfile operator-(const StepProfile& a, const StepProfile& b) {
    StepProfile d;
    d.steps = a.steps - b.steps;
    d.forwardNs = a.forwardNs - b.forwardNs;
    for (int i = 0; i < kStepOps; ++i) {
        d.opNs[i] = a.opNs[i] - b.opNs[i];
        d.opCalls[i] = a.opCalls[i] - b.opCalls[i];
        d.opPoolWallNs[i] = a.opPoolWallNs[i] - b.opPoolWallNs[i];
        d.opPoolThreadNs[i] = a.opPoolThreadNs[i] - b.opPoolThreadNs[i];
        d.opPoolBusyNs[i] = a.opPoolBusyNs[i] - b.opPoolBusyNs[i];
    }
    d.pool.roundTrips = a.pool.roundTrips - b.pool.roundTrips;
    d.pool.wallNs = a.pool.wallNs - b.pool.wallNs;
    d.pool.threadNs = a.pool.threadNs - b.pool.threadNs;
    d.pool.busyNs = a.pool.busyNs - b.pool.busyNs;
    d.pool.wakeNs = a.pool.wakeNs - b.pool.wakeNs;
    d.pool.wakes = a.pool.wakes - b.pool.wakes;
    d.pool.tailNs = a.pool.tailNs - b.pool.tailNs;
    return d;
}

void setStepProfiling(bool on) {
    opClockSums().on.store(on, std::memory_order_relaxed);
    kernels::ThreadPool::setTiming(on);
}

StepProfile stepProfile() {
    const OpClockSums& s = opClockSums();
    StepProfile p;
    p.steps = s.steps.load(std::memory_order_relaxed);
    p.forwardNs = s.forwardNs.load(std::memory_order_relaxed);
    for (int i = 0; i < kStepOps; ++i) {
        p.opNs[i] = s.opNs[i].load(std::memory_order_relaxed);
        p.opCalls[i] = s.opCalls[i].load(std::memory_order_relaxed);
        p.opPoolWallNs[i] = s.opPoolWallNs[i].load(std::memory_order_relaxed);
        p.opPoolThreadNs[i] = s.opPoolThreadNs[i].load(std::memory_order_relaxed);
        p.opPoolBusyNs[i] = s.opPoolBusyNs[i].load(std::memory_order_relaxed);
    }
    const kernels::ThreadPool::Timing t = kernels::ThreadPool::processTiming();
    p.pool = {t.roundTrips, t.wallNs, t.threadNs, t.busyNs, t.wakeNs, t.wakes, t.tailNs};
    return p;
}

} // namespace weir
