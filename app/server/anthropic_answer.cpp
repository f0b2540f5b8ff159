#include "app/server/anthropic_answer.h"

#include <QJsonDocument>

namespace weir::server {

namespace {

QString qs(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QJsonObject usageOf(int input, int output) {
    return {{QStringLiteral("input_tokens"), input}, {QStringLiteral("output_tokens"), output}};
}

QJsonValue stopReason(const AnswerEnding& e) {
    if (e.toolCalls) return QStringLiteral("tool_use");
    if (e.reason == FinishReason::Length) return QStringLiteral("max_tokens");
    if (!e.stopSequence.empty()) return QStringLiteral("stop_sequence");
    return QStringLiteral("end_turn");
}

QJsonValue stopSequence(const AnswerEnding& e) {
    return e.stopSequence.empty() || e.toolCalls ? QJsonValue(QJsonValue::Null) : QJsonValue(qs(e.stopSequence));
}

QByteArray event(const char* name, QJsonObject data) {
    data.insert(QStringLiteral("type"), QLatin1String(name));
    return namedSseEvent(QLatin1String(name), data);
}

} // namespace

QString anthropicErrorType(int status) {
    switch (status) {
    case 400: return QStringLiteral("invalid_request_error");
    case 401: return QStringLiteral("authentication_error");
    case 403: return QStringLiteral("permission_error");
    case 404: return QStringLiteral("not_found_error");
    case 413: return QStringLiteral("request_too_large");
    case 429: return QStringLiteral("rate_limit_error");
    case 503: return QStringLiteral("overloaded_error");
    default: return status >= 500 ? QStringLiteral("api_error") : QStringLiteral("invalid_request_error");
    }
}

QJsonObject anthropicErrorJson(const ApiError& e) {
    return {{QStringLiteral("type"), QStringLiteral("error")},
            {QStringLiteral("error"),
             QJsonObject{{QStringLiteral("type"), anthropicErrorType(e.status)}, {QStringLiteral("message"), e.message}}}};
}

AnthropicAnswer::AnthropicAnswer(QString id, QString model, int inputTokens)
    : id_(std::move(id)), model_(std::move(model)), inputTokens_(inputTokens) {}

QJsonObject AnthropicAnswer::message(const QJsonArray& content, const AnswerEnding* ending) const {
    return {{QStringLiteral("id"), id_},
            {QStringLiteral("type"), QStringLiteral("message")},
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("model"), model_},
            {QStringLiteral("content"), content},
            {QStringLiteral("stop_reason"), ending ? stopReason(*ending) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("stop_sequence"), ending ? stopSequence(*ending) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("usage"), usageOf(ending ? ending->usage.promptTokens : inputTokens_,
                                              ending ? ending->usage.completionTokens : 0)}};
}

QByteArray AnthropicAnswer::begin() {
    return event("message_start", {{QStringLiteral("message"), message({}, nullptr)}}) + event("ping", {});
}

QByteArray AnthropicAnswer::text(const std::string& delta) {
    if (delta.empty()) return {};
    QByteArray out;
    if (!textOpen_) {
        textOpen_ = true;
        blocks_.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), QString()}});
        out += event("content_block_start",
                     {{QStringLiteral("index"), blocks_.size() - 1},
                      {QStringLiteral("content_block"),
                       QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), QString()}}}});
    }
    QJsonObject last = blocks_.last().toObject();
    last.insert(QStringLiteral("text"), last.value(QLatin1String("text")).toString() + qs(delta));
    blocks_.replace(blocks_.size() - 1, last);
    out += event("content_block_delta",
                 {{QStringLiteral("index"), blocks_.size() - 1},
                  {QStringLiteral("delta"),
                   QJsonObject{{QStringLiteral("type"), QStringLiteral("text_delta")}, {QStringLiteral("text"), qs(delta)}}}});
    return out;
}

QByteArray AnthropicAnswer::closeText() {
    if (!textOpen_) return {};
    textOpen_ = false;
    return event("content_block_stop", {{QStringLiteral("index"), blocks_.size() - 1}});
}

QByteArray AnthropicAnswer::call(const ToolCall& c) {
    QByteArray out = closeText();
    // Anthropic's ids start with toolu_; the client sends them back as tool_use_id.
    QString id = qs(c.id);
    if (id.startsWith(QLatin1String("call_"))) id.replace(0, 5, QStringLiteral("toolu_"));
    const QJsonDocument args = QJsonDocument::fromJson(QByteArray::fromStdString(c.arguments));
    const QJsonObject input = args.isObject() ? args.object() : QJsonObject();
    blocks_.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("tool_use")},
                               {QStringLiteral("id"), id},
                               {QStringLiteral("name"), qs(c.name)},
                               {QStringLiteral("input"), input}});
    const int index = int(blocks_.size() - 1);
    out += event("content_block_start",
                 {{QStringLiteral("index"), index},
                  {QStringLiteral("content_block"),
                   QJsonObject{{QStringLiteral("type"), QStringLiteral("tool_use")},
                               {QStringLiteral("id"), id},
                               {QStringLiteral("name"), qs(c.name)},
                               {QStringLiteral("input"), QJsonObject()}}}});
    out += event("content_block_delta",
                 {{QStringLiteral("index"), index},
                  {QStringLiteral("delta"),
                   QJsonObject{{QStringLiteral("type"), QStringLiteral("input_json_delta")},
                               {QStringLiteral("partial_json"),
                                QString::fromUtf8(QJsonDocument(input).toJson(QJsonDocument::Compact))}}}});
    out += event("content_block_stop", {{QStringLiteral("index"), index}});
    return out;
}

QByteArray AnthropicAnswer::end(const AnswerEnding& ending) {
    QByteArray out = closeText();
    out += event("message_delta",
                 {{QStringLiteral("delta"),
                   QJsonObject{{QStringLiteral("stop_reason"), stopReason(ending)},
                               {QStringLiteral("stop_sequence"), stopSequence(ending)}}},
                  {QStringLiteral("usage"), usageOf(ending.usage.promptTokens, ending.usage.completionTokens)}});
    out += event("message_stop", {});
    return out;
}

QJsonObject AnthropicAnswer::whole(const AnswerEnding& ending) const { return message(blocks_, &ending); }

QByteArray AnthropicAnswer::errorEvent(const ApiError& e) {
    return namedSseEvent(QStringLiteral("error"), anthropicErrorJson(e));
}

} // namespace weir::server
