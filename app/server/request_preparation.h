#pragma once
// A completion request's body turned into what the engine runs: JSON parsed
// and checked, the chat template rendered (tools included), the prompt
// tokenized and held against the context limit. This is the costly part of a
// request (an 8 MiB prompt takes seconds), so the server runs it on a worker
// pool, never on the thread that accepts connections and answers /health;
// everything here is safe to run on several threads at once.
#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/server/answer_writer.h"
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
    int64_t contextLimit = 0;       // prompt + completion tokens stay within it
    qint64 defaultMaxTokens = 0;    // chat without max_tokens; 0: up to the context limit
};

// One choice of the answer: its own sequence in the engine. The choices of
// one prompt share its tokens, so all but the first find them in the prefix
// cache.
struct PreparedChoice {
    GenerateRequest generate;
    int prompt = 0;                          // which prompt (completions with several)
    std::string echo;                        // completions with echo: the prompt text, sent first
    std::unique_ptr<ToolCallReader> reader;  // chat with tools: reads calls out of the reply
    bool forcedCall = false;                 // the reply is held to a call as JSON (forced_tool_call.h)
};

struct PreparedRequest {
    std::optional<ApiError> error;  // set: answer with it, nothing else is filled
    std::vector<PreparedChoice> choices;  // prompt-major: prompt i's n choices are i*n .. i*n+n-1
    bool chat = true;
    bool stream = false;
    bool includeUsage = false;
    bool logprobs = false;          // the answer carries log probabilities
    bool parallelToolCalls = true;  // false: a reply ends after its first call
    QString model;                  // as the client named it, else the served model's id
    ApiDialect dialect = ApiDialect::OpenAiChat;  // the answer's and the errors' shape
    bool countOnly = false;         // count_tokens: answer with promptTokens, run nothing
    int promptTokens = 0;           // the (first) prompt's tokens
    std::vector<std::string> clientStops;  // the client's stop strings: the first entries of every choice's stop list
    QJsonObject echo;               // Responses: the request's settings the answer repeats
    bool embeddings = false;        // embeddings: each choice is one input's vector
    bool base64 = false;            // embeddings: encoding_format base64
};

PreparedRequest prepareChatCompletion(const QByteArray& body, const PreparationContext& context);
PreparedRequest prepareCompletion(const QByteArray& body, const PreparationContext& context);
// Anthropic Messages (anthropic_request.h), its count_tokens (countOnly set),
// and OpenAI Responses (responses_request.h): translated to a chat request,
// then prepared as chat completions are.
PreparedRequest prepareAnthropicMessages(const QByteArray& body, const PreparationContext& context, bool countOnly);
PreparedRequest prepareResponses(const QByteArray& body, const PreparationContext& context);
// OpenAI embeddings (embeddings_request.h): one embed request per input.
PreparedRequest prepareEmbeddings(const QByteArray& body, const PreparationContext& context);

} // namespace weir::server
