#include "app/server/anthropic_request.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "app/server/request_parser.h"

namespace weir::server {

namespace {

ApiError invalid(const QString& param, const QString& message) {
    return ApiError::invalid(param, QStringLiteral("%1: %2").arg(param, message), QStringLiteral("invalid_value"));
}

bool given(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(QLatin1String(key));
    return !v.isUndefined() && !v.isNull();
}

// A block's text, or the text of a list of text blocks (a tool_result's content).
bool textOf(const QJsonValue& v, const QString& param, QString& out, ApiError& err) {
    if (v.isString()) {
        out = v.toString();
        return true;
    }
    if (!v.isArray()) {
        err = invalid(param, QStringLiteral("expected a string or an array of text blocks."));
        return false;
    }
    const QJsonArray blocks = v.toArray();
    for (qsizetype i = 0; i < blocks.size(); ++i) {
        const QJsonObject b = blocks[i].toObject();
        const QString p = QStringLiteral("%1[%2]").arg(param).arg(i);
        if (b.value(QLatin1String("type")).toString() != QLatin1String("text") ||
            !b.value(QLatin1String("text")).isString()) {
            err = invalid(p, QStringLiteral("only text blocks ({\"type\": \"text\", \"text\": ...}) are supported here."));
            return false;
        }
        if (!out.isEmpty()) out += QLatin1Char('\n');
        out += b.value(QLatin1String("text")).toString();
    }
    return true;
}

QString compact(const QJsonValue& v) {
    if (v.isObject()) return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    if (v.isArray()) return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    return QStringLiteral("{}");
}

// One Anthropic message as one or more chat messages: a user turn's
// tool_result blocks become tool messages (before its text, as Anthropic
// orders them), an assistant turn's tool_use blocks its tool_calls.
bool readMessage(const QJsonValue& mv, const QString& p, QJsonArray& out, ApiError& err) {
    if (!mv.isObject()) {
        err = invalid(p, QStringLiteral("expected an object."));
        return false;
    }
    const QJsonObject m = mv.toObject();
    const QString role = m.value(QLatin1String("role")).toString();
    if (role != QLatin1String("user") && role != QLatin1String("assistant")) {
        err = invalid(p + QStringLiteral(".role"), QStringLiteral("expected 'user' or 'assistant'."));
        return false;
    }
    const QJsonValue content = m.value(QLatin1String("content"));
    if (content.isString()) {
        out.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), content}});
        return true;
    }
    if (!content.isArray()) {
        err = invalid(p + QStringLiteral(".content"), QStringLiteral("expected a string or an array of content blocks."));
        return false;
    }
    QString text;
    QJsonArray calls;
    const QJsonArray blocks = content.toArray();
    for (qsizetype i = 0; i < blocks.size(); ++i) {
        const QString bp = QStringLiteral("%1.content[%2]").arg(p).arg(i);
        const QJsonObject b = blocks[i].toObject();
        const QString type = b.value(QLatin1String("type")).toString();
        if (type == QLatin1String("text")) {
            if (!b.value(QLatin1String("text")).isString()) {
                err = invalid(bp + QStringLiteral(".text"), QStringLiteral("expected a string."));
                return false;
            }
            if (!text.isEmpty()) text += QLatin1Char('\n');
            text += b.value(QLatin1String("text")).toString();
        } else if (type == QLatin1String("tool_use") && role == QLatin1String("assistant")) {
            const QJsonValue id = b.value(QLatin1String("id")), name = b.value(QLatin1String("name"));
            if (!id.isString() || !name.isString()) {
                err = invalid(bp, QStringLiteral("a tool_use block needs a string 'id' and 'name'."));
                return false;
            }
            const QJsonValue input = b.value(QLatin1String("input"));
            if (!input.isUndefined() && !input.isObject()) {
                err = invalid(bp + QStringLiteral(".input"), QStringLiteral("expected an object."));
                return false;
            }
            calls.append(QJsonObject{
                {QStringLiteral("id"), id},
                {QStringLiteral("type"), QStringLiteral("function")},
                {QStringLiteral("function"),
                 QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("arguments"), compact(input)}}}});
        } else if (type == QLatin1String("tool_result") && role == QLatin1String("user")) {
            const QJsonValue id = b.value(QLatin1String("tool_use_id"));
            if (!id.isString()) {
                err = invalid(bp + QStringLiteral(".tool_use_id"), QStringLiteral("expected a string."));
                return false;
            }
            QString result;
            const QJsonValue rc = b.value(QLatin1String("content"));
            if (!rc.isUndefined() && !rc.isNull() && !textOf(rc, bp + QStringLiteral(".content"), result, err))
                return false;
            if (b.value(QLatin1String("is_error")).toBool()) result.prepend(QStringLiteral("Error: "));
            out.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                                   {QStringLiteral("tool_call_id"), id},
                                   {QStringLiteral("content"), result}});
        } else {
            err = invalid(bp + QStringLiteral(".type"),
                          QStringLiteral("'%1' blocks are not supported in %2 messages; use text%3.")
                              .arg(type.left(64), role,
                                   role == QLatin1String("user") ? QStringLiteral(" and tool_result")
                                                                 : QStringLiteral(" and tool_use")));
            return false;
        }
    }
    if (role == QLatin1String("assistant")) {
        QJsonObject a{{QStringLiteral("role"), role}, {QStringLiteral("content"), text}};
        if (!calls.isEmpty()) a.insert(QStringLiteral("tool_calls"), calls);
        out.append(a);
    } else if (!text.isEmpty() || blocks.isEmpty()) {
        out.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), text}});
    }
    return true;
}

bool readTools(const QJsonObject& o, QJsonObject& chat, ApiError& err) {
    if (given(o, "tools") && !o.value(QLatin1String("tools")).isArray()) {
        err = invalid(QStringLiteral("tools"), QStringLiteral("expected an array."));
        return false;
    }
    QJsonArray tools;
    const QJsonArray list = o.value(QLatin1String("tools")).toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString p = QStringLiteral("tools[%1]").arg(i);
        const QJsonObject t = list[i].toObject();
        const QString type = t.value(QLatin1String("type")).toString();
        if (!type.isEmpty() && type != QLatin1String("custom")) {
            err = invalid(p + QStringLiteral(".type"),
                          QStringLiteral("server tools ('%1') are not available; only client tools with an "
                                         "input_schema are.").arg(type.left(64)));
            return false;
        }
        if (!t.value(QLatin1String("input_schema")).isObject()) {
            err = invalid(p + QStringLiteral(".input_schema"), QStringLiteral("expected a JSON Schema object."));
            return false;
        }
        QJsonObject fn{{QStringLiteral("name"), t.value(QLatin1String("name"))},
                       {QStringLiteral("parameters"), t.value(QLatin1String("input_schema"))}};
        if (given(t, "description")) fn.insert(QStringLiteral("description"), t.value(QLatin1String("description")));
        tools.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("function")}, {QStringLiteral("function"), fn}});
    }
    if (!tools.isEmpty()) chat.insert(QStringLiteral("tools"), tools);
    if (!given(o, "tool_choice")) return true;
    const QJsonObject c = o.value(QLatin1String("tool_choice")).toObject();
    const QString type = c.value(QLatin1String("type")).toString();
    if (type == QLatin1String("auto") || type == QLatin1String("none"))
        chat.insert(QStringLiteral("tool_choice"), type);
    else if (type == QLatin1String("any"))
        chat.insert(QStringLiteral("tool_choice"), QStringLiteral("required"));
    else if (type == QLatin1String("tool"))
        chat.insert(QStringLiteral("tool_choice"),
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                                {QStringLiteral("function"),
                                 QJsonObject{{QStringLiteral("name"), c.value(QLatin1String("name"))}}}});
    else {
        err = invalid(QStringLiteral("tool_choice.type"), QStringLiteral("expected 'auto', 'any', 'tool' or 'none'."));
        return false;
    }
    if (c.value(QLatin1String("disable_parallel_tool_use")).toBool())
        chat.insert(QStringLiteral("parallel_tool_calls"), false);
    return true;
}

} // namespace

bool anthropicToChatBody(const QByteArray& body, QJsonObject& chat, ApiError& err, bool countOnly) {
    QJsonObject o;
    if (!parseJsonBody(body, o, err)) return false;
    chat = QJsonObject();
    QJsonArray messages;
    if (given(o, "system")) {
        QString system;
        if (!textOf(o.value(QLatin1String("system")), QStringLiteral("system"), system, err)) return false;
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")}, {QStringLiteral("content"), system}});
    }
    const QJsonValue list = o.value(QLatin1String("messages"));
    if (!list.isArray() || list.toArray().isEmpty()) {
        err = invalid(QStringLiteral("messages"), QStringLiteral("expected a non-empty array of messages."));
        return false;
    }
    const QJsonArray in = list.toArray();
    for (qsizetype i = 0; i < in.size(); ++i)
        if (!readMessage(in[i], QStringLiteral("messages[%1]").arg(i), messages, err)) return false;
    chat.insert(QStringLiteral("messages"), messages);
    if (!readTools(o, chat, err)) return false;
    // The rest has chat's meaning under the same or a similar name; the chat
    // parser checks the values.
    for (const char* key : {"model", "temperature", "top_p", "top_k", "stream"})
        if (o.contains(QLatin1String(key))) chat.insert(QLatin1String(key), o.value(QLatin1String(key)));
    // Required by the Messages API (clients always send it); counting tokens needs none.
    if (given(o, "max_tokens")) chat.insert(QStringLiteral("max_tokens"), o.value(QLatin1String("max_tokens")));
    else if (!countOnly) {
        err = invalid(QStringLiteral("max_tokens"), QStringLiteral("Field required"));
        return false;
    }
    if (given(o, "stop_sequences")) {
        if (!o.value(QLatin1String("stop_sequences")).isArray()) {
            err = invalid(QStringLiteral("stop_sequences"), QStringLiteral("expected an array of strings."));
            return false;
        }
        chat.insert(QStringLiteral("stop"), o.value(QLatin1String("stop_sequences")));
    }
    return true;
}

} // namespace weir::server
