#pragma once
// The JSON Weir answers with, in OpenAI's shapes: chat.completion,
// chat.completion.chunk, text_completion, usage, log probabilities; and the
// engine's pool status.
#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <string>
#include <vector>

#include "weir/engine.h"
#include "weir/types/token_logprobs.h"
#include "weir/types/tool_calls.h"

namespace weir::server {

// What every object of one answer repeats.
struct AnswerHeader {
    QString id;
    qint64 created = 0;
    QString model;
    QString fingerprint;  // system_fingerprint: this server's model and configuration
};

QJsonObject usageJson(const Usage& usage);
QJsonArray toolCallsJson(const std::vector<ToolCall>& calls, int firstIndex, bool withIndex);
QString finishReasonName(FinishReason reason);

// Chat's log probabilities: {"content": [{token, logprob, bytes, top_logprobs}], "refusal": null}.
QJsonObject chatLogprobsJson(const std::vector<TokenLogprobs>& tokens);
// Completions' log probabilities: {tokens, token_logprobs, top_logprobs, text_offset};
// `textOffset` is the characters of text before the first of them.
QJsonObject completionLogprobsJson(const std::vector<TokenLogprobs>& tokens, qint64 textOffset);
// Characters a token adds to the text (as text_offset counts them).
qint64 textLength(const std::string& bytes);

struct ChatChoice {
    std::string content;
    std::vector<ToolCall> calls;
    QString finishReason;
    QJsonValue logprobs = QJsonValue::Null;
};
// A complete chat answer. content empty and calls present -> content null.
QJsonObject chatCompletionJson(const AnswerHeader& h, const std::vector<ChatChoice>& choices, const Usage& usage);
// One streamed chat chunk with the given delta (empty delta for the last);
// finishReason empty -> null. withUsageNull adds "usage": null (include_usage).
QJsonObject chatChunkJson(const AnswerHeader& h, int index, const QJsonObject& delta, const QString& finishReason,
                          const QJsonValue& logprobs, bool withUsageNull);
// The closing usage chunk of a stream with include_usage (no choices).
QJsonObject usageChunkJson(const AnswerHeader& h, const QString& object, const Usage& usage);

struct TextChoice {
    std::string text;
    QString finishReason;  // empty -> null
    QJsonValue logprobs = QJsonValue::Null;
};
// A text_completion: the whole answer (usage given) or one streamed chunk.
QJsonObject textCompletionJson(const AnswerHeader& h, const std::vector<TextChoice>& choices, const Usage* usage,
                               int firstIndex = 0);

// An embeddings answer: {"object": "list", "data": [{"object": "embedding",
// "index", "embedding": floats or base64 of little-endian float32}], "model",
// "pooling" (how the vector was made), "usage": {prompt_tokens, total_tokens}}.
QJsonObject embeddingsJson(const QString& model, const std::vector<std::vector<float>>& vectors, bool base64,
                           const QString& pooling, int promptTokens);

// Engine::cacheStatus() for GET /v1/cache/status.
// `maxRunning`: the requests the engine runs at once (--max-running-requests).
QJsonObject cacheStatusJson(const CacheStatus& status, int maxRunning);

// "data: {json}\n\n"
QByteArray sseEvent(const QJsonObject& o);

} // namespace weir::server
