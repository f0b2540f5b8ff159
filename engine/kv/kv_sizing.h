#pragma once
// What the engine alone needs of pool sizing: the refusal at start, and what
// one step of one request allocates. The floors themselves are public
// (weir/types/pool_sizing.h).
#include <cstdint>

#include "weir/types/pool_sizing.h"

namespace weir::kv {

// Whether the attention kernel reads K/V stored as `t` (every KvDtype today:
// f16, f32, q8_0, fp8_e4m3). A dtype added to KvDtype stays refused, with the
// flag and the alternatives named, until the kernel learns to read it.
bool attentionReadsKvDtype(KvDtype t);

// planPools + checkPoolPlan; throws weir::Error with the message.
PoolPlan planPoolsOrThrow(const EngineOptions& options, const ModelConfig& model);

// Pages a request must newly allocate to write tokens [length, length + newTokens):
// the same count in both pools (every new page gets a window page, because a
// whole chunk is written before any of it can fall out of the window); window
// pages are 0 when the model has no window. Out-of-window releases happen
// before a step and are not subtracted. Admission and allocation both use this.
struct StepNeed {
    int64_t fullPages = 0;
    int64_t windowPages = 0;
};
StepNeed stepNeed(int64_t length, int64_t newTokens, int32_t pageSize, bool hasWindow);

// The most window pages a request holds at once while decoding with retain
// gap E (its share of the floor): per_request / P.
int64_t windowPagesPerRequest(const WindowFloorInput& in);

} // namespace weir::kv
