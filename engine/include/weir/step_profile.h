#pragma once
// Where a forward pass's time goes on the CPU, for benchmarks that ask where
// many threads go (weir-cli bench --step-split): wall time per kind of op as
// the thread driving the backend sees it (an op's time includes its pool
// round trips), and the pool's own account of those round trips: how long
// the jobs held the threads, how much of that they computed, how long a
// worker took to pick a job up and how long the caller waited for the last.
// Off by default: on, it reads the clock around every op and every chunk of
// pool work. Sums over the process since it started; read them before and
// after the steps in question (minus gives the difference). A backend that
// queues its ops (CUDA) records no op times.
#include <cstdint>

#include "weir/types/step_op.h"

namespace weir {

// "embed", "norms", "projections", "rope_and_store", "attention", "output_head", "gather"
const char* stepOpName(StepOp op);

// The CPU thread pools' round trips while profiling (nanoseconds, summed).
struct PoolTiming {
    uint64_t roundTrips = 0;
    uint64_t wallNs = 0;    // published -> every thread done, as the caller saw it
    uint64_t threadNs = 0;  // wallNs x threads: thread time the round trips held
    uint64_t busyNs = 0;    // of it, computing (every thread)
    uint64_t wakeNs = 0;    // workers' waits from a publish to their first chunk
    uint64_t wakes = 0;     // the waits summed in wakeNs
    uint64_t tailNs = 0;    // the caller's waits from its own last chunk to the last worker
};

struct StepProfile {
    uint64_t steps = 0;      // forward passes (beginStep .. endStep)
    uint64_t forwardNs = 0;  // their wall time
    uint64_t opNs[kStepOps] = {};
    uint64_t opCalls[kStepOps] = {};
    // Of each op kind's time, its round trips (published -> every thread
    // done), the thread time they held and the part of it spent computing:
    // the rest of opNs ran on the driving thread alone.
    uint64_t opPoolWallNs[kStepOps] = {};
    uint64_t opPoolThreadNs[kStepOps] = {};
    uint64_t opPoolBusyNs[kStepOps] = {};
    PoolTiming pool;
};

StepProfile operator-(const StepProfile& after, const StepProfile& before);

void setStepProfiling(bool on);
StepProfile stepProfile();

} // namespace weir
