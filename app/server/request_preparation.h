#pragma once
// A completion request's body turned into what the engine runs: JSON parsed
// and checked, the chat template rendered (tools included), the prompt
// tokenized and held against the context limit. This is the costly part of a
// request (an 8 MiB prompt takes seconds), so the server runs it on a worker
// pool, never on the thread that accepts connections and answers /health;
// everything here is safe to run on several threads at once.
#include <QByteArray>
#include <QString>
#include <memory>
#include <optional>
#include <string>

#include "app/server/api_error.h"
#include "app/server/served_model.h"
#include "weir/engine.h"
#include "weir/tool_calls.h"

namespace weir::server {

// What preparation reads; all of it outlives the work (the server waits for
// its pool before it lets go of the engine).
struct PreparationContext {
    const Engine* engine = nullptr;
    ServedModel model;
    int64_t contextLimit = 0;       // prompt tokens must stay below it
    qint64 defaultMaxTokens = 0;    // chat without max_tokens; 0: up to the context limit
};

struct PreparedRequest {
    std::optional<ApiError> error;  // set: answer with it, nothing else is filled
    GenerateRequest generate;
    bool chat = true;
    bool stream = false;
    bool includeUsage = false;
    QString model;                  // as the client named it
    std::string echo;               // completions with echo: the prompt text, sent first
    std::unique_ptr<ToolCallReader> reader;  // chat with tools: reads calls out of the reply
};

PreparedRequest prepareChatCompletion(const QByteArray& body, const PreparationContext& context);
PreparedRequest prepareCompletion(const QByteArray& body, const PreparationContext& context);

} // namespace weir::server
