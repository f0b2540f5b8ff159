#include "chat/AgentTurns.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace weir::desktop {

std::string agentMessagesJson(const QString& systemPrompt, const QList<AgentTurn>& turns,
                              std::vector<qint64>* entryIds) {
    QJsonArray out;
    std::vector<qint64> ids;
    if (!systemPrompt.trimmed().isEmpty()) {
        out.append(QJsonObject{{"role", "system"}, {"content", systemPrompt.trimmed()}});
        ids.push_back(0);
    }
    for (const AgentTurn& t : turns) {
        const MessageRecord& m = t.message;
        if (m.role == u"assistant" && (m.state == MessageState::Failed || m.state == MessageState::Streaming)) continue;
        if (m.content.isEmpty() && t.calls.isEmpty()) continue;
        if (m.role == u"user" && !out.isEmpty() && out.last().toObject().value(u"role").toString() == u"user") {
            QJsonObject last = out.last().toObject();
            last.insert(QStringLiteral("content"), last.value(u"content").toString() + QStringLiteral("\n\n") + m.content);
            out.replace(out.size() - 1, last);
            continue;
        }
        QJsonObject turn{{"role", m.role}, {"content", m.content}};
        if (t.calls.isEmpty()) {
            out.append(turn);
            ids.push_back(m.id);
            continue;
        }
        QJsonArray calls;
        for (const ToolCallRecord& c : t.calls)
            calls.append(QJsonObject{{"id", c.callId}, {"type", "function"},
                                     {"function", QJsonObject{{"name", c.name},
                                                              {"arguments", c.arguments.isEmpty() ? QStringLiteral("{}") : c.arguments}}}});
        turn.insert(QStringLiteral("tool_calls"), calls);
        out.append(turn);
        ids.push_back(m.id);
        for (const ToolCallRecord& c : t.calls) {
            QString result = c.result;
            if (c.state == u"denied" && result.isEmpty()) result = QStringLiteral("The user denied this call.");
            else if (!toolCallFinished(c.state)) result = QStringLiteral("The call did not run.");
            out.append(QJsonObject{{"role", "tool"}, {"tool_call_id", c.callId}, {"name", c.name}, {"content", result}});
            ids.push_back(m.id);
        }
    }
    if (entryIds) *entryIds = std::move(ids);
    return QJsonDocument(out).toJson(QJsonDocument::Compact).toStdString();
}

QVariantMap toolCallMap(const ToolCallRecord& c) {
    return {{"id", c.id},         {"callId", c.callId}, {"name", c.name},          {"arguments", c.arguments},
            {"result", c.result}, {"state", c.state},   {"durationMs", c.durationMs}};
}

bool toolCallFinished(const QString& state) {
    return state == u"done" || state == u"failed" || state == u"denied";
}

} // namespace weir::desktop
