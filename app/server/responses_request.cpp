#include "app/server/responses_request.h"

#include <QJsonArray>

#include "app/server/request_parser.h"

namespace weir::server {

namespace {

ApiError invalid(const QString& param, const QString& message) {
    return ApiError::invalid(param, QStringLiteral("Invalid value for '%1': %2").arg(param, message),
                             QStringLiteral("invalid_value"));
}

bool given(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(QLatin1String(key));
    return !v.isUndefined() && !v.isNull();
}

// A message item's content: a string, or input_text / output_text parts.
bool contentText(const QJsonValue& v, const QString& param, QString& out, ApiError& err) {
    if (v.isString()) {
        out = v.toString();
        return true;
    }
    if (!v.isArray()) {
        err = invalid(param, QStringLiteral("expected a string or an array of content parts."));
        return false;
    }
    const QJsonArray parts = v.toArray();
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QJsonObject part = parts[i].toObject();
        const QString type = part.value(QLatin1String("type")).toString();
        if ((type != QLatin1String("input_text") && type != QLatin1String("output_text")) ||
            !part.value(QLatin1String("text")).isString()) {
            err = invalid(QStringLiteral("%1[%2]").arg(param).arg(i),
                          QStringLiteral("only input_text and output_text parts with a string 'text' are supported, "
                                         "got '%1'.").arg(type.left(64)));
            return false;
        }
        if (!out.isEmpty()) out += QLatin1Char('\n');
        out += part.value(QLatin1String("text")).toString();
    }
    return true;
}

bool readInput(const QJsonValue& input, QJsonArray& messages, ApiError& err) {
    if (input.isString()) {
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("user")}, {QStringLiteral("content"), input}});
        return true;
    }
    if (!input.isArray() || input.toArray().isEmpty()) {
        err = invalid(QStringLiteral("input"), QStringLiteral("expected a string or a non-empty array of items."));
        return false;
    }
    const QJsonArray items = input.toArray();
    for (qsizetype i = 0; i < items.size(); ++i) {
        const QString p = QStringLiteral("input[%1]").arg(i);
        if (!items[i].isObject()) {
            err = invalid(p, QStringLiteral("expected an object."));
            return false;
        }
        const QJsonObject item = items[i].toObject();
        const QString type = item.value(QLatin1String("type")).toString(QStringLiteral("message"));
        if (type == QLatin1String("message")) {
            const QString role = item.value(QLatin1String("role")).toString();
            if (role != QLatin1String("user") && role != QLatin1String("assistant") && role != QLatin1String("system") &&
                role != QLatin1String("developer")) {
                err = invalid(p + QStringLiteral(".role"),
                              QStringLiteral("expected 'user', 'assistant', 'system' or 'developer'."));
                return false;
            }
            QString text;
            if (!contentText(item.value(QLatin1String("content")), p + QStringLiteral(".content"), text, err))
                return false;
            messages.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), text}});
        } else if (type == QLatin1String("function_call")) {
            const QJsonValue callId = item.value(QLatin1String("call_id")), name = item.value(QLatin1String("name"));
            const QJsonValue args = item.value(QLatin1String("arguments"));
            if (!callId.isString() || !name.isString() || !args.isString()) {
                err = invalid(p, QStringLiteral("a function_call item needs string 'call_id', 'name' and 'arguments'."));
                return false;
            }
            const QJsonObject call{{QStringLiteral("id"), callId},
                                   {QStringLiteral("type"), QStringLiteral("function")},
                                   {QStringLiteral("function"),
                                    QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("arguments"), args}}}};
            // Calls after an assistant turn belong to it (its text, its other calls).
            QJsonObject last = messages.isEmpty() ? QJsonObject() : messages.last().toObject();
            if (last.value(QLatin1String("role")).toString() == QLatin1String("assistant")) {
                QJsonArray calls = last.value(QLatin1String("tool_calls")).toArray();
                calls.append(call);
                last.insert(QStringLiteral("tool_calls"), calls);
                messages.replace(messages.size() - 1, last);
            } else {
                messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                            {QStringLiteral("content"), QString()},
                                            {QStringLiteral("tool_calls"), QJsonArray{call}}});
            }
        } else if (type == QLatin1String("function_call_output")) {
            const QJsonValue callId = item.value(QLatin1String("call_id"));
            if (!callId.isString()) {
                err = invalid(p + QStringLiteral(".call_id"), QStringLiteral("expected a string."));
                return false;
            }
            QString output;
            if (!contentText(item.value(QLatin1String("output")), p + QStringLiteral(".output"), output, err))
                return false;
            messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                                        {QStringLiteral("tool_call_id"), callId},
                                        {QStringLiteral("content"), output}});
        } else {
            err = invalid(p + QStringLiteral(".type"),
                          QStringLiteral("expected 'message', 'function_call' or 'function_call_output', but got '%1'.")
                              .arg(type.left(64)));
            return false;
        }
    }
    return true;
}

bool readTools(const QJsonObject& o, QJsonObject& chat, ApiError& err) {
    if (given(o, "tools")) {
        QJsonArray tools;
        const QJsonArray list = o.value(QLatin1String("tools")).toArray();
        for (qsizetype i = 0; i < list.size(); ++i) {
            const QJsonObject t = list[i].toObject();
            if (t.value(QLatin1String("type")).toString() != QLatin1String("function")) {
                err = invalid(QStringLiteral("tools[%1].type").arg(i),
                              QStringLiteral("only 'function' tools are supported, got '%1'.")
                                  .arg(t.value(QLatin1String("type")).toString().left(64)));
                return false;
            }
            QJsonObject fn;
            for (const char* key : {"name", "description", "parameters"})
                if (given(t, key)) fn.insert(QLatin1String(key), t.value(QLatin1String(key)));
            tools.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("function")}, {QStringLiteral("function"), fn}});
        }
        if (!tools.isEmpty()) chat.insert(QStringLiteral("tools"), tools);
    }
    if (!given(o, "tool_choice")) return true;
    const QJsonValue c = o.value(QLatin1String("tool_choice"));
    if (c.isObject()) {
        // Flat: {"type": "function", "name": ...}.
        const QJsonObject f = c.toObject();
        if (f.value(QLatin1String("type")).toString() != QLatin1String("function")) {
            err = invalid(QStringLiteral("tool_choice.type"), QStringLiteral("only 'function' is supported."));
            return false;
        }
        chat.insert(QStringLiteral("tool_choice"),
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                                {QStringLiteral("function"),
                                 QJsonObject{{QStringLiteral("name"), f.value(QLatin1String("name"))}}}});
    } else {
        chat.insert(QStringLiteral("tool_choice"), c);
    }
    return true;
}

// text.format: {"type": "text" | "json_object" | "json_schema", name, schema, strict}.
bool readTextFormat(const QJsonObject& o, QJsonObject& chat, ApiError& err) {
    const QJsonValue format = o.value(QLatin1String("text")).toObject().value(QLatin1String("format"));
    if (format.isUndefined() || format.isNull()) return true;
    if (!format.isObject()) {
        err = invalid(QStringLiteral("text.format"), QStringLiteral("expected an object."));
        return false;
    }
    const QJsonObject f = format.toObject();
    const QString type = f.value(QLatin1String("type")).toString();
    if (type == QLatin1String("json_schema")) {
        QJsonObject js;
        for (const char* key : {"name", "schema", "strict"})
            if (given(f, key)) js.insert(QLatin1String(key), f.value(QLatin1String(key)));
        chat.insert(QStringLiteral("response_format"),
                    QJsonObject{{QStringLiteral("type"), type}, {QStringLiteral("json_schema"), js}});
    } else {
        chat.insert(QStringLiteral("response_format"), QJsonObject{{QStringLiteral("type"), type}});
    }
    return true;
}

} // namespace

bool responsesToChatBody(const QByteArray& body, QJsonObject& chat, QJsonObject& echo, ApiError& err) {
    QJsonObject o;
    if (!parseJsonBody(body, o, err)) return false;
    if (given(o, "previous_response_id")) {
        err = invalid(QStringLiteral("previous_response_id"),
                      QStringLiteral("this server keeps no responses (store is off); send the whole conversation "
                                     "as input items."));
        return false;
    }
    QJsonArray messages;
    if (given(o, "instructions")) {
        if (!o.value(QLatin1String("instructions")).isString()) {
            err = invalid(QStringLiteral("instructions"), QStringLiteral("expected a string."));
            return false;
        }
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                    {QStringLiteral("content"), o.value(QLatin1String("instructions"))}});
    }
    if (!o.contains(QLatin1String("input"))) {
        err = ApiError::invalid(QStringLiteral("input"), QStringLiteral("Missing required parameter: 'input'."),
                                QStringLiteral("missing_required_parameter"));
        return false;
    }
    if (!readInput(o.value(QLatin1String("input")), messages, err)) return false;
    chat = QJsonObject{{QStringLiteral("messages"), messages}};
    if (!readTools(o, chat, err) || !readTextFormat(o, chat, err)) return false;
    for (const char* key : {"model", "temperature", "top_p", "stream", "parallel_tool_calls"})
        if (o.contains(QLatin1String(key))) chat.insert(QLatin1String(key), o.value(QLatin1String(key)));
    if (o.contains(QLatin1String("max_output_tokens")))
        chat.insert(QStringLiteral("max_tokens"), o.value(QLatin1String("max_output_tokens")));
    // What the response object repeats back.
    echo = QJsonObject();
    for (const char* key : {"instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice",
                            "text", "parallel_tool_calls", "metadata"})
        echo.insert(QLatin1String(key), o.value(QLatin1String(key)));
    return true;
}

} // namespace weir::server
