#pragma once
// The CPU backend the engine's tests run models on: `threads` threads, weights
// used in place (no repacked head: the committed reference data was recorded
// without it). One per thread count for the whole test binary, never
// destroyed, so models held by static test fixtures can outlive main().
#include <map>

#include "engine/backend/cpu_backend.h"

namespace weirtest {

inline weir::CpuBackend& cpuBackend(int threads = 2) {
    static std::map<int, weir::CpuBackend*>* backends = new std::map<int, weir::CpuBackend*>;
    weir::CpuBackend*& b = (*backends)[threads];
    if (!b) b = new weir::CpuBackend({threads, false});
    return *b;
}

} // namespace weirtest
