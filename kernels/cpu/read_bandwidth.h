#pragma once
// How fast this machine streams memory into the cores: the ceiling a
// memory-bound decode step can reach (bytes read per token / this = the
// fastest possible step). weir-cli bench reports decode against it.
#include <cstddef>

#include "kernels/cpu/thread_pool.h"

namespace weir::kernels {

// Reads a `bytes` buffer (well beyond the last-level cache) with every thread
// of `pool` streaming its own slice, `repeats` times after one warm-up pass;
// returns the best pass in bytes per second.
double measureReadBandwidth(ThreadPool& pool, size_t bytes = size_t(512) << 20, int repeats = 3);

} // namespace weir::kernels
