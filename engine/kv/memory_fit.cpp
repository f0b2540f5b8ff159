#include "weir/types/memory_fit.h"

#include <algorithm>

namespace weir::kv {

namespace {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

} // namespace

uint64_t forwardScratchBytes(const ModelConfig& c, int64_t batchTokens, int64_t logitRows, bool gpu) {
    const uint64_t n = uint64_t(std::max<int64_t>(batchTokens, 1));
    const uint64_t perToken = 3ull * uint64_t(c.nEmbd) + uint64_t(c.nHead) * uint64_t(c.headDimK) +
                              uint64_t(c.nHeadKv) * uint64_t(c.headDimK + c.headDimV) +
                              uint64_t(c.nHead) * uint64_t(c.headDimV) + 3ull * uint64_t(c.nFf);
    uint64_t bytes = n * perToken * 4 + uint64_t(std::max<int64_t>(logitRows, 1)) * uint64_t(c.nVocab) * 4;
    if (gpu) {
        // The widest matrix as f16 for cuBLAS (the output head), and activations as f16.
        const uint64_t widest = std::max<uint64_t>(uint64_t(c.nVocab) * uint64_t(c.nEmbd),
                                                   uint64_t(c.nFf) * uint64_t(c.nEmbd));
        bytes += widest * 2 + n * std::max<uint64_t>(uint64_t(c.nFf), uint64_t(c.nEmbd)) * 2;
    }
    return bytes;
}

MemoryFit fitPoolsToMemory(PoolPlan& plan, bool automaticFull, uint64_t freeBytes, uint64_t scratchBytes,
                           uint64_t keepFree, const std::string& deviceLabel) {
    MemoryFit fit;
    if (freeBytes == 0) return fit;  // unknown: nothing to check against
    const uint64_t usable = freeBytes > keepFree + scratchBytes ? freeBytes - keepFree - scratchBytes : 0;
    const uint64_t window = plan.windowBytes(), full = plan.fullBytes();
    if (window != SIZE_MAX && full != SIZE_MAX && window + full <= usable) return fit;

    const uint64_t perToken = std::max<uint64_t>(plan.fullBytesPerToken, 1);
    const uint64_t forFull = usable > window ? usable - window : 0;
    const int64_t P = std::max(plan.pageSize, 1);
    const int64_t fitTokens = int64_t(std::min<uint64_t>(forFull / perToken, uint64_t(INT64_MAX / 2))) / P * P;
    if (automaticFull && plan.fullBytesPerToken > 0 && fitTokens >= plan.fullFloor) {
        plan.fullTokens = std::min(plan.fullTokens, fitTokens);
        fit.shrunk = true;
        return fit;
    }
    fit.fits = false;
    fit.largestFullTokens = fitTokens >= plan.fullFloor && plan.fullBytesPerToken > 0 ? fitTokens : 0;
    fit.message = "the KV pools need " + mib(full == SIZE_MAX ? UINT64_MAX : full + window) + " (full " +
                  std::to_string(plan.fullTokens) + " tokens, window " + std::to_string(plan.windowTokens) +
                  " tokens) plus " + mib(scratchBytes) + " of scratch, but " + deviceLabel + " has " + mib(freeBytes) +
                  " free" + (keepFree ? " (keeping " + mib(keepFree) + " for the rest of the system)" : "") + "; ";
    if (fitTokens >= plan.fullFloor && plan.fullBytesPerToken > 0)
        fit.message += "the largest full pool that fits is --kv-reserve-tokens " + std::to_string(fitTokens) +
                       " (its floor is " + std::to_string(plan.fullFloor) + ")";
    else
        fit.message += "even the full pool's floor of " + std::to_string(plan.fullFloor) +
                       " tokens does not fit: lower --max-context or --max-running-requests, or use --kv-cache-dtype q8_0";
    return fit;
}

} // namespace weir::kv
