#pragma once
// How big the two KV pools must be (pure functions on plain values). The
// engine sizes its pools with these and refuses a configuration below its
// floor; the app's sizing advisor runs the same functions to warn before a
// reload.
//
// Symbols: W window, P page size, R max running requests, C prefill chunk,
// K chunks in flight, E decode steps between out-of-window releases (retain
// gap), D tokens written per decode step.
//
//   per_request = ceil_P(W) + P + E*D + P
//   window_min  = ceil_P(R * per_request + K*C + P)
//
// W counts the window's own pages; the first P is the page the release
// boundary rounds down into, E*D the tokens written since the last release,
// the second P the page the next decode step may open; K*C are the slots of
// the prefill chunks whose pages exist at once and the last P a partly filled
// page at the pool's end.
#include <cstddef>
#include <cstdint>
#include <string>

#include "weir/types/engine_options.h"
#include "weir/types/kv_dtype.h"
#include "weir/types/model_config.h"

namespace weir::kv {

inline int64_t ceilToPage(int64_t tokens, int64_t page) { return (tokens + page - 1) / page * page; }
inline int64_t floorToPage(int64_t tokens, int64_t page) { return tokens / page * page; }
inline int64_t pagesFor(int64_t tokens, int64_t page) { return (tokens + page - 1) / page; }

struct WindowFloorInput {
    int32_t window = 0;               // W (tokens); 0 = model has no sliding layers
    int32_t pageSize = 16;            // P
    int32_t maxRunning = 4;           // R
    int32_t prefillChunk = 512;       // C
    int32_t chunksInFlight = 2;       // K: 1, or 2 when a chunk is prepared while another runs
    int32_t retainGap = 1;            // E
    int32_t tokensPerDecodeStep = 1;  // D (1 without speculation)
};

// The floor with every term kept, so the refusal message can show them.
struct WindowFloor {
    int64_t windowTokens = 0;    // ceil_P(W): the window itself, whole pages
    int64_t boundaryPage = 0;    // P: the release boundary rounds down to a page
    int64_t retainTokens = 0;    // E*D: tokens written since the last release
    int64_t nextDecodePage = 0;  // P: the page the next decode step may open
    int64_t perRequest = 0;      // sum of the four above
    int64_t requestsTerm = 0;    // R * perRequest
    int64_t chunkTerm = 0;       // K * C: prefill chunks whose slots all exist at once
    int64_t slackPage = 0;       // P: a partly filled page at the pool's end
    int64_t tokens = 0;          // ceil_P(requestsTerm + chunkTerm + slackPage); 0 if W == 0
};
WindowFloor windowFloor(const WindowFloorInput& in);

// Largest R a window pool of `poolTokens` serves: floor((S - K*C - P) / per_request).
int64_t maxRunningForWindowPool(int64_t poolTokens, const WindowFloorInput& in);

// Full pool: one request must be able to reach the longest context.
// floor = ceil_P(maxContext).
int64_t fullFloorTokens(int64_t maxContext, int32_t pageSize);

// Bytes one token takes in a pool, summed over the layers that pool serves
// (K and V). `sliding` selects the sliding-window layers.
size_t kvBytesPerToken(const ModelConfig& model, KvDtype dtype, bool sliding);


// The pool sizes Weir will run with, with everything needed to explain them.
struct PoolPlan {
    int32_t pageSize = 16;
    int32_t window = 0;               // 0: no window pool
    int64_t maxContext = 0;
    KvDtype dtype = KvDtype::F16;
    int64_t fullTokens = 0, windowTokens = 0;       // capacities (multiples of P)
    int64_t fullFloor = 0;
    WindowFloor windowFloor;
    WindowFloorInput windowInput;
    size_t fullBytesPerToken = 0, windowBytesPerToken = 0;
    bool fromReserve = false, fromSwaTokens = false, fromRatio = false;  // which flag set each size
    size_t fullBytes() const { return bytes(fullTokens, fullBytesPerToken); }
    size_t windowBytes() const { return bytes(windowTokens, windowBytesPerToken); }
    // tokens * perToken, SIZE_MAX when that does not fit (a plan being edited may be absurd).
    static size_t bytes(int64_t tokens, size_t perToken) {
        size_t out = 0;
        return tokens < 0 || __builtin_mul_overflow(size_t(tokens), perToken, &out) ? SIZE_MAX : out;
    }
};

// Sizes both pools from the options (full: --kv-reserve-tokens, else
// R * ceil_P(maxContext); window: --swa-tokens, else full * --swa-full-tokens-ratio,
// else the floor). Does not check floors; see checkPoolPlan.
PoolPlan planPools(const EngineOptions& options, const ModelConfig& model);

// Empty when the plan is servable; otherwise a multi-line message that names
// the floor, each term, the largest --max-running-requests the configured pool
// can serve and the flags to change. Also refuses an unreadable kv dtype.
std::string checkPoolPlan(const PoolPlan& plan);

} // namespace weir::kv
