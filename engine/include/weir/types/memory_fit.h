#pragma once
// Pools that fit the device they live in (implemented in engine/kv/memory_fit.cpp;
// public so the app can warn before it applies a setting). The floors (kv_sizing) say what the
// scheduler needs; this says what the machine has: the KV pools plus the
// forward pass's scratch must fit in the free memory of the device the model
// runs on (available RAM for the CPU, free device memory after the weights
// for a GPU), or the engine refuses at start with the numbers and the
// largest setting that fits, instead of being killed for memory later.
#include <cstdint>
#include <string>

#include "weir/types/model_config.h"
#include "weir/types/pool_sizing.h"

namespace weir::kv {

// Bytes a forward pass of up to `batchTokens` tokens holds besides the
// weights and pools: activations of every token, logits of up to
// `logitRows` rows, and (on a GPU) one weight matrix dequantized for the GEMM.
uint64_t forwardScratchBytes(const ModelConfig& model, int64_t batchTokens, int64_t logitRows, bool gpu);

struct MemoryFit {
    bool fits = true;
    // Automatic sizing (no --kv-reserve-tokens): the full pool shrunk to
    // fit, never below its floor; `plan` then holds the new size.
    bool shrunk = false;
    std::string message;   // why it does not fit, with numbers and a suggestion
    int64_t largestFullTokens = 0;  // the largest full pool that fits (0: not even its floor)
};

// Checks (and for an automatic full pool, shrinks) `plan` against
// `freeBytes` of `deviceLabel` ("cuda:0 (NVIDIA H200)", "this machine's RAM").
// `keepFree` is left unallocated (drivers, the desktop, other programs).
MemoryFit fitPoolsToMemory(PoolPlan& plan, bool automaticFull, uint64_t freeBytes, uint64_t scratchBytes,
                           uint64_t keepFree, const std::string& deviceLabel);

} // namespace weir::kv
