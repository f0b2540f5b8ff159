#pragma once
// Reads OpenAI request bodies (chat completions, completions) into plain
// structs, checking every field it knows: malformed JSON, a wrong type or a
// value out of range gives an ApiError (400) naming the field. Fields it does
// not know are ignored, as OpenAI's own server ignores metadata it does not
// use. No engine, no network: the fuzz test calls these directly.
#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/server/api_error.h"
#include "weir/types/output_constraint.h"
#include "weir/types/sampling_params.h"
#include "weir/types/token_logprobs.h"
#include "weir/types/tool_calls.h"

namespace weir::server {

// Fields shared by both endpoints.
struct GenerationFields {
    int n = 1;                             // choices per prompt, each its own sequence
    // Log probabilities: chat's logprobs (true) with top_logprobs, or
    // completions' logprobs (an integer: that many alternatives).
    bool logprobs = false;
    int topLogprobs = 0;
    std::optional<int64_t> maxTokens;      // max_tokens / max_completion_tokens
    SamplingParams sampling;               // Weir's defaults where the request is silent; logit_bias
                                           // ids are checked against the vocabulary by the preparation
    bool seedGiven = false;
    std::vector<std::string> stop;
    bool stream = false;
    bool includeUsage = false;             // stream_options.include_usage
    bool ignoreEos = false;                // ignore_eos (vLLM's and llama.cpp's extension): run to max_tokens
};

struct ChatRequest {
    QString model;                         // empty: not given (the served model)
    // Objects: role ("system", "user", "assistant", "tool"; "developer"
    // reads as "system"), content (a string; text parts joined), and, where
    // given, tool_calls (id, type, function {name, arguments as JSON text}),
    // tool_call_id, name: ChatPromptInput::messagesJson's shape.
    QJsonArray messages;
    QJsonArray tools;                      // OpenAI's tool list; empty for none
    QByteArray toolsText;                  // the list as the body spells it (its key order), empty
                                           // where not read from a body
    ToolChoice toolChoice;
    bool parallelToolCalls = true;         // false: at most one call per reply
    OutputConstraint responseFormat;       // response_format (the schema's JSON text, in the body's key order
                                           // where read from a body: see keepSchemaOrder)
    GenerationFields gen;
};

struct CompletionPrompt {
    std::string text;                      // text prompt, or
    std::vector<int32_t> tokens;           // token ids when the prompt was given as ids
    bool isTokens = false;
};

struct CompletionRequest {
    QString model;                         // empty: not given (the served model)
    std::vector<CompletionPrompt> prompts; // one or more: each gets n choices
    bool echo = false;
    std::optional<std::string> suffix;     // fill in the middle (fill_in_middle.h); text prompts only
    bool skipSpecialTokens = true;         // skip_special_tokens (vLLM's): false writes control tokens and
                                           // media markers (<start_of_image>) as text
    GenerationFields gen;
};

// Limits on what one request may carry (beyond the body-size limit).
inline constexpr int kMaxStopStrings = 16;
inline constexpr int kMaxStopBytes = 1024;
inline constexpr int kMaxMessages = 100000;
inline constexpr int kMaxTools = 512;
inline constexpr int kMaxChoicesPerPrompt = 8;  // n
inline constexpr int kMaxPrompts = 16;          // prompts in one completions request
inline constexpr int kMaxCompletionLogprobs = 5;
inline constexpr int kMaxLogitBias = 1024;      // entries in logit_bias

// True and `out` filled, or false and `error` filled (status 400).
bool parseChatRequest(const QByteArray& body, ChatRequest& out, ApiError& error);
// The same for a body already parsed: the Anthropic and Responses requests
// are translated into chat completions' shape and read here.
bool parseChatObject(const QJsonObject& body, ChatRequest& out, ApiError& error);
// A body that must be a JSON object.
bool parseJsonBody(const QByteArray& body, QJsonObject& out, ApiError& error);
bool parseCompletionRequest(const QByteArray& body, CompletionRequest& out, ApiError& error);
// A JsonSchema constraint's schema as `body` spells it at `path` (its
// properties in the client's order, which a QJsonObject loses); kept as it
// is where the body has nothing there.
void keepSchemaOrder(const QByteArray& body, const QStringList& path, OutputConstraint& constraint);
// For a dialect whose "tools" items carry each schema at `schemaKey` (the
// Anthropic input_schema, the Responses parameters): ChatRequest::toolsText
// with each tool's parameters as `body` spells them, so that the request
// rebuilt through QJsonObject keeps the schemas' property order.
void keepToolsOrder(const QByteArray& body, const QString& schemaKey, ChatRequest& request);

} // namespace weir::server
