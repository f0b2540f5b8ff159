#pragma once
// The engine's public API: one Engine owns the model, both KV pools, the
// scheduler and the worker thread. Clients (weir-cli, the app, the HTTP
// endpoint) submit requests and receive events through a callback, called on
// the engine thread, in order. Every request ends with exactly one terminal
// event: Done, Error or Cancelled.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/models/kv_access.h"
#include "engine/models/model_config.h"
#include "engine/sampling/sampler.h"

namespace weir {

class Tokenizer;

struct EngineOptions {
    std::string modelPath;
    int32_t threads = 0;                 // 0 = all hardware threads
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
};

struct GenerateRequest {
    std::vector<int32_t> prompt;         // token ids (use Engine::renderChat/tokenize)
    SamplingParams sampling;
    int32_t maxTokens = 256;
    std::vector<std::string> stop;       // stop strings (not included in output)
    bool stopAtEndOfGeneration = true;
    std::string client;                  // label shown in status, e.g. "conv:12" or "api:7"
    // Token text deltas include the text of control tokens (tool-call markers
    // such as <start_function_call> are control tokens in some vocabularies);
    // stop strings then match them too. End-of-generation tokens stay hidden.
    bool showSpecialTokens = false;
};

struct Usage {
    int32_t promptTokens = 0;
    int32_t completionTokens = 0;
    int32_t cachedPromptTokens = 0;      // prompt tokens served from the prefix cache
    double timeToFirstTokenMs = 0;
    double decodeTokensPerSecond = 0;
};

enum class FinishReason { Stop, Length, StopString };

// Why a request ended with an Error event, so a client (the HTTP server) can
// answer with the right status: QueueFull is "try again later" (the wait queue
// was over EngineOptions::maxWaiting), TooLong can never fit the pools or the
// context, BadRequest is a request that makes no sense (empty prompt, no
// tokens allowed), Internal is everything else.
enum class ErrorCode : uint8_t { None, QueueFull, TooLong, BadRequest, Internal };

struct Event {
    enum class Kind { Token, Done, Error, Cancelled };
    Kind kind = Kind::Token;
    uint64_t request = 0;
    int32_t token = -1;                  // Token: the id
    std::string text;                    // Token: complete UTF-8 text delta; Error: message
    Usage usage;                         // terminal events
    FinishReason finish = FinishReason::Stop;
    ErrorCode error = ErrorCode::None;   // Error: why
    bool isTerminal() const { return kind != Kind::Token; }
};

using EventSink = std::function<void(const Event&)>;

struct PoolStatus {
    std::string name;                    // "full" or "window"
    int64_t capacityTokens = 0, freeTokens = 0, ownedTokens = 0, cachedTokens = 0;
    int64_t floorTokens = 0;
    size_t bytesPerToken = 0;
    size_t totalBytes = 0;
};

struct RequestStatus {
    uint64_t id = 0;
    std::string client;
    std::string state;                   // "waiting", "prefill", "decode"
    int64_t fullTokens = 0, windowTokens = 0, prefixHitTokens = 0;
    int32_t promptTokens = 0, generatedTokens = 0;
};

struct CacheStatus {
    PoolStatus full, window;
    std::vector<RequestStatus> requests;
    uint64_t deferrals = 0, preemptions = 0, refusals = 0, prefixHitTokens = 0;
    uint64_t integrityChecks = 0, violations = 0;
    std::vector<std::string> violationDetails;  // most recent first, bounded
    int32_t running = 0, waiting = 0;
};

class Engine {
public:
    // Loads the model and sizes the pools. Throws weir::Error with a clear
    // message for an option out of range (validateEngineOptions), a bad model
    // file or a pool configuration below its floor.
    explicit Engine(const EngineOptions& options);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const ModelConfig& modelConfig() const;
    const Tokenizer& tokenizer() const;
    const EngineOptions& options() const;

    // Prompt text for a conversation, rendered with the model's chat template.
    std::string renderChat(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const;
    std::vector<int32_t> tokenizeChat(const std::vector<ChatMessage>& messages) const;
    std::vector<int32_t> tokenize(const std::string& text, bool addBos) const;
    // The model's chat template (its own or the built-in stand-in), for
    // rendering with tools and extra variables.
    const ChatTemplate& chatTemplate() const;
    // Token ids of a prompt rendered by chatTemplate(): special tokens parsed,
    // exactly one BOS.
    std::vector<int32_t> tokenizePrompt(const std::string& renderedText) const;

    // Queues a request; returns its id (never 0). The sink is called on the
    // engine thread. A request that can never fit ends with an Error event.
    // Every request gets exactly one terminal event; one submitted while the
    // engine shuts down ends Cancelled.
    uint64_t submit(GenerateRequest request, EventSink sink);
    // Ends a request with Cancelled (if not already ended) and frees its pages.
    void cancel(uint64_t id);

    CacheStatus cacheStatus() const;     // snapshot, safe from any thread

    // Evicts every cached prefix that no running request uses, freeing its
    // pages, and returns once done (from any thread, event sinks included).
    // Returns "" when done, else why it failed.
    std::string clearPrefixCache();
    // Resizes the "full" or "window" pool to `tokens` between two steps
    // (running requests keep their pages; cached pages are evicted first when
    // shrinking; never below the pool's floor). Returns "" on success, else
    // why it was refused, clamped or failed (an exception while resizing is
    // reported here, never as success). Waits for the engine thread; safe
    // from any thread, event sinks included.
    std::string resizePool(const std::string& pool, int64_t tokens);

    struct Impl;
private:
    std::unique_ptr<Impl> impl_;
};

} // namespace weir
