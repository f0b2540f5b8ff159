#pragma once
// How often the CPU thread pools synchronised: for benchmarks that want the
// hand-offs of a decode step (weir-cli bench, bench-concurrency). Counts
// over every pool of the process since it started; read them before and
// after the steps in question.
#include <cstdint>

namespace weir {

struct ThreadPoolCounters {
    uint64_t roundTrips = 0;    // jobs handed to worker threads and waited for: one hand-off + one join each
    uint64_t inlineCalls = 0;   // jobs the calling thread ran alone (one item, or one thread)
    uint64_t chunks = 0;        // ranges the round trips handed out
    uint64_t stolenChunks = 0;  // of those, run by a thread outside whose share they were
    uint64_t leftOut = 0;       // workers a round trip did not wait for: the others had taken every chunk
};

ThreadPoolCounters threadPoolCounters();

} // namespace weir
