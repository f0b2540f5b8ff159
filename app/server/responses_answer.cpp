#include "app/server/responses_answer.h"

#include <QRandomGenerator>

namespace weir::server {

namespace {

QString qs(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QString itemId(const char* prefix) {
    static const char alphabet[] = "0123456789abcdef";
    QString s = QLatin1String(prefix);
    for (int i = 0; i < 32; ++i) s += QLatin1Char(alphabet[QRandomGenerator::global()->bounded(16)]);
    return s;
}

QJsonObject textPart(const QString& text) {
    return {{QStringLiteral("type"), QStringLiteral("output_text")},
            {QStringLiteral("text"), text},
            {QStringLiteral("annotations"), QJsonArray()},
            {QStringLiteral("logprobs"), QJsonArray()}};
}

QJsonValue orDefault(const QJsonObject& o, const char* key, const QJsonValue& fallback) {
    const QJsonValue v = o.value(QLatin1String(key));
    return v.isUndefined() || v.isNull() ? fallback : v;
}

} // namespace

ResponsesAnswer::ResponsesAnswer(QString id, QString model, qint64 createdAt, QJsonObject echo)
    : id_(std::move(id)), model_(std::move(model)), createdAt_(createdAt), echo_(std::move(echo)) {}

QByteArray ResponsesAnswer::event(const char* type, QJsonObject data) {
    data.insert(QStringLiteral("type"), QLatin1String(type));
    data.insert(QStringLiteral("sequence_number"), sequence_++);
    return namedSseEvent(QLatin1String(type), data);
}

QJsonObject ResponsesAnswer::response(const AnswerEnding* ending) const {
    const bool cut = ending && ending->reason == FinishReason::Length && !ending->toolCalls;
    QJsonObject r{
        {QStringLiteral("id"), id_},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("created_at"), createdAt_},
        {QStringLiteral("status"), !ending ? QStringLiteral("in_progress")
                                   : cut   ? QStringLiteral("incomplete")
                                           : QStringLiteral("completed")},
        {QStringLiteral("error"), QJsonValue::Null},
        {QStringLiteral("incomplete_details"),
         cut ? QJsonValue(QJsonObject{{QStringLiteral("reason"), QStringLiteral("max_output_tokens")}})
             : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("model"), model_},
        {QStringLiteral("output"), ending ? output_ : QJsonArray()},
        {QStringLiteral("store"), false},
        {QStringLiteral("instructions"), orDefault(echo_, "instructions", QJsonValue::Null)},
        {QStringLiteral("max_output_tokens"), orDefault(echo_, "max_output_tokens", QJsonValue::Null)},
        {QStringLiteral("temperature"), orDefault(echo_, "temperature", 1.0)},
        {QStringLiteral("top_p"), orDefault(echo_, "top_p", 1.0)},
        {QStringLiteral("tools"), orDefault(echo_, "tools", QJsonArray())},
        {QStringLiteral("tool_choice"), orDefault(echo_, "tool_choice", QStringLiteral("auto"))},
        {QStringLiteral("parallel_tool_calls"), orDefault(echo_, "parallel_tool_calls", true)},
        {QStringLiteral("text"), orDefault(echo_, "text",
                                           QJsonObject{{QStringLiteral("format"),
                                                        QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}}}})},
        {QStringLiteral("metadata"), orDefault(echo_, "metadata", QJsonObject())},
        {QStringLiteral("usage"), QJsonValue::Null},
    };
    if (ending) {
        const Usage& u = ending->usage;
        r.insert(QStringLiteral("usage"),
                 QJsonObject{{QStringLiteral("input_tokens"), u.promptTokens},
                             {QStringLiteral("input_tokens_details"),
                              QJsonObject{{QStringLiteral("cached_tokens"), u.cachedPromptTokens}}},
                             {QStringLiteral("output_tokens"), u.completionTokens},
                             {QStringLiteral("output_tokens_details"),
                              QJsonObject{{QStringLiteral("reasoning_tokens"), 0}}},
                             {QStringLiteral("total_tokens"), u.promptTokens + u.completionTokens}});
    }
    return r;
}

QByteArray ResponsesAnswer::begin() {
    QByteArray out = event("response.created", {{QStringLiteral("response"), response(nullptr)}});
    out += event("response.in_progress", {{QStringLiteral("response"), response(nullptr)}});
    return out;
}

QByteArray ResponsesAnswer::openMessage() {
    if (messageOpen_) return {};
    QByteArray out;
    const int index = int(output_.size());
    {
        messageOpen_ = true;
        messageText_.clear();
        const QJsonObject item{{QStringLiteral("id"), itemId("msg_")},
                               {QStringLiteral("type"), QStringLiteral("message")},
                               {QStringLiteral("status"), QStringLiteral("in_progress")},
                               {QStringLiteral("role"), QStringLiteral("assistant")},
                               {QStringLiteral("content"), QJsonArray()}};
        output_.append(item);
        out += event("response.output_item.added", {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
        out += event("response.content_part.added", {{QStringLiteral("item_id"), item.value(QLatin1String("id"))},
                                                     {QStringLiteral("output_index"), index},
                                                     {QStringLiteral("content_index"), 0},
                                                     {QStringLiteral("part"), textPart(QString())}});
    }
    return out;
}

QByteArray ResponsesAnswer::text(const std::string& delta) {
    if (delta.empty()) return {};
    QByteArray out = openMessage();
    const int index = int(output_.size()) - 1;
    messageText_ += qs(delta);
    QJsonObject item = output_.last().toObject();
    item.insert(QStringLiteral("content"), QJsonArray{textPart(messageText_)});
    output_.replace(output_.size() - 1, item);
    out += event("response.output_text.delta", {{QStringLiteral("item_id"), item.value(QLatin1String("id"))},
                                                {QStringLiteral("output_index"), index},
                                                {QStringLiteral("content_index"), 0},
                                                {QStringLiteral("delta"), qs(delta)},
                                                {QStringLiteral("logprobs"), QJsonArray()}});
    return out;
}

QByteArray ResponsesAnswer::closeMessage() {
    if (!messageOpen_) return {};
    messageOpen_ = false;
    const int index = int(output_.size()) - 1;
    QJsonObject item = output_.last().toObject();
    item.insert(QStringLiteral("status"), QStringLiteral("completed"));
    item.insert(QStringLiteral("content"), QJsonArray{textPart(messageText_)});  // also when empty
    output_.replace(index, item);
    const QJsonValue id = item.value(QLatin1String("id"));
    QByteArray out = event("response.output_text.done", {{QStringLiteral("item_id"), id},
                                                         {QStringLiteral("output_index"), index},
                                                         {QStringLiteral("content_index"), 0},
                                                         {QStringLiteral("text"), messageText_},
                                                         {QStringLiteral("logprobs"), QJsonArray()}});
    out += event("response.content_part.done", {{QStringLiteral("item_id"), id},
                                                {QStringLiteral("output_index"), index},
                                                {QStringLiteral("content_index"), 0},
                                                {QStringLiteral("part"), textPart(messageText_)}});
    out += event("response.output_item.done", {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    return out;
}

QByteArray ResponsesAnswer::call(const ToolCall& c) {
    QByteArray out = closeMessage();
    const int index = int(output_.size());
    QJsonObject item{{QStringLiteral("id"), itemId("fc_")},
                     {QStringLiteral("type"), QStringLiteral("function_call")},
                     {QStringLiteral("status"), QStringLiteral("in_progress")},
                     {QStringLiteral("call_id"), qs(c.id)},
                     {QStringLiteral("name"), qs(c.name)},
                     {QStringLiteral("arguments"), QString()}};
    const QJsonValue id = item.value(QLatin1String("id"));
    out += event("response.output_item.added", {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    out += event("response.function_call_arguments.delta", {{QStringLiteral("item_id"), id},
                                                            {QStringLiteral("output_index"), index},
                                                            {QStringLiteral("delta"), qs(c.arguments)}});
    out += event("response.function_call_arguments.done", {{QStringLiteral("item_id"), id},
                                                           {QStringLiteral("output_index"), index},
                                                           {QStringLiteral("name"), qs(c.name)},
                                                           {QStringLiteral("arguments"), qs(c.arguments)}});
    item.insert(QStringLiteral("status"), QStringLiteral("completed"));
    item.insert(QStringLiteral("arguments"), qs(c.arguments));
    output_.append(item);
    out += event("response.output_item.done", {{QStringLiteral("output_index"), index}, {QStringLiteral("item"), item}});
    return out;
}

QByteArray ResponsesAnswer::end(const AnswerEnding& ending) {
    // A reply with nothing in it is still a message (with empty text).
    QByteArray out = output_.isEmpty() ? openMessage() : QByteArray();
    out += closeMessage();
    const QJsonObject r = response(&ending);
    const bool incomplete = r.value(QLatin1String("status")).toString() == QLatin1String("incomplete");
    out += event(incomplete ? "response.incomplete" : "response.completed", {{QStringLiteral("response"), r}});
    return out;
}

QJsonObject ResponsesAnswer::whole(const AnswerEnding& ending) const {
    // A message still open when the reply ended is complete all the same.
    ResponsesAnswer copy = *this;
    if (copy.output_.isEmpty()) copy.openMessage();
    copy.closeMessage();
    return copy.response(&ending);
}

QByteArray ResponsesAnswer::errorEvent(const ApiError& e) {
    return event("error", {{QStringLiteral("code"), e.code.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(e.code)},
                           {QStringLiteral("message"), e.message},
                           {QStringLiteral("param"), e.param.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(e.param)}});
}

} // namespace weir::server
