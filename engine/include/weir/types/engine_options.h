#pragma once
// Everything an Engine is built from: the model file, threads, and how the
// KV pools and the scheduler are sized. weir-cli's flags and the app's engine
// settings map onto these fields one to one.
#include <cstdint>
#include <string>

#include "weir/types/kv_dtype.h"

namespace weir {

struct EngineOptions {
    std::string modelPath;
    int32_t threads = 0;                 // 0 = one per physical core
    // --device: "cpu", "cuda" (the first GPU), "cuda:N", or "" = the first GPU
    // when a CUDA device and the CUDA module are present, else the CPU. A
    // device asked for by name that is absent is an error, never a fallback.
    std::string device;
    int32_t maxRunningRequests = 4;      // --max-running-requests
    int32_t prefillChunk = 512;          // --prefill-chunk
    int32_t pageSize = 16;               // --page-size
    int64_t kvReserveTokens = 0;         // --kv-reserve-tokens (full pool); 0 = derived from context
    double swaFullTokensRatio = 0.0;     // --swa-full-tokens-ratio; 0 = use swaTokens or the floor
    int64_t swaTokens = 0;               // --swa-tokens
    int32_t retainGap = 1;               // decode steps between out-of-window releases
    int32_t maxContext = 0;              // longest context one request may reach; 0 = model's
    KvDtype kvDtype = KvDtype::F16;      // --kv-cache-dtype
    int32_t maxWaiting = 64;             // wait-queue limit; beyond it submit() fails at once
    bool checkIntegrityEveryStep = false; // full pool/tree check after every step (tests, soak);
                                         // otherwise it runs whenever the engine goes idle
    // Speculative decoding by prompt lookup (--speculative on|off): a decoding
    // request whose last n tokens (draftNgramMax down to draftNgramMin)
    // occurred earlier in its context feeds the up to draftTokens tokens that
    // followed them along with its next token, one batched forward pass, and
    // keeps the longest prefix the sampler itself draws: the output is the
    // one plain decoding gives, greedy or sampled with the same seed.
    // --repack-weights on|off: at load, copy the weight matrices this CPU's
    // kernels read faster in another layout (the Q8_0 output head on CPUs with
    // AVX-512 VNNI: 6% more bytes, one load per block instead of unpacking)
    // and give back the file pages they replace, so memory stays the model's
    // size. Off: every weight is used in place from the file mapping.
    bool repackWeights = true;
    bool speculative = true;
    int32_t draftTokens = 8;             // --draft-tokens: most drafts verified per step
    // --draft-step-rows: drafts only join a step of at most this many rows
    // (tokens of every request in it). A lone decode step reads all weights
    // for one row and has arithmetic to spare; a step of several
    // conversations already uses it, and a draft row there costs more than
    // it saves (measured: tests/bench/RESULTS.md).
    int32_t draftStepRows = 1;
    int32_t draftNgramMax = 3;           // --draft-ngram-max
    int32_t draftNgramMin = 1;           // --draft-ngram-min
};

} // namespace weir
