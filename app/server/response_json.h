#pragma once
// The JSON Weir answers with, in OpenAI's shapes: chat.completion,
// chat.completion.chunk, text_completion, usage; and the engine's pool status.
#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <string>
#include <vector>

#include "weir/engine.h"
#include "weir/types/tool_calls.h"

namespace weir::server {

QJsonObject usageJson(const Usage& usage);
QJsonArray toolCallsJson(const std::vector<ToolCall>& calls, int firstIndex, bool withIndex);
QString finishReasonName(FinishReason reason);

// One complete chat answer. content empty and calls present -> content null.
QJsonObject chatCompletionJson(const QString& id, qint64 created, const QString& model, const std::string& content,
                               const std::vector<ToolCall>& calls, const QString& finishReason, const Usage& usage);
// One streamed chat chunk with the given delta (empty delta for the last);
// finishReason empty -> null. withUsageNull adds "usage": null (include_usage).
QJsonObject chatChunkJson(const QString& id, qint64 created, const QString& model, const QJsonObject& delta,
                          const QString& finishReason, bool withUsageNull);
// The closing usage chunk of a stream with include_usage (no choices).
QJsonObject usageChunkJson(const QString& id, qint64 created, const QString& model, const QString& object,
                           const Usage& usage);

QJsonObject textCompletionJson(const QString& id, qint64 created, const QString& model, const std::string& text,
                               const QString& finishReason, const Usage* usage);

// Engine::cacheStatus() for GET /v1/cache/status.
QJsonObject cacheStatusJson(const CacheStatus& status);

// "data: {json}\n\n"
QByteArray sseEvent(const QJsonObject& o);

} // namespace weir::server
