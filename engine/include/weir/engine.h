#pragma once
// The engine's public API: one Engine owns the model, both KV pools, the
// scheduler and the worker thread. Clients (weir-cli, the app, the HTTP
// endpoint) submit requests and receive events through a callback, called on
// the engine thread, in order. Every request ends with exactly one terminal
// event: Done, Error or Cancelled.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weir/tool_calls.h"
#include "weir/types/cache_status.h"
#include "weir/types/chat_prompt.h"
#include "weir/types/compute_device.h"
#include "weir/types/engine_options.h"
#include "weir/types/generate.h"
#include "weir/types/maintenance_result.h"
#include "weir/types/message.h"
#include "weir/types/model_config.h"
#include "weir/types/output_constraint.h"

namespace weir {


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
    const EngineOptions& options() const;
    // The device the model and both pools live on (--device), with its memory.
    ComputeDevice device() const;

    // --- tokenization and chat rendering: value-returning, any thread ---
    int32_t vocabSize() const;
    // Plain text to ids; control-token text stays text.
    std::vector<int32_t> tokenize(const std::string& text, bool addBos) const;
    // Ids back to text (control tokens left out).
    std::string detokenize(const std::vector<int32_t>& ids) const;
    // Prompt text for a conversation, rendered with the model's chat template.
    std::string renderChat(const std::vector<Message>& messages, bool addGenerationPrompt) const;
    // The conversation rendered and tokenized, ready for GenerateRequest::prompt:
    // control tokens come only from the template, never from what the
    // messages say; exactly one BOS.
    std::vector<int32_t> tokenizeChat(const std::vector<Message>& messages) const;
    // The same for a conversation whose last message is an unfinished
    // assistant turn to write on (Continue): rendered without a generation
    // prompt and cut where that message's text ends, so the template's
    // end-of-turn marker is not there and the model continues the text.
    // Throws weir::Error when the last message is not a non-empty assistant
    // turn, or the template does not end the prompt with its text.
    std::vector<int32_t> tokenizeChatContinuation(const std::vector<Message>& messages) const;
    // What the chat template is: its description ("the model's own template",
    // "built-in ChatML", ...) and whether the model file brought its own.
    std::string chatTemplateDescription() const;
    bool hasOwnChatTemplate() const;

    // An OpenAI chat request (messages and tools as JSON text, tool_choice)
    // rendered with the model's template and tool convention and tokenized:
    // control tokens come only from the template, never from the client's
    // text. Throws weir::Error with the template's complaint when it rejects
    // the conversation (roles out of order, a tool call without a reply...),
    // or when the JSON does not parse.
    PreparedChat prepareChat(const ChatPromptInput& input) const;
    // Why the engine would refuse this output constraint ("" when it would
    // not): the schema's JSON or an unsupported keyword, named with where it
    // is. Cheap (no vocabulary involved) and safe from any thread, so a
    // server can answer 400 before it submits.
    static std::string outputConstraintProblem(const OutputConstraint& constraint);
    // A reader for one reply of a chat with tools (PreparedChat::toolNames):
    // calls to other names stay text.
    std::unique_ptr<ToolCallReader> toolCallReader(std::vector<std::string> toolNames) const;
    // Token ids of a raw prompt the client wrote in the model's format
    // (/v1/completions): special tokens parsed everywhere, since such a
    // prompt is the client's own template (as llama.cpp's server does);
    // exactly one BOS.
    std::vector<int32_t> tokenizePrompt(const std::string& rawPrompt) const;

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
    // Ok, or ShuttingDown / Failed with why.
    MaintenanceResult clearPrefixCache();
    // Resizes one pool to `tokens` between two steps (running requests keep
    // their pages; cached pages are evicted first when shrinking; never below
    // the pool's floor). Ok when done as asked; else Clamped (shrunk only to
    // the pages in use), Refused, Failed (an exception while resizing, never
    // reported as success) or ShuttingDown, with why. Waits for the engine
    // thread; safe from any thread, event sinks included.
    MaintenanceResult resizePool(PoolKind pool, int64_t tokens);

private:
    struct Impl;
    friend struct EngineAccess;  // engine/api/engine_access.h, for tests of the internals
    std::unique_ptr<Impl> impl_;
};

} // namespace weir
