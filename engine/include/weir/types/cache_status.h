#pragma once
// A snapshot of both KV pools and every request the scheduler holds, as the
// app's pool monitor and the endpoint's /v1/cache report it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/types/generate.h"

namespace weir {

// The two pools: Full serves full-attention layers (every position of a
// sequence), Window serves sliding-window layers (only the recent positions).
enum class PoolKind : uint8_t { Full = 0, Window = 1 };
const char* poolKindName(PoolKind pool);  // "full", "window"

enum class RequestState : uint8_t { Waiting, Prefill, Decode };
const char* requestStateName(RequestState state);  // "waiting", "prefill", "decode"

struct PoolStatus {
    PoolKind kind = PoolKind::Full;
    int64_t capacityTokens = 0, freeTokens = 0, ownedTokens = 0, cachedTokens = 0;
    int64_t floorTokens = 0;
    size_t bytesPerToken = 0;
    size_t totalBytes = 0;
};

struct RequestStatus {
    uint64_t id = 0;
    ClientTag tag;
    RequestState state = RequestState::Waiting;
    int64_t fullTokens = 0, windowTokens = 0, prefixHitTokens = 0;
    int32_t promptTokens = 0, generatedTokens = 0;
};

struct CacheStatus {
    PoolStatus full, window;
    std::vector<RequestStatus> requests;
    uint64_t deferrals = 0, preemptions = 0, refusals = 0, prefixHitTokens = 0;
    uint64_t draftTokens = 0, acceptedDraftTokens = 0;  // speculative decoding, every request so far
    uint64_t integrityChecks = 0, violations = 0;
    std::vector<std::string> violationDetails;  // most recent first, bounded
    int32_t running = 0, waiting = 0;
    // Where both pools' K/V rows live: "cpu" (process memory) or "cuda:N"
    // (that GPU's memory), and that device's name.
    std::string device = "cpu", deviceName;
};

} // namespace weir
