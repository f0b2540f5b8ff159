#include "app/server/response_json.h"

#include "app/server/api_client_tag.h"

#include <QJsonDocument>

namespace weir::server {

namespace {

QString qs(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

QJsonValue nullOr(const QString& s) { return s.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(s); }

QJsonObject poolJson(const PoolStatus& p) {
    QJsonObject o;
    o.insert(QStringLiteral("name"), QString::fromLatin1(poolKindName(p.kind)));
    o.insert(QStringLiteral("capacity_tokens"), qint64(p.capacityTokens));
    o.insert(QStringLiteral("free_tokens"), qint64(p.freeTokens));
    o.insert(QStringLiteral("owned_tokens"), qint64(p.ownedTokens));
    o.insert(QStringLiteral("cached_tokens"), qint64(p.cachedTokens));
    o.insert(QStringLiteral("floor_tokens"), qint64(p.floorTokens));
    o.insert(QStringLiteral("bytes_per_token"), qint64(p.bytesPerToken));
    o.insert(QStringLiteral("total_bytes"), qint64(p.totalBytes));
    return o;
}

} // namespace

QJsonObject usageJson(const Usage& u) {
    QJsonObject details;
    details.insert(QStringLiteral("cached_tokens"), u.cachedPromptTokens);
    QJsonObject o;
    o.insert(QStringLiteral("prompt_tokens"), u.promptTokens);
    o.insert(QStringLiteral("completion_tokens"), u.completionTokens);
    o.insert(QStringLiteral("total_tokens"), u.promptTokens + u.completionTokens);
    o.insert(QStringLiteral("prompt_tokens_details"), details);
    return o;
}

QJsonArray toolCallsJson(const std::vector<ToolCall>& calls, int firstIndex, bool withIndex) {
    QJsonArray a;
    int index = firstIndex;
    for (const ToolCall& c : calls) {
        QJsonObject fn;
        fn.insert(QStringLiteral("name"), qs(c.name));
        fn.insert(QStringLiteral("arguments"), qs(c.arguments));
        QJsonObject o;
        if (withIndex) o.insert(QStringLiteral("index"), index);
        o.insert(QStringLiteral("id"), qs(c.id));
        o.insert(QStringLiteral("type"), QStringLiteral("function"));
        o.insert(QStringLiteral("function"), fn);
        a.append(o);
        ++index;
    }
    return a;
}

QString finishReasonName(FinishReason reason) {
    return reason == FinishReason::Length ? QStringLiteral("length") : QStringLiteral("stop");
}

QJsonObject chatCompletionJson(const QString& id, qint64 created, const QString& model, const std::string& content,
                               const std::vector<ToolCall>& calls, const QString& finishReason, const Usage& usage) {
    QJsonObject message;
    message.insert(QStringLiteral("role"), QStringLiteral("assistant"));
    message.insert(QStringLiteral("content"),
                   content.empty() && !calls.empty() ? QJsonValue(QJsonValue::Null) : QJsonValue(qs(content)));
    if (!calls.empty()) message.insert(QStringLiteral("tool_calls"), toolCallsJson(calls, 0, false));
    QJsonObject choice;
    choice.insert(QStringLiteral("index"), 0);
    choice.insert(QStringLiteral("message"), message);
    choice.insert(QStringLiteral("logprobs"), QJsonValue::Null);
    choice.insert(QStringLiteral("finish_reason"), finishReason);
    QJsonObject o;
    o.insert(QStringLiteral("id"), id);
    o.insert(QStringLiteral("object"), QStringLiteral("chat.completion"));
    o.insert(QStringLiteral("created"), created);
    o.insert(QStringLiteral("model"), model);
    o.insert(QStringLiteral("choices"), QJsonArray{choice});
    o.insert(QStringLiteral("usage"), usageJson(usage));
    return o;
}

QJsonObject chatChunkJson(const QString& id, qint64 created, const QString& model, const QJsonObject& delta,
                          const QString& finishReason, bool withUsageNull) {
    QJsonObject choice;
    choice.insert(QStringLiteral("index"), 0);
    choice.insert(QStringLiteral("delta"), delta);
    choice.insert(QStringLiteral("logprobs"), QJsonValue::Null);
    choice.insert(QStringLiteral("finish_reason"), nullOr(finishReason));
    QJsonObject o;
    o.insert(QStringLiteral("id"), id);
    o.insert(QStringLiteral("object"), QStringLiteral("chat.completion.chunk"));
    o.insert(QStringLiteral("created"), created);
    o.insert(QStringLiteral("model"), model);
    o.insert(QStringLiteral("choices"), QJsonArray{choice});
    if (withUsageNull) o.insert(QStringLiteral("usage"), QJsonValue::Null);
    return o;
}

QJsonObject usageChunkJson(const QString& id, qint64 created, const QString& model, const QString& object,
                           const Usage& usage) {
    QJsonObject o;
    o.insert(QStringLiteral("id"), id);
    o.insert(QStringLiteral("object"), object);
    o.insert(QStringLiteral("created"), created);
    o.insert(QStringLiteral("model"), model);
    o.insert(QStringLiteral("choices"), QJsonArray{});
    o.insert(QStringLiteral("usage"), usageJson(usage));
    return o;
}

QJsonObject textCompletionJson(const QString& id, qint64 created, const QString& model, const std::string& text,
                               const QString& finishReason, const Usage* usage) {
    QJsonObject choice;
    choice.insert(QStringLiteral("text"), qs(text));
    choice.insert(QStringLiteral("index"), 0);
    choice.insert(QStringLiteral("logprobs"), QJsonValue::Null);
    choice.insert(QStringLiteral("finish_reason"), nullOr(finishReason));
    QJsonObject o;
    o.insert(QStringLiteral("id"), id);
    o.insert(QStringLiteral("object"), QStringLiteral("text_completion"));
    o.insert(QStringLiteral("created"), created);
    o.insert(QStringLiteral("model"), model);
    o.insert(QStringLiteral("choices"), QJsonArray{choice});
    if (usage) o.insert(QStringLiteral("usage"), usageJson(*usage));
    return o;
}

QJsonObject cacheStatusJson(const CacheStatus& s) {
    QJsonArray requests;
    for (const RequestStatus& r : s.requests) {
        QJsonObject o;
        o.insert(QStringLiteral("id"), qint64(r.id));
        // This server's requests by their key; the host app's own requests as "app".
        o.insert(QStringLiteral("client"), r.tag.kind == kApiRequestTagKind ? QStringLiteral("api:%1").arg(r.tag.id)
                                                                            : QStringLiteral("app"));
        o.insert(QStringLiteral("state"), QString::fromLatin1(requestStateName(r.state)));
        o.insert(QStringLiteral("full_tokens"), qint64(r.fullTokens));
        o.insert(QStringLiteral("window_tokens"), qint64(r.windowTokens));
        o.insert(QStringLiteral("prefix_hit_tokens"), qint64(r.prefixHitTokens));
        o.insert(QStringLiteral("prompt_tokens"), r.promptTokens);
        o.insert(QStringLiteral("generated_tokens"), r.generatedTokens);
        requests.append(o);
    }
    QJsonArray details;
    for (const std::string& d : s.violationDetails) details.append(qs(d));
    QJsonObject o;
    o.insert(QStringLiteral("full"), poolJson(s.full));
    o.insert(QStringLiteral("window"), poolJson(s.window));
    o.insert(QStringLiteral("requests"), requests);
    o.insert(QStringLiteral("running"), s.running);
    o.insert(QStringLiteral("waiting"), s.waiting);
    o.insert(QStringLiteral("deferrals"), qint64(s.deferrals));
    o.insert(QStringLiteral("preemptions"), qint64(s.preemptions));
    o.insert(QStringLiteral("refusals"), qint64(s.refusals));
    o.insert(QStringLiteral("prefix_hit_tokens"), qint64(s.prefixHitTokens));
    o.insert(QStringLiteral("integrity_checks"), qint64(s.integrityChecks));
    o.insert(QStringLiteral("violations"), qint64(s.violations));
    o.insert(QStringLiteral("violation_details"), details);
    return o;
}

QByteArray sseEvent(const QJsonObject& o) {
    return QByteArrayLiteral("data: ") + QJsonDocument(o).toJson(QJsonDocument::Compact) + QByteArrayLiteral("\n\n");
}

} // namespace weir::server
