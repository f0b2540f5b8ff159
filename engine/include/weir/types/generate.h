#pragma once
// A generation request and the events that answer it. Every request ends with
// exactly one terminal event: Done, Error or Cancelled.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weir/types/output_constraint.h"
#include "weir/types/sampling_params.h"
#include "weir/types/token_logprobs.h"

namespace weir {

// Who a request belongs to, for the client's own bookkeeping: the engine never
// reads it, only copies it into RequestStatus so a client can map status rows
// back to its conversations or HTTP requests without parsing labels.
struct ClientTag {
    uint32_t kind = 0;                   // the client's own categories (e.g. conversation, API)
    uint64_t id = 0;                     // the client's id within that kind
    bool operator==(const ClientTag&) const = default;
};

struct GenerateRequest {
    std::vector<int32_t> prompt;         // token ids (Engine::tokenizeChat / tokenize)
    SamplingParams sampling;
    int32_t maxTokens = 256;
    std::vector<std::string> stop;       // stop strings (not included in output)
    bool stopAtEndOfGeneration = true;
    ClientTag tag;
    // Token text deltas include the text of control tokens (tool-call markers
    // such as <start_function_call> are control tokens in some vocabularies);
    // stop strings then match them too. End-of-generation tokens stay hidden.
    bool showSpecialTokens = false;
    // >= 0: every Token event carries the token's log probability and this
    // many alternatives (up to kMaxTopLogprobs); < 0: none (no cost).
    int32_t topLogprobs = -1;
    // Structured output: the reply is held to JSON (see output_constraint.h).
    OutputConstraint constraint;
    // An embedding instead of a reply: the prompt is computed (prefill, in
    // the same batches as everything else) and nothing is sampled; the
    // request ends Done with Event::embedding, and its pages are released
    // without entering the prefix cache. maxTokens, sampling, stop and
    // constraint are not used.
    bool embed = false;
};

struct Usage {
    int32_t promptTokens = 0;
    int32_t completionTokens = 0;
    int32_t cachedPromptTokens = 0;      // prompt tokens served from the prefix cache
    double timeToFirstTokenMs = 0;
    double decodeTokensPerSecond = 0;
    // Speculative decoding: draft tokens verified, and how many of them the
    // sampler kept (each a decode step saved).
    int32_t draftTokens = 0;
    int32_t acceptedDraftTokens = 0;
};

enum class FinishReason { Stop, Length, StopString };

// Why a request ended with an Error event, so a client (the HTTP server) can
// answer with the right status: QueueFull is "try again later" (the wait queue
// was over EngineOptions::maxWaiting), TooLong can never fit the pools or the
// context, BadRequest is a request that makes no sense (empty prompt, no
// tokens allowed), ShuttingDown is a request the engine could not finish
// because it is stopping, Internal is everything else.
enum class ErrorCode : uint8_t { None, QueueFull, TooLong, BadRequest, ShuttingDown, Internal };

struct Event {
    enum class Kind { Token, Done, Error, Cancelled };
    Kind kind = Kind::Token;
    uint64_t request = 0;
    int32_t token = -1;                  // Token: the id
    std::string text;                    // Token: complete UTF-8 text delta; Error: message
    Usage usage;                         // terminal events
    FinishReason finish = FinishReason::Stop;
    // Done with StopString: the index in GenerateRequest::stop of the string
    // that matched (so a client can tell its own stop sequences from a
    // template's end-of-turn markers); -1 otherwise.
    int32_t stopIndex = -1;
    ErrorCode error = ErrorCode::None;   // Error: why
    // Token, when GenerateRequest::topLogprobs >= 0: the log-softmax of the
    // model's raw logits for this position (before penalties, bias and
    // temperature, as vLLM's default and OpenAI's report them).
    std::optional<TokenLogprobs> logprobs;
    // Done of an embed request: the last prompt token's final hidden state
    // (after the model's output norm), L2-normalised to unit length
    // (last-token pooling, as decoder-only embedding models use).
    std::vector<float> embedding;
    bool isTerminal() const { return kind != Kind::Token; }
};

// Called on the engine thread, in order, for every event of one request.
using EventSink = std::function<void(const Event&)>;

} // namespace weir
