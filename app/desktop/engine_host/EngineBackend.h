#pragma once
// What the app needs from an inference engine: the public weir::Engine API,
// behind an interface so tests can run the UI on a deterministic fake (the way
// Tokodon tests swap in a mock network). The shipped app uses
// RealEngineBackend, which forwards to weir::Engine.
//
// Threading contract (same as weir::Engine): every method is called from the
// engine host thread except cacheStatus(), which is safe from any thread; the
// sink passed to submit() is called on the engine's own worker thread.
#include <functional>
#include <memory>
#include <vector>

#include "weir/engine.h"
#include "weir/tool_calls.h"

namespace weir::desktop {

class EngineBackend {
public:
    virtual ~EngineBackend() = default;

    virtual const ModelConfig& modelConfig() const = 0;
    virtual const EngineOptions& options() const = 0;
    // Chat messages -> prompt tokens with the model's template. May throw weir::Error.
    virtual std::vector<int32_t> tokenizeChat(const std::vector<Message>& messages) const = 0;
    // The conversation with its last (assistant) message left open to write
    // on (Engine::tokenizeChatContinuation). May throw weir::Error.
    virtual std::vector<int32_t> tokenizeChatContinuation(const std::vector<Message>& messages) const = 0;
    // A chat with tools in OpenAI's shape -> prompt tokens, stop strings and how
    // to read the reply (Engine::prepareChat). May throw weir::Error.
    virtual PreparedChat prepareChat(const ChatPromptInput& input) const = 0;
    // A reader of tool calls in the model's own format for one reply
    // (Engine::toolCallReader); nullptr where the backend has none (fakes:
    // their calls come through tool_choice, as constrained JSON).
    virtual std::unique_ptr<ToolCallReader> toolCallReader(std::vector<std::string>) const { return nullptr; }
    virtual uint64_t submit(GenerateRequest request, EventSink sink) = 0;
    virtual void cancel(uint64_t id) = 0;
    virtual CacheStatus cacheStatus() const = 0;
    // Evicts cached prefixes no running request uses (Engine::clearPrefixCache).
    virtual void clearPrefixCache() = 0;
    // One line on the chat template in use, e.g. "gemma (built-in: the GGUF
    // has no tokenizer.chat_template)", and whether it is the model's own.
    virtual std::string chatTemplateDescription() const { return {}; }
    virtual bool hasOwnChatTemplate() const { return true; }
    // The engine itself, for the HTTP endpoint to serve alongside the app;
    // nullptr where there is none (test fakes).
    virtual Engine* engine() { return nullptr; }
};

// Builds a backend: loads the model and sizes the pools. Blocking (runs on the
// engine host thread); throws weir::Error with a clear message on failure.
using EngineFactory = std::function<std::unique_ptr<EngineBackend>(const EngineOptions&)>;

// The factory for the real engine (RealEngineBackend.cpp). Only the app's
// executable and the end-to-end test link it.
EngineFactory realEngineFactory();

} // namespace weir::desktop
