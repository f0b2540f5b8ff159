#pragma once
// The ranges every numeric engine option must fall in (EngineOptions), checked in one place:
// weir-cli after reading its flags, the app's engine settings before they are
// applied, and Engine's constructor for everyone else. A value outside them
// would hang at start (millions of threads), overflow a byte count, or be
// quietly clamped somewhere deeper; here it is refused with its flag's name.
#include <cstdint>
#include <string>

#include "weir/types/engine_options.h"

namespace weir {

struct EngineLimits {
    static constexpr int32_t kThreadsPerHardwareThread = 4;
    static constexpr int32_t kMaxRunningRequests = 1024;
    static constexpr int32_t kMaxPrefillChunk = 65536;
    static constexpr int32_t kMaxPageSize = 1024;            // and a power of two
    static constexpr int64_t kMaxPoolTokens = int64_t(1) << 30;  // per pool; keeps pages and bytes in range
    static constexpr int32_t kMaxRetainGap = 1024;
    static constexpr int32_t kMaxWaiting = 1000000;
    static constexpr int32_t kMaxDraftTokens = 64;
    static constexpr int32_t kMaxDraftStepRows = 4096;
    static constexpr int32_t kMaxDraftNgram = 16;
    // --threads: 0 (one per physical core, physicalCores()) up to this: 4 per
    // hardware thread. More than the physical cores is allowed (weir-cli says so).
    static int32_t maxThreads();
    // The physical cores this process may run on (its CPU affinity; SMT
    // siblings count once): what --threads 0 means.
    static int32_t physicalCores();
    // The NUMA nodes of the CPUs this process may run on (1 where unknown).
    static int32_t numaNodes();
};

// "" when every option is in range; otherwise the first problem, naming the
// flag and the value, e.g. "--page-size must be a power of two from 1 to 1024 (got 24)".
std::string validateEngineOptions(const EngineOptions& options);

} // namespace weir
