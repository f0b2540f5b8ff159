#include "storage/ConversationExport.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace weir::desktop {
namespace {

const QLatin1String kFormat("weir.conversation");
constexpr int kFormatVersion = 2;

QString isoTime(qint64 ms) {
    return ms ? QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs) : QString();
}
qint64 fromIsoTime(const QJsonValue& v) {
    const QDateTime t = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    return t.isValid() ? t.toMSecsSinceEpoch() : 0;
}

QString roleHeading(const QString& role) {
    if (role == u"user") return QStringLiteral("User");
    if (role == u"assistant") return QStringLiteral("Assistant");
    if (role == u"system") return QStringLiteral("System");
    if (role == u"tool") return QStringLiteral("Tool");
    return role;
}

} // namespace

QString exportMarkdown(const ConversationDocument& doc) {
    const ConversationRecord& c = doc.conversation;
    QString out;
    out += QStringLiteral("# %1\n\n").arg(c.title.isEmpty() ? QStringLiteral("Conversation") : c.title);
    out += QStringLiteral("_Exported from Weir on %1._\n\n").arg(isoTime(QDateTime::currentMSecsSinceEpoch()));
    if (!c.settings.systemPrompt.isEmpty())
        out += QStringLiteral("## System\n\n%1\n\n").arg(c.settings.systemPrompt);
    for (int i = 0; i < doc.messages.size(); ++i) {
        const MessageRecord& m = doc.messages[i];
        out += QStringLiteral("## %1\n\n").arg(roleHeading(m.role));
        out += m.content;
        if (!m.content.endsWith(u'\n')) out += u'\n';
        if (m.state == MessageState::Interrupted) out += QStringLiteral("\n_(interrupted)_\n");
        if (m.state == MessageState::Cancelled) out += QStringLiteral("\n_(stopped)_\n");
        if (m.state == MessageState::Failed) out += QStringLiteral("\n_(failed: %1)_\n").arg(m.error);
        if (i < doc.toolCalls.size()) {
            for (const ToolCallRecord& t : doc.toolCalls[i]) {
                out += QStringLiteral("\n**Tool call** `%1` (%2, %3 ms)\n\n```json\n%4\n```\n")
                           .arg(t.name, t.state).arg(qRound(t.durationMs)).arg(t.arguments);
                if (!t.result.isEmpty()) out += QStringLiteral("\n**Result**\n\n```\n%1\n```\n").arg(t.result);
            }
        }
        out += u'\n';
    }
    return out;
}

QByteArray exportJson(const ConversationDocument& doc) {
    const ConversationRecord& c = doc.conversation;
    QJsonObject settings{{"system_prompt", c.settings.systemPrompt}, {"temperature", c.settings.temperature},
                         {"top_p", c.settings.topP}, {"top_k", c.settings.topK},
                         {"max_tokens", c.settings.maxTokens}, {"seed", c.settings.seed},
                         {"min_p", c.settings.minP}, {"repeat_penalty", c.settings.repeatPenalty}};
    if (!c.settings.contextPolicy.isEmpty()) settings["context_policy"] = c.settings.contextPolicy;
    if (!c.settings.engine.isEmpty()) settings["engine"] = c.settings.engine;
    QHash<qint64, int> indexOf;  // message id -> index in the document
    QJsonArray messages;
    for (int i = 0; i < doc.messages.size(); ++i) {
        const MessageRecord& m = doc.messages[i];
        QJsonObject o{{"role", m.role}, {"content", m.content}, {"state", messageStateName(m.state)},
                      {"created_at", isoTime(m.createdAt)}};
        int parent = -1;
        if (i < doc.parentIndex.size()) parent = doc.parentIndex[i];
        else if (m.id == 0) parent = i - 1;  // records not from a database: one branch
        else if (m.parentId != 0) parent = indexOf.value(m.parentId, -1);
        o["parent"] = parent >= 0 ? QJsonValue(parent) : QJsonValue(QJsonValue::Null);
        o["active"] = m.active;
        if (m.id) indexOf.insert(m.id, i);
        if (!m.finishReason.isEmpty()) o["finish_reason"] = m.finishReason;
        if (!m.model.isEmpty()) o["model"] = m.model;
        if (!m.error.isEmpty()) o["error"] = m.error;
        if (m.role == u"assistant") {
            QJsonObject usage{{"prompt_tokens", m.promptTokens}, {"completion_tokens", m.completionTokens},
                              {"cached_tokens", m.cachedTokens}, {"tokens_per_second", m.tokensPerSecond},
                              {"ttft_ms", m.timeToFirstTokenMs}};
            // Only replies that verified drafts (speculative decoding) carry them.
            if (m.draftTokens > 0) {
                usage["draft_tokens"] = m.draftTokens;
                usage["accepted_draft_tokens"] = m.acceptedDraftTokens;
            }
            o["usage"] = usage;
        }
        if (i < doc.toolCalls.size() && !doc.toolCalls[i].isEmpty()) {
            QJsonArray calls;
            for (const ToolCallRecord& t : doc.toolCalls[i])
                calls.append(QJsonObject{{"id", t.callId}, {"name", t.name}, {"arguments", t.arguments},
                                         {"result", t.result}, {"state", t.state}, {"duration_ms", t.durationMs}});
            o["tool_calls"] = calls;
        }
        messages.append(o);
    }
    QJsonObject root{{"format", kFormat}, {"version", kFormatVersion}, {"title", c.title},
                     {"created_at", isoTime(c.createdAt)}, {"updated_at", isoTime(c.updatedAt)},
                     {"settings", settings}, {"messages", messages}};
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

bool importJson(const QByteArray& json, ConversationDocument* doc, QString* error) {
    QJsonParseError parseError;
    const QJsonDocument d = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("not valid JSON: %1 at byte %2").arg(parseError.errorString()).arg(parseError.offset);
        return false;
    }
    if (!d.isObject()) {
        *error = QStringLiteral("expected a JSON object at the top level");
        return false;
    }
    const QJsonObject root = d.object();
    if (root.value("format").toString() != kFormat) {
        *error = QStringLiteral("not a Weir conversation (\"format\" should be \"%1\")").arg(kFormat);
        return false;
    }
    if (root.value("version").toInt() > kFormatVersion) {
        *error = QStringLiteral("conversation format version %1 is newer than this Weir reads (%2)")
                     .arg(root.value("version").toInt()).arg(kFormatVersion);
        return false;
    }
    if (!root.value("messages").isArray()) {
        *error = QStringLiteral("\"messages\" must be an array");
        return false;
    }
    ConversationDocument out;
    out.conversation.title = root.value("title").toString();
    out.conversation.createdAt = fromIsoTime(root.value("created_at"));
    out.conversation.updatedAt = fromIsoTime(root.value("updated_at"));
    const QJsonObject s = root.value("settings").toObject();
    ConversationSettings defaults;
    out.conversation.settings.systemPrompt = s.value("system_prompt").toString();
    out.conversation.settings.temperature = s.value("temperature").toDouble(defaults.temperature);
    out.conversation.settings.topP = s.value("top_p").toDouble(defaults.topP);
    out.conversation.settings.topK = s.value("top_k").toInt(defaults.topK);
    out.conversation.settings.maxTokens = s.value("max_tokens").toInt(defaults.maxTokens);
    out.conversation.settings.seed = qint64(s.value("seed").toDouble(double(defaults.seed)));
    out.conversation.settings.minP = s.value("min_p").toDouble(defaults.minP);
    out.conversation.settings.repeatPenalty = s.value("repeat_penalty").toDouble(defaults.repeatPenalty);
    out.conversation.settings.contextPolicy = s.value("context_policy").toString();
    out.conversation.settings.engine = s.value("engine").toString();

    const QJsonArray messages = root.value("messages").toArray();
    for (int i = 0; i < messages.size(); ++i) {
        const QJsonObject o = messages[i].toObject();
        const QString role = o.value("role").toString();
        if (role != u"user" && role != u"assistant" && role != u"system" && role != u"tool") {
            *error = QStringLiteral("message %1 has no valid \"role\" (user, assistant, system or tool)").arg(i + 1);
            return false;
        }
        if (!o.value("content").isString()) {
            *error = QStringLiteral("message %1 has no \"content\" string").arg(i + 1);
            return false;
        }
        // Version 1 has no "parent": each message follows the one before it.
        const QJsonValue parent = o.value("parent");
        int parentAt = i - 1;
        if (parent.isNull()) parentAt = -1;
        else if (!parent.isUndefined()) {
            parentAt = parent.isDouble() ? parent.toInt(-2) : -2;
            if (parentAt < 0 || parentAt >= i) {
                *error = QStringLiteral("message %1 has a \"parent\" that is not the index of an earlier message").arg(i + 1);
                return false;
            }
        }
        MessageRecord m;
        m.role = role;
        m.active = o.value("active").toBool(true);
        m.finishReason = o.value("finish_reason").toString();
        m.model = o.value("model").toString();
        m.content = o.value("content").toString();
        m.state = messageStateFromName(o.value("state").toString());
        m.error = o.value("error").toString();
        m.createdAt = fromIsoTime(o.value("created_at"));
        const QJsonObject u = o.value("usage").toObject();
        m.promptTokens = u.value("prompt_tokens").toInt();
        m.completionTokens = u.value("completion_tokens").toInt();
        m.cachedTokens = u.value("cached_tokens").toInt();
        m.tokensPerSecond = u.value("tokens_per_second").toDouble();
        m.timeToFirstTokenMs = u.value("ttft_ms").toDouble();
        m.draftTokens = u.value("draft_tokens").toInt();
        m.acceptedDraftTokens = u.value("accepted_draft_tokens").toInt();
        if (m.draftTokens < 0 || m.acceptedDraftTokens < 0 || m.acceptedDraftTokens > m.draftTokens) {
            *error = QStringLiteral("message %1: \"accepted_draft_tokens\" (%2) must be from 0 to \"draft_tokens\" (%3)")
                         .arg(i + 1).arg(m.acceptedDraftTokens).arg(m.draftTokens);
            return false;
        }
        QList<ToolCallRecord> calls;
        for (const QJsonValue& cv : o.value("tool_calls").toArray()) {
            const QJsonObject c = cv.toObject();
            if (c.value("name").toString().isEmpty()) {
                *error = QStringLiteral("a tool call of message %1 has no \"name\"").arg(i + 1);
                return false;
            }
            ToolCallRecord t;
            t.callId = c.value("id").toString();
            t.name = c.value("name").toString();
            t.arguments = c.value("arguments").toString();
            t.result = c.value("result").toString();
            t.state = c.value("state").toString(QStringLiteral("done"));
            t.durationMs = c.value("duration_ms").toDouble();
            calls.append(t);
        }
        out.messages.append(m);
        out.toolCalls.append(calls);
        out.parentIndex.append(parentAt);
    }
    *doc = out;
    return true;
}

} // namespace weir::desktop
