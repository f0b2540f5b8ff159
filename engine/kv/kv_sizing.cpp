#include "engine/kv/kv_sizing.h"

#include <algorithm>
#include <cmath>

#include "weir/base/error.h"
#include "weir/types/engine_limits.h"

namespace weir::kv {

WindowFloor windowFloor(const WindowFloorInput& in) {
    WindowFloor f;
    if (in.window <= 0 || in.pageSize <= 0) return f;
    const int64_t P = in.pageSize;
    // The window itself in whole pages: a decode token attends to W keys.
    f.windowTokens = ceilToPage(in.window, P);
    // The release boundary is rounded down to a page, so up to one more page
    // of already-out-of-window tokens is still held.
    f.boundaryPage = P;
    // Releases run every E decode steps; E*D tokens may be written in between.
    f.retainTokens = int64_t(std::max(in.retainGap, 0)) * std::max(in.tokensPerDecodeStep, 0);
    // The next decode step may need a fresh page before anything is released.
    f.nextDecodePage = P;
    f.perRequest = f.windowTokens + f.boundaryPage + f.retainTokens + f.nextDecodePage;
    f.requestsTerm = int64_t(std::max(in.maxRunning, 0)) * f.perRequest;
    // A prefill chunk gets slots for all its tokens before any of them can
    // fall out of the window; K chunks may be in flight at once.
    f.chunkTerm = int64_t(std::max(in.chunksInFlight, 0)) * std::max(in.prefillChunk, 0);
    // A partly filled page at the end of the pool.
    f.slackPage = P;
    f.tokens = ceilToPage(f.requestsTerm + f.chunkTerm + f.slackPage, P);
    return f;
}

int64_t maxRunningForWindowPool(int64_t poolTokens, const WindowFloorInput& in) {
    const WindowFloor f = windowFloor(in);
    if (f.perRequest <= 0) return 0;
    const int64_t rest = poolTokens - f.chunkTerm - f.slackPage;
    return rest > 0 ? rest / f.perRequest : 0;
}

int64_t fullFloorTokens(int64_t maxContext, int32_t pageSize) {
    if (pageSize <= 0 || maxContext <= 0) return 0;
    return ceilToPage(maxContext, pageSize);
}

size_t kvBytesPerToken(const ModelConfig& model, KvDtype dtype, bool sliding) {
    size_t bytes = 0;
    for (int32_t l = 0; l < model.nLayer; ++l) {
        const bool slides = l < int32_t(model.layerSlides.size()) && model.layerSlides[size_t(l)] &&
                            model.slidingWindow > 0;
        if (slides != sliding) continue;
        bytes += 2 * kvRowBytes(dtype, model.kvRowElems());  // K and V rows
    }
    return bytes;
}

bool attentionReadsKvDtype(KvDtype t) {
    // Every dtype both backends' attention reads back: the CPU's
    // (kernels/cpu/attend_tile.h) and CUDA's (kernels/cuda/kv_rows.cuh).
    return t == KvDtype::F16 || t == KvDtype::F32 || t == KvDtype::Q8_0 || t == KvDtype::FP8_E4M3;
}

// Chunks in flight when the scheduler prepares one chunk while another runs.
static constexpr int32_t kChunksInFlight = 2;
// Fallback context when the model does not say.
static constexpr int64_t kDefaultContext = 4096;
// Sizes are held below this while planning so no sum or product wraps;
// checkPoolPlan refuses anything over EngineLimits::kMaxPoolTokens anyway.
static constexpr int64_t kPlanningCap = EngineLimits::kMaxPoolTokens * 4;

static int64_t capped(int64_t tokens) { return std::clamp<int64_t>(tokens, 0, kPlanningCap); }

PoolPlan planPools(const EngineOptions& o, const ModelConfig& model) {
    PoolPlan plan;
    plan.pageSize = o.pageSize;
    plan.dtype = o.kvDtype;
    plan.window = model.anySliding() ? model.slidingWindow : 0;
    int64_t ctx = model.nCtxTrain > 0 ? model.nCtxTrain : kDefaultContext;
    if (o.maxContext > 0) ctx = std::min<int64_t>(ctx, o.maxContext);
    plan.maxContext = ctx;
    const int64_t P = std::max(o.pageSize, 1);

    plan.windowInput.window = plan.window;
    plan.windowInput.pageSize = o.pageSize;
    plan.windowInput.maxRunning = o.maxRunningRequests;
    plan.windowInput.prefillChunk = o.prefillChunk;
    plan.windowInput.chunksInFlight = kChunksInFlight;
    plan.windowInput.retainGap = o.retainGap;
    plan.windowInput.tokensPerDecodeStep = 1;
    plan.windowFloor = windowFloor(plan.windowInput);
    plan.fullFloor = fullFloorTokens(ctx, o.pageSize);

    plan.fullTokens = o.kvReserveTokens > 0 ? ceilToPage(capped(o.kvReserveTokens), P)
                                            : capped(int64_t(std::max(o.maxRunningRequests, 1)) * plan.fullFloor);
    if (plan.window > 0) {
        if (o.swaTokens > 0) {
            plan.windowTokens = ceilToPage(capped(o.swaTokens), P);
        } else if (o.swaFullTokensRatio > 0) {
            // In double and capped before the conversion: a huge ratio must not overflow int64.
            const double w = std::ceil(double(plan.fullTokens) * o.swaFullTokensRatio);
            plan.windowTokens = ceilToPage(w < double(kPlanningCap) ? int64_t(w) : kPlanningCap, P);
        } else
            plan.windowTokens = plan.windowFloor.tokens;
    }
    plan.fullBytesPerToken = kvBytesPerToken(model, o.kvDtype, false);
    plan.windowBytesPerToken = kvBytesPerToken(model, o.kvDtype, true);
    // Models whose layers all slide still index positions through the full
    // pool; it then stores nothing.
    plan.fromRatio = o.swaTokens <= 0 && o.swaFullTokensRatio > 0;
    plan.fromSwaTokens = o.swaTokens > 0;
    plan.fromReserve = o.kvReserveTokens > 0;
    return plan;
}

static std::string n(int64_t v) { return std::to_string(v); }

std::string checkPoolPlan(const PoolPlan& plan) {
    std::string msg;
    if (!attentionReadsKvDtype(plan.dtype))
        msg += std::string("--kv-cache-dtype ") + kvDtypeName(plan.dtype) +
               ": the attention kernels cannot read this KV storage type; use --kv-cache-dtype f16, q8_0, fp8_e4m3 or f32\n";
    if (plan.pageSize <= 0) msg += "--page-size must be at least 1 (got " + n(plan.pageSize) + ")\n";
    if (plan.windowInput.maxRunning <= 0)
        msg += "--max-running-requests must be at least 1 (got " + n(plan.windowInput.maxRunning) + ")\n";
    if (plan.windowInput.prefillChunk <= 0)
        msg += "--prefill-chunk must be at least 1 (got " + n(plan.windowInput.prefillChunk) + ")\n";
    if (!msg.empty()) return msg;

    const int64_t P = plan.pageSize;
    const int64_t maxTokens = EngineLimits::kMaxPoolTokens;
    if (plan.fullTokens > maxTokens)
        msg += "full KV pool of " + n(plan.fullTokens) + " tokens" +
               (plan.fromReserve ? " (--kv-reserve-tokens)"
                                 : " (--max-running-requests x longest context " + n(plan.maxContext) + ")") +
               " is over the limit of " + n(maxTokens) + " tokens; set --kv-reserve-tokens or lower --max-context\n";
    if (plan.window > 0 && plan.windowTokens > maxTokens)
        msg += "window KV pool of " + n(plan.windowTokens) + " tokens is over the limit of " + n(maxTokens) +
               " tokens; lower --swa-tokens or --swa-full-tokens-ratio\n";
    if (!msg.empty()) return msg;

    if (plan.fullTokens < plan.fullFloor) {
        msg += "full KV pool too small: " + n(plan.fullTokens) + " tokens" +
               (plan.fromReserve ? " (--kv-reserve-tokens)" : "") + ", floor " + n(plan.fullFloor) + " tokens\n";
        msg += "  floor = ceil_P(longest context " + n(plan.maxContext) + ") with P " + n(P) + " = " +
               n(plan.fullFloor) + " (one request must be able to reach its longest context)\n";
        msg += "  raise --kv-reserve-tokens to at least " + n(plan.fullFloor) +
               " or lower the longest context (--max-context)\n";
    }
    if (plan.window > 0 && plan.windowTokens < plan.windowFloor.tokens) {
        const WindowFloor& f = plan.windowFloor;
        const WindowFloorInput& in = plan.windowInput;
        const int64_t canServe = maxRunningForWindowPool(plan.windowTokens, in);
        const char* flag = plan.fromSwaTokens ? "--swa-tokens" : plan.fromRatio ? "--swa-full-tokens-ratio" : "";
        msg += "window KV pool too small: " + n(plan.windowTokens) + " tokens" +
               (*flag ? std::string(" (") + flag + ")" : std::string()) + ", floor " + n(f.tokens) +
               " tokens for " + n(in.maxRunning) + " running requests\n";
        msg += "  per request = ceil_P(W " + n(in.window) + ") " + n(f.windowTokens) + " + P " + n(f.boundaryPage) +
               " (release boundary rounds down) + E*D " + n(in.retainGap) + "*" + n(in.tokensPerDecodeStep) + " = " +
               n(f.retainTokens) + " (written between releases) + P " + n(f.nextDecodePage) +
               " (next decode page) = " + n(f.perRequest) + "\n";
        msg += "  requests    = R " + n(in.maxRunning) + " x " + n(f.perRequest) + " = " + n(f.requestsTerm) + "\n";
        msg += "  prefill     = K " + n(in.chunksInFlight) + " x C " + n(in.prefillChunk) + " = " + n(f.chunkTerm) +
               " (chunks in flight)\n";
        msg += "  slack       = P " + n(f.slackPage) + "\n";
        msg += "  floor       = ceil_P(" + n(f.requestsTerm) + " + " + n(f.chunkTerm) + " + " + n(f.slackPage) +
               ") = " + n(f.tokens) + " tokens\n";
        msg += "  this pool serves at most " + n(canServe) + " running request" + (canServe == 1 ? "" : "s") + "\n";
        std::string fix = "  raise --swa-tokens to at least " + n(f.tokens);
        if (plan.fullTokens > 0)
            fix += " (or --swa-full-tokens-ratio to at least " +
                   std::to_string(double(f.tokens) / double(plan.fullTokens)) + ")";
        if (canServe > 0) fix += ", or lower --max-running-requests to " + n(canServe);
        fix += ", or lower --prefill-chunk\n";
        msg += fix;
    }
    return msg;
}

PoolPlan planPoolsOrThrow(const EngineOptions& options, const ModelConfig& model) {
    PoolPlan plan = planPools(options, model);
    std::string msg = checkPoolPlan(plan);
    if (!msg.empty()) {
        if (msg.back() == '\n') msg.pop_back();
        throw Error(msg);
    }
    return plan;
}

StepNeed stepNeed(int64_t length, int64_t newTokens, int32_t pageSize, bool hasWindow) {
    StepNeed need;
    if (pageSize <= 0 || newTokens <= 0 || length < 0) return need;
    need.fullPages = pagesFor(length + newTokens, pageSize) - pagesFor(length, pageSize);
    need.windowPages = hasWindow ? need.fullPages : 0;
    return need;
}

int64_t windowPagesPerRequest(const WindowFloorInput& in) {
    const WindowFloor f = windowFloor(in);
    return in.pageSize > 0 ? pagesFor(f.perRequest, in.pageSize) : 0;
}

} // namespace weir::kv
