#include "weir/thread_pool_counters.h"

#include "kernels/cpu/thread_pool.h"

namespace weir {

ThreadPoolCounters threadPoolCounters() {
    const kernels::ThreadPool::Counters c = kernels::ThreadPool::processCounters();
    ThreadPoolCounters out;
    out.roundTrips = c.roundTrips;
    out.inlineCalls = c.inlineCalls;
    out.chunks = c.chunks;
    out.stolenChunks = c.stolenChunks;
    out.leftOut = c.leftOut;
    return out;
}

} // namespace weir
