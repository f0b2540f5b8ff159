#include "weir/types/engine_limits.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "kernels/cpu/cpu_topology.h"

namespace weir {

int32_t EngineLimits::maxThreads() {
    // More threads than this only adds switching: the kernels are compute bound.
    return int32_t(std::max(1u, std::thread::hardware_concurrency())) * kThreadsPerHardwareThread;
}

int32_t EngineLimits::physicalCores() { return int32_t(kernels::physicalCores()); }
int32_t EngineLimits::numaNodes() { return int32_t(kernels::numaNodes()); }

namespace {

std::string outOfRange(const char* flag, int64_t lo, int64_t hi, int64_t got, const char* note = "") {
    return std::string(flag) + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) + note +
           " (got " + std::to_string(got) + ")";
}

bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

} // namespace

std::string validateEngineOptions(const EngineOptions& o) {
    using L = EngineLimits;
    if (o.threads < 0 || o.threads > L::maxThreads())
        return outOfRange("--threads", 0, L::maxThreads(), o.threads, ", 0 = one per physical core, at most 4 per hardware thread");
    if (o.maxRunningRequests < 1 || o.maxRunningRequests > L::kMaxRunningRequests)
        return outOfRange("--max-running-requests", 1, L::kMaxRunningRequests, o.maxRunningRequests);
    if (o.prefillChunk < 1 || o.prefillChunk > L::kMaxPrefillChunk)
        return outOfRange("--prefill-chunk", 1, L::kMaxPrefillChunk, o.prefillChunk);
    if (!powerOfTwo(o.pageSize) || o.pageSize > L::kMaxPageSize)
        return "--page-size must be a power of two from 1 to " + std::to_string(L::kMaxPageSize) + " (got " +
               std::to_string(o.pageSize) + ")";
    if (o.kvReserveTokens < 0 || o.kvReserveTokens > L::kMaxPoolTokens)
        return outOfRange("--kv-reserve-tokens", 0, L::kMaxPoolTokens, o.kvReserveTokens, ", 0 = from the context");
    if (!std::isfinite(o.swaFullTokensRatio) || o.swaFullTokensRatio < 0 || o.swaFullTokensRatio > 1) {
        std::ostringstream s;
        s << "--swa-full-tokens-ratio must be from 0 to 1, 0 = unset (got " << o.swaFullTokensRatio << ")";
        return s.str();
    }
    if (o.swaTokens < 0 || o.swaTokens > L::kMaxPoolTokens)
        return outOfRange("--swa-tokens", 0, L::kMaxPoolTokens, o.swaTokens, ", 0 = unset");
    if (o.retainGap < 1 || o.retainGap > L::kMaxRetainGap)
        return outOfRange("--retain-gap", 1, L::kMaxRetainGap, o.retainGap);
    if (o.maxContext < 0 || o.maxContext > L::kMaxPoolTokens)
        return outOfRange("--max-context", 0, L::kMaxPoolTokens, o.maxContext, ", 0 = the model's");
    if (o.maxWaiting < 0 || o.maxWaiting > L::kMaxWaiting)
        return outOfRange("--max-waiting", 0, L::kMaxWaiting, o.maxWaiting);
    if (o.draftTokens < 1 || o.draftTokens > L::kMaxDraftTokens)
        return outOfRange("--draft-tokens", 1, L::kMaxDraftTokens, o.draftTokens);
    if (o.draftStepRows < 1 || o.draftStepRows > L::kMaxDraftStepRows)
        return outOfRange("--draft-step-rows", 1, L::kMaxDraftStepRows, o.draftStepRows);
    if (o.draftNgramMax < 1 || o.draftNgramMax > L::kMaxDraftNgram)
        return outOfRange("--draft-ngram-max", 1, L::kMaxDraftNgram, o.draftNgramMax);
    if (o.draftNgramMin < 1 || o.draftNgramMin > o.draftNgramMax)
        return outOfRange("--draft-ngram-min", 1, o.draftNgramMax, o.draftNgramMin, " (--draft-ngram-max)");
    return {};
}

} // namespace weir
