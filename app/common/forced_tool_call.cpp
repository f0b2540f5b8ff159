#include "app/common/forced_tool_call.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include "app/common/json_source_text.h"

namespace weir::common {

namespace {

QString jsonString(const QString& s) {
    const QByteArray a = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(a.mid(1, a.size() - 2));
}

// A reference inside tool `prefix`'s parameters, pointed into the merged $defs.
QString renamedRef(const QString& ref, const QString& prefix) {
    if (ref == QLatin1String("#")) return QStringLiteral("#/$defs/") + prefix;
    for (const QLatin1String root : {QLatin1String("#/$defs/"), QLatin1String("#/definitions/")})
        if (ref.startsWith(root)) return QStringLiteral("#/$defs/") + prefix + QStringLiteral("__") + ref.mid(root.size());
    return ref;  // the compiler names what it cannot follow
}

QJsonValue withRenamedRefs(const QJsonValue& v, const QString& prefix) {
    if (v.isArray()) {
        QJsonArray out;
        for (const QJsonValue& e : v.toArray()) out.append(withRenamedRefs(e, prefix));
        return out;
    }
    if (!v.isObject()) return v;
    QJsonObject out;
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == QLatin1String("$ref") && it->isString()) out.insert(it.key(), renamedRef(it->toString(), prefix));
        else out.insert(it.key(), withRenamedRefs(*it, prefix));
    }
    return out;
}

// {"name": "...", "arguments": {...}} as a call, its arguments in the order
// `source` (the call's text) writes them.
std::optional<ToolCall> readCall(const QJsonValue& v, QByteArrayView source) {
    const QJsonValue name = v.toObject().value(QLatin1String("name"));
    const QJsonValue args = v.toObject().value(QLatin1String("arguments"));
    if (!name.isString() || !args.isObject()) return std::nullopt;
    ToolCall call;
    call.name = name.toString().toStdString();
    const QByteArray argsText = jsonSourceText(source, {QStringLiteral("arguments")}).value_or(QByteArray());
    call.arguments = orderedJson(args, argsText).toStdString();
    return call;
}

// An array of calls cut short (max_tokens, a stop string): the text of the
// calls complete before the cut, as an array, so that they are not lost with
// the one cut; empty when there is none.
std::string completeCalls(const std::string& reply) {
    const size_t start = reply.find_first_not_of(" \t\r\n");
    if (start == std::string::npos || reply[start] != '[') return {};
    int depth = 0;
    bool inString = false, escaped = false;
    size_t lastEnd = std::string::npos;
    for (size_t i = start; i < reply.size(); ++i) {
        const char c = reply[i];
        if (inString) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if ((c == '}' || c == ']') && --depth == 1 && c == '}') {
            lastEnd = i;  // a call of the array ends here
        }
    }
    if (lastEnd == std::string::npos) return {};
    return reply.substr(start, lastEnd - start + 1) + "]";
}

} // namespace

bool forcesToolCall(const ToolChoice& choice) {
    return choice.mode == ToolChoice::Mode::Required || choice.mode == ToolChoice::Mode::Function;
}

std::string forcedCallSchema(const QJsonArray& tools, const ToolChoice& choice, bool several, QByteArrayView toolsText) {
    QStringList defs;  // "name":schema, each schema in its tool's own key order
    QStringList branches;
    for (qsizetype i = 0; i < tools.size(); ++i) {
        const QJsonObject fn = tools[i].toObject().value(QLatin1String("function")).toObject();
        const QString name = fn.value(QLatin1String("name")).toString();
        if (choice.mode == ToolChoice::Mode::Function && name.toStdString() != choice.function) continue;
        const QString prefix = QStringLiteral("weir_tool_%1").arg(i);
        const QByteArray paramsText =
            jsonSourceText(jsonItemText(toolsText, i).value_or(QByteArray()),
                           {QStringLiteral("function"), QStringLiteral("parameters")})
                .value_or(QByteArray());
        auto addDef = [&](const QString& defName, const QJsonValue& schema, QByteArrayView source) {
            defs << QString::fromUtf8(orderedJson(defName, {}) + ':' +
                                      orderedJson(withRenamedRefs(schema, prefix), source));
        };
        QJsonObject params = fn.value(QLatin1String("parameters")).toObject();
        if (params.isEmpty()) params.insert(QStringLiteral("type"), QStringLiteral("object"));  // no arguments: {}
        for (const QLatin1String key : {QLatin1String("$defs"), QLatin1String("definitions")}) {
            const QJsonObject own = params.value(key).toObject();
            const QByteArray ownText = jsonSourceText(paramsText, {key}).value_or(QByteArray());
            for (auto it = own.begin(); it != own.end(); ++it)
                addDef(prefix + QStringLiteral("__") + it.key(), *it,
                       jsonSourceText(ownText, {it.key()}).value_or(QByteArray()));
            params.remove(key);
        }
        addDef(prefix, params, paramsText);
        // Written as text: "name" must come before "arguments" (a QJsonObject sorts its keys).
        branches << QStringLiteral(R"({"type":"object","properties":{"name":{"type":"string","const":%1},)"
                                   R"("arguments":{"$ref":"#/$defs/%2"}},"required":["name","arguments"],)"
                                   R"("additionalProperties":false})")
                        .arg(jsonString(name), prefix);
    }
    QString call = branches.size() == 1 ? branches.front()
                                        : QStringLiteral(R"({"anyOf":[%1]})").arg(branches.join(QLatin1Char(',')));
    if (several && choice.mode == ToolChoice::Mode::Required)
        call = QStringLiteral(R"({"type":"array","items":%1,"minItems":1,"maxItems":%2})").arg(call).arg(kMaxForcedCalls);
    // The call's schema with the $defs beside it at the root.
    return (call.left(call.size() - 1) + QStringLiteral(R"(,"$defs":{)") + defs.join(QLatin1Char(',')) +
            QStringLiteral("}}"))
        .toStdString();
}

std::optional<std::vector<ToolCall>> readForcedCalls(const std::string& reply) {
    QJsonParseError error;
    QByteArray text = QByteArray::fromStdString(reply);
    QJsonDocument doc = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError) {
        text = QByteArray::fromStdString(completeCalls(reply));
        if (text.isEmpty()) return std::nullopt;
        doc = QJsonDocument::fromJson(text, &error);
        if (error.error != QJsonParseError::NoError) return std::nullopt;
    }
    if (doc.isObject()) {
        std::optional<ToolCall> call = readCall(doc.object(), text);
        if (!call) return std::nullopt;
        return std::vector<ToolCall>{std::move(*call)};
    }
    std::vector<ToolCall> calls;
    const QJsonArray items = doc.array();
    for (qsizetype i = 0; i < items.size(); ++i) {
        std::optional<ToolCall> call = readCall(items[i], jsonItemText(text, i).value_or(QByteArray()));
        if (!call) return std::nullopt;
        calls.push_back(std::move(*call));
    }
    if (calls.empty()) return std::nullopt;
    return calls;
}

std::optional<ToolCall> readForcedCall(const std::string& reply) {
    QJsonParseError error;
    const QByteArray text = QByteArray::fromStdString(reply);
    const QJsonDocument doc = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) return std::nullopt;
    return readCall(doc.object(), text);
}

} // namespace weir::common
