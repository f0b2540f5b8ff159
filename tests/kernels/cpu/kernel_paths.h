#pragma once
// Shared by the matmul kernel tests: run a check on every kernel path this
// CPU has (the best one; with AVX2, VNNI and the tile GEMMs each switched
// the other way; the scalar path), and count a call's pool round trips.
#include <cstdint>
#include <functional>
#include <string>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

namespace weirtest {

inline void forEachKernelPath(const std::function<void(const std::string&)>& fn) {
    using namespace weir::kernels;
    const bool tiles = tileGemmActive();
    fn(kernelPathName(activeKernelPath()));
    if (bestKernelPath() == KernelPath::Avx2) {
        const bool vnni = vnniActive();
        forceVnni(!vnni);
        fn(vnni ? "AVX2 without VNNI" : "AVX2 with VNNI");
        forceVnni(vnni);
        forceTileGemm(!tiles);
        fn(tiles ? "without tile GEMMs" : "with tile GEMMs");
        forceTileGemm(tiles);
    }
    forceKernelPath(KernelPath::Scalar);
    fn("scalar");
    resetKernelPath();
}

inline uint64_t poolRoundTripsOf(const std::function<void()>& fn) {
    const uint64_t before = weir::kernels::ThreadPool::processCounters().roundTrips;
    fn();
    return weir::kernels::ThreadPool::processCounters().roundTrips - before;
}

} // namespace weirtest
