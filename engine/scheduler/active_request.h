#pragma once
// One request as the scheduler tracks it. Its tokens are the prompt followed
// by everything generated; `computed` of them have K/V in the cache. A step
// feeds tokens[computed, ...): several at once while more than one remains
// (prefill, chunked), exactly one otherwise (decode). The step that feeds the
// last token samples the next one. Preemption only resets `computed`, so a
// preempted request is recomputed from its tokens and continues unchanged.
#include <chrono>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weir/types/cache_status.h"
#include "weir/types/generate.h"
#include "engine/grammar/grammar_constraint.h"
#include "engine/grammar/lazy_constraint.h"
#include "engine/chat/tool_format.h"
#include "engine/sampling/sampler.h"
#include "engine/scheduler/stop_strings.h"
#include "engine/tokenizer/tokenizer.h"

namespace weir {

struct ActiveRequest {
    using Clock = std::chrono::steady_clock;

    ActiveRequest(uint64_t id_, GenerateRequest req, EventSink sink_, const Tokenizer* tok)
        : id(id_), tag(req.tag), tokens(std::move(req.prompt)),
          promptTokens(int32_t(tokens.size())), maxTokens(req.embed ? 1 : req.maxTokens),
          stopAtEndOfGeneration(req.stopAtEndOfGeneration), sink(std::move(sink_)),
          sampler(req.sampling), stops(std::move(req.stop), ToolFormat::resultOpeners()),
          topLogprobs(std::min(req.topLogprobs, kMaxTopLogprobs)), constraintSpec(std::move(req.constraint)),
          embed(req.embed), submitted(Clock::now()) {
        if (tok) detokenizer = std::make_unique<StreamingDetokenizer>(*tok, req.showSpecialTokens);
    }

    int32_t remaining() const { return int32_t(tokens.size()) - computed; }
    bool decoding() const { return remaining() == 1; }
    RequestState state() const {
        if (seq < 0) return RequestState::Waiting;
        return decoding() ? RequestState::Decode : RequestState::Prefill;
    }

    uint64_t id;
    ClientTag tag;
    std::vector<int32_t> tokens;
    int32_t promptTokens;
    int32_t maxTokens;
    bool stopAtEndOfGeneration;
    EventSink sink;
    Sampler sampler;
    StopStringMatcher stops;
    std::unique_ptr<StreamingDetokenizer> detokenizer;
    int32_t topLogprobs;                          // < 0: no log probabilities
    std::optional<TokenLogprobs> pendingLogprobs;  // the sampled token's, until its event goes out
    OutputConstraint constraintSpec;                        // as submitted; compiled on the engine thread
    std::unique_ptr<grammar::GrammarConstraint> constraint;  // null: free text
    std::unique_ptr<grammar::LazyConstraint> lazyConstraint;  // constraintSpec.lazy(): held only inside calls

    int32_t seq = -1;                // KV sequence while running
    int32_t computed = 0;            // tokens whose K/V are in the cache
    int32_t generated = 0;
    uint64_t admittedAt = 0;         // admission serial: larger = newer
    int32_t sinceRelease = 0;        // decode steps since the last out-of-window release
    bool everAdmitted = false;
    bool deferred = false;           // currently counted as deferred
    int32_t cachedPromptTokens = 0;  // prefix-cache hit at the first admission
    int64_t prefixHitTokens = 0;     // hit at the latest admission
    int32_t preemptions = 0;
    bool finished = false;
    ErrorCode error = ErrorCode::Internal;  // reported if it ends with Error
    bool embed = false;              // GenerateRequest::embed: ends after the prompt with its embedding
    std::vector<float> embedding;    // embed: set just before it finishes
    // Speculative decoding: the tokens fed after tokens.back() this step (their
    // positions have slots until the step rolls the rejected ones back).
    std::vector<int32_t> draft;
    int32_t draftTokens = 0;          // verified over the request's life
    int32_t acceptedDraftTokens = 0;  // of them, kept
    // Drafts cost a row each when rejected: the length follows what was
    // kept (doubling after a draft kept whole, one past the kept part
    // otherwise), and a draft rejected outright pauses drafting for a number
    // of decode steps that doubles with every such miss in a row.
    int32_t draftCap = -1;            // < 0: not set yet (SchedulerOptions::draftTokens)
    int32_t draftPause = 0;           // decode steps left without drafting
    int32_t draftMisses = 0;          // drafts in a row of which nothing was kept

    Clock::time_point submitted, firstToken, lastToken;
};

} // namespace weir
