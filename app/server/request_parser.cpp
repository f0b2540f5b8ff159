#include "app/server/request_parser.h"

#include "app/common/json_source_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QJsonValue>
#include <cmath>
#include <limits>

namespace weir::server {

using common::jsonItemText;
using common::jsonSourceText;

namespace {

QString typeName(const QJsonValue& v) {
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: {
        const double d = v.toDouble();
        return d == std::floor(d) && std::abs(d) < 9.2e18 ? QStringLiteral("an integer") : QStringLiteral("a number");
    }
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    default: return QStringLiteral("an undefined value");
    }
}

ApiError wrongType(const QString& param, const QString& expected, const QJsonValue& got) {
    return ApiError::invalid(param,
                             QStringLiteral("Invalid type for '%1': expected %2, but got %3 instead.")
                                 .arg(param, expected, typeName(got)),
                             QStringLiteral("invalid_type"));
}

ApiError missing(const QString& param) {
    return ApiError::invalid(param, QStringLiteral("Missing required parameter: '%1'.").arg(param),
                             QStringLiteral("missing_required_parameter"));
}

ApiError badValue(const QString& param, const QString& why) {
    return ApiError::invalid(param, QStringLiteral("Invalid value for '%1': %2").arg(param, why),
                             QStringLiteral("invalid_value"));
}

bool present(const QJsonObject& o, const char* key) {
    const auto it = o.constFind(QLatin1String(key));
    return it != o.constEnd() && !it->isNull() && !it->isUndefined();
}

// Reads an optional number in [lo, hi].
bool number(const QJsonObject& o, const char* key, double lo, double hi, std::optional<double>& out, ApiError& err) {
    if (!present(o, key)) return true;
    const QJsonValue v = o.value(QLatin1String(key));
    const QString name = QString::fromLatin1(key);
    if (!v.isDouble()) {
        err = wrongType(name, QStringLiteral("a number"), v);
        return false;
    }
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < lo || d > hi) {
        err = badValue(name, QStringLiteral("expected a value between %1 and %2, but got %3.")
                                 .arg(lo).arg(hi).arg(d));
        return false;
    }
    out = d;
    return true;
}

// Reads an optional integer in [lo, hi].
bool integer(const QJsonObject& o, const char* key, int64_t lo, int64_t hi, std::optional<int64_t>& out,
             ApiError& err) {
    if (!present(o, key)) return true;
    const QJsonValue v = o.value(QLatin1String(key));
    const QString name = QString::fromLatin1(key);
    if (!v.isDouble() || v.toDouble() != std::floor(v.toDouble()) || !std::isfinite(v.toDouble())) {
        err = wrongType(name, QStringLiteral("an integer"), v);
        return false;
    }
    const double d = v.toDouble();
    if (d < double(lo) || d > double(hi)) {
        err = badValue(name, QStringLiteral("expected a value between %1 and %2, but got %3.")
                                 .arg(lo).arg(hi).arg(v.toVariant().toString()));
        return false;
    }
    out = v.toInteger(int64_t(d));
    return true;
}

bool boolean(const QJsonObject& o, const char* key, bool& out, ApiError& err) {
    if (!present(o, key)) return true;
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isBool()) {
        err = wrongType(QString::fromLatin1(key), QStringLiteral("a boolean"), v);
        return false;
    }
    out = v.toBool();
    return true;
}

bool parseObject(const QByteArray& body, QJsonObject& out, ApiError& err) {
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &pe);
    if (pe.error != QJsonParseError::NoError) {
        err = ApiError::invalid({}, QStringLiteral("The request body is not valid JSON: %1 at offset %2.")
                                        .arg(pe.errorString())
                                        .arg(pe.offset));
        return false;
    }
    if (!doc.isObject()) {
        err = ApiError::invalid({}, QStringLiteral("The request body must be a JSON object."));
        return false;
    }
    out = doc.object();
    return true;
}

// Optional, as in llama.cpp's and vLLM's servers: the served model when absent.
bool readModel(const QJsonObject& o, QString& model, ApiError& err) {
    if (!present(o, "model")) return true;
    const QJsonValue v = o.value(QLatin1String("model"));
    if (!v.isString()) {
        err = wrongType(QStringLiteral("model"), QStringLiteral("a string"), v);
        return false;
    }
    model = v.toString();
    return true;
}

// logit_bias: {"token id": bias in [-100, 100]}; the ids are checked against
// the vocabulary later, where the model is known.
bool readLogitBias(const QJsonObject& o, std::vector<LogitBias>& out, ApiError& err) {
    if (!present(o, "logit_bias")) return true;
    const QJsonValue v = o.value(QLatin1String("logit_bias"));
    if (!v.isObject()) {
        err = wrongType(QStringLiteral("logit_bias"), QStringLiteral("an object of token ids to numbers"), v);
        return false;
    }
    const QJsonObject map = v.toObject();
    if (map.size() > kMaxLogitBias) {
        err = badValue(QStringLiteral("logit_bias"),
                       QStringLiteral("at most %1 tokens may be biased, got %2.").arg(kMaxLogitBias).arg(map.size()));
        return false;
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
        bool ok = false;
        const qlonglong id = it.key().toLongLong(&ok);
        if (!ok || id < 0 || id > std::numeric_limits<int32_t>::max() || QString::number(id) != it.key()) {
            err = badValue(QStringLiteral("logit_bias"),
                           QStringLiteral("'%1' is not a token id (a non-negative integer).").arg(it.key().left(64)));
            return false;
        }
        const QJsonValue b = it.value();
        if (!b.isDouble() || !std::isfinite(b.toDouble()) || b.toDouble() < -100 || b.toDouble() > 100) {
            err = badValue(QStringLiteral("logit_bias"),
                           QStringLiteral("the bias of token %1 must be a number between -100 and 100.").arg(id));
            return false;
        }
        out.push_back(LogitBias{int32_t(id), float(b.toDouble())});
    }
    return true;
}

// Chat: "logprobs": bool and "top_logprobs": 0..20; completions: "logprobs": 0..5.
bool readLogprobs(const QJsonObject& o, bool chat, GenerationFields& g, ApiError& err) {
    if (chat) {
        if (!boolean(o, "logprobs", g.logprobs, err)) return false;
        std::optional<int64_t> top;
        if (!integer(o, "top_logprobs", 0, kMaxTopLogprobs, top, err)) return false;
        if (top && !g.logprobs) {
            err = badValue(QStringLiteral("top_logprobs"), QStringLiteral("top_logprobs needs 'logprobs': true."));
            return false;
        }
        g.topLogprobs = int(top.value_or(0));
        return true;
    }
    std::optional<int64_t> n;
    if (!integer(o, "logprobs", 0, kMaxCompletionLogprobs, n, err)) return false;
    g.logprobs = n.has_value();
    g.topLogprobs = int(n.value_or(0));
    return true;
}

bool readGeneration(const QJsonObject& o, bool chat, GenerationFields& g, ApiError& err) {
    std::optional<int64_t> maxTokens, maxCompletion, n, seed, topK;
    if (!integer(o, "max_tokens", 1, std::numeric_limits<int32_t>::max(), maxTokens, err)) return false;
    if (!integer(o, "max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), maxCompletion, err)) return false;
    g.maxTokens = maxCompletion ? maxCompletion : maxTokens;
    if (!integer(o, "n", 1, kMaxChoicesPerPrompt, n, err)) return false;
    g.n = int(n.value_or(1));
    if (!readLogprobs(o, chat, g, err)) return false;
    if (!readLogitBias(o, g.sampling.logitBias, err)) return false;
    std::optional<double> temperature, topP, minP, presence, frequency, repeat;
    if (!number(o, "temperature", 0.0, 2.0, temperature, err)) return false;
    if (!number(o, "top_p", 0.0, 1.0, topP, err)) return false;
    if (!number(o, "min_p", 0.0, 1.0, minP, err)) return false;
    if (!number(o, "presence_penalty", -2.0, 2.0, presence, err)) return false;
    if (!number(o, "frequency_penalty", -2.0, 2.0, frequency, err)) return false;
    if (!number(o, "repeat_penalty", 0.0, 10.0, repeat, err)) return false;
    if (!integer(o, "top_k", 0, 1 << 20, topK, err)) return false;
    if (!integer(o, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), seed, err))
        return false;
    if (temperature) g.sampling.temperature = float(*temperature);
    if (topP) g.sampling.topP = float(*topP);
    if (minP) g.sampling.minP = float(*minP);
    if (presence) g.sampling.presencePenalty = float(*presence);
    if (frequency) g.sampling.frequencyPenalty = float(*frequency);
    if (repeat) g.sampling.repeatPenalty = float(*repeat);
    if (topK) g.sampling.topK = int32_t(*topK);
    if (seed) {
        g.sampling.seed = uint64_t(*seed);
        g.seedGiven = true;
    }

    if (present(o, "stop")) {
        const QJsonValue v = o.value(QLatin1String("stop"));
        QJsonArray list;
        if (v.isString()) list.append(v);
        else if (v.isArray()) list = v.toArray();
        else {
            err = wrongType(QStringLiteral("stop"), QStringLiteral("a string or an array of strings"), v);
            return false;
        }
        if (list.size() > kMaxStopStrings) {
            err = badValue(QStringLiteral("stop"), QStringLiteral("at most %1 stop sequences are allowed, got %2.")
                                                       .arg(kMaxStopStrings)
                                                       .arg(list.size()));
            return false;
        }
        for (qsizetype i = 0; i < list.size(); ++i) {
            const QString param = QStringLiteral("stop[%1]").arg(i);
            if (!list[i].isString()) {
                err = wrongType(param, QStringLiteral("a string"), list[i]);
                return false;
            }
            const std::string s = list[i].toString().toStdString();
            if (s.size() > size_t(kMaxStopBytes)) {
                err = badValue(param, QStringLiteral("a stop sequence may be at most %1 bytes long.").arg(kMaxStopBytes));
                return false;
            }
            if (!s.empty()) g.stop.push_back(s);
        }
    }
    if (!boolean(o, "stream", g.stream, err)) return false;
    if (!boolean(o, "ignore_eos", g.ignoreEos, err)) return false;
    if (present(o, "stream_options")) {
        const QJsonValue so = o.value(QLatin1String("stream_options"));
        if (!so.isObject()) {
            err = wrongType(QStringLiteral("stream_options"), QStringLiteral("an object"), so);
            return false;
        }
        const QJsonValue iu = so.toObject().value(QLatin1String("include_usage"));
        if (!iu.isUndefined() && !iu.isNull()) {
            if (!iu.isBool()) {
                err = wrongType(QStringLiteral("stream_options.include_usage"), QStringLiteral("a boolean"), iu);
                return false;
            }
            g.includeUsage = iu.toBool();
        }
    }
    return true;
}

// Message content: a string, null, or a list of text parts (joined).
bool readContent(const QJsonValue& v, const QString& param, bool nullAllowed, std::string& out, ApiError& err) {
    if (v.isString()) {
        out = v.toString().toStdString();
        return true;
    }
    if (v.isNull() || v.isUndefined()) {
        if (nullAllowed) return true;
        err = v.isUndefined() ? missing(param) : wrongType(param, QStringLiteral("a string or an array of content parts"), v);
        return false;
    }
    if (!v.isArray()) {
        err = wrongType(param, QStringLiteral("a string or an array of content parts"), v);
        return false;
    }
    const QJsonArray parts = v.toArray();
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QString pp = QStringLiteral("%1[%2]").arg(param).arg(i);
        if (!parts[i].isObject()) {
            err = wrongType(pp, QStringLiteral("an object"), parts[i]);
            return false;
        }
        const QJsonObject part = parts[i].toObject();
        const QJsonValue type = part.value(QLatin1String("type"));
        if (!type.isString()) {
            err = type.isUndefined() ? missing(pp + QStringLiteral(".type"))
                                     : wrongType(pp + QStringLiteral(".type"), QStringLiteral("a string"), type);
            return false;
        }
        if (type.toString() != QLatin1String("text") && type.toString() != QLatin1String("input_text")) {
            err = badValue(pp + QStringLiteral(".type"),
                           QStringLiteral("only text content parts are supported, got '%1'.").arg(type.toString()));
            return false;
        }
        const QJsonValue text = part.value(QLatin1String("text"));
        if (!text.isString()) {
            err = text.isUndefined() ? missing(pp + QStringLiteral(".text"))
                                     : wrongType(pp + QStringLiteral(".text"), QStringLiteral("a string"), text);
            return false;
        }
        if (!out.empty()) out += "\n";
        out += text.toString().toStdString();
    }
    return true;
}

bool readToolCalls(const QJsonValue& v, const QString& param, QJsonArray& out, ApiError& err) {
    if (!v.isArray()) {
        err = wrongType(param, QStringLiteral("an array"), v);
        return false;
    }
    out = QJsonArray();
    const QJsonArray calls = v.toArray();
    for (qsizetype i = 0; i < calls.size(); ++i) {
        const QString p = QStringLiteral("%1[%2]").arg(param).arg(i);
        if (!calls[i].isObject()) {
            err = wrongType(p, QStringLiteral("an object"), calls[i]);
            return false;
        }
        const QJsonObject c = calls[i].toObject();
        const QJsonValue id = c.value(QLatin1String("id"));
        if (!id.isUndefined() && !id.isNull() && !id.isString()) {
            err = wrongType(p + QStringLiteral(".id"), QStringLiteral("a string"), id);
            return false;
        }
        const QJsonValue type = c.value(QLatin1String("type"));
        if (!type.isUndefined() && !type.isNull() && type != QJsonValue(QStringLiteral("function"))) {
            err = badValue(p + QStringLiteral(".type"), QStringLiteral("only 'function' tool calls are supported."));
            return false;
        }
        const QJsonValue fnv = c.value(QLatin1String("function"));
        if (!fnv.isObject()) {
            err = fnv.isUndefined() ? missing(p + QStringLiteral(".function"))
                                    : wrongType(p + QStringLiteral(".function"), QStringLiteral("an object"), fnv);
            return false;
        }
        const QJsonObject fn = fnv.toObject();
        const QJsonValue name = fn.value(QLatin1String("name"));
        if (!name.isString() || name.toString().isEmpty()) {
            err = name.isUndefined() ? missing(p + QStringLiteral(".function.name"))
                                     : wrongType(p + QStringLiteral(".function.name"), QStringLiteral("a non-empty string"), name);
            return false;
        }
        const QJsonValue args = fn.value(QLatin1String("arguments"));
        std::string argsText = "{}";
        if (args.isString()) argsText = args.toString().toStdString();
        else if (args.isObject()) argsText = QJsonDocument(args.toObject()).toJson(QJsonDocument::Compact).toStdString();
        else if (!args.isUndefined() && !args.isNull()) {
            err = wrongType(p + QStringLiteral(".function.arguments"), QStringLiteral("a string"), args);
            return false;
        }
        QJsonObject f;
        f.insert(QStringLiteral("name"), name.toString());
        f.insert(QStringLiteral("arguments"), QString::fromStdString(argsText));
        QJsonObject call;
        call.insert(QStringLiteral("id"), id.isString() ? id.toString() : QStringLiteral("call_%1").arg(i));
        call.insert(QStringLiteral("type"), QStringLiteral("function"));
        call.insert(QStringLiteral("function"), f);
        out.append(call);
    }
    return true;
}

bool readMessages(const QJsonObject& o, QJsonArray& out, ApiError& err) {
    if (!o.contains(QLatin1String("messages"))) {
        err = missing(QStringLiteral("messages"));
        return false;
    }
    const QJsonValue mv = o.value(QLatin1String("messages"));
    if (!mv.isArray()) {
        err = wrongType(QStringLiteral("messages"), QStringLiteral("an array"), mv);
        return false;
    }
    const QJsonArray list = mv.toArray();
    if (list.isEmpty()) {
        err = badValue(QStringLiteral("messages"), QStringLiteral("expected at least one message."));
        return false;
    }
    if (list.size() > kMaxMessages) {
        err = badValue(QStringLiteral("messages"), QStringLiteral("at most %1 messages are allowed.").arg(kMaxMessages));
        return false;
    }
    out = QJsonArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString p = QStringLiteral("messages[%1]").arg(i);
        if (!list[i].isObject()) {
            err = wrongType(p, QStringLiteral("an object"), list[i]);
            return false;
        }
        const QJsonObject m = list[i].toObject();
        const QJsonValue rv = m.value(QLatin1String("role"));
        if (!rv.isString()) {
            err = rv.isUndefined() ? missing(p + QStringLiteral(".role"))
                                   : wrongType(p + QStringLiteral(".role"), QStringLiteral("a string"), rv);
            return false;
        }
        QString role = rv.toString();
        if (role == QLatin1String("developer")) role = QStringLiteral("system");
        if (role != QLatin1String("system") && role != QLatin1String("user") && role != QLatin1String("assistant") &&
            role != QLatin1String("tool")) {
            err = badValue(p + QStringLiteral(".role"),
                           QStringLiteral("expected one of 'system', 'developer', 'user', 'assistant', 'tool', but got '%1'.")
                               .arg(role.left(64)));
            return false;
        }
        QJsonObject d;
        d.insert(QStringLiteral("role"), role);
        const bool isAssistant = role == QLatin1String("assistant");
        std::string content;
        QJsonArray calls;
        const QJsonValue tc = m.value(QLatin1String("tool_calls"));
        if (isAssistant && !tc.isUndefined() && !tc.isNull()) {
            if (!readToolCalls(tc, p + QStringLiteral(".tool_calls"), calls, err)) return false;
        }
        const bool hasCalls = !calls.isEmpty();
        if (!readContent(m.value(QLatin1String("content")), p + QStringLiteral(".content"), isAssistant, content, err))
            return false;
        d.insert(QStringLiteral("content"), QString::fromStdString(content));
        if (hasCalls) d.insert(QStringLiteral("tool_calls"), calls);
        if (role == QLatin1String("tool")) {
            const QJsonValue id = m.value(QLatin1String("tool_call_id"));
            if (!id.isString()) {
                err = id.isUndefined() ? missing(p + QStringLiteral(".tool_call_id"))
                                       : wrongType(p + QStringLiteral(".tool_call_id"), QStringLiteral("a string"), id);
                return false;
            }
            d.insert(QStringLiteral("tool_call_id"), id.toString());
        }
        const QJsonValue name = m.value(QLatin1String("name"));
        if (!name.isUndefined() && !name.isNull()) {
            if (!name.isString()) {
                err = wrongType(p + QStringLiteral(".name"), QStringLiteral("a string"), name);
                return false;
            }
            d.insert(QStringLiteral("name"), name.toString());
        }
        out.append(d);
    }
    return true;
}

bool validFunctionName(const QString& n) {
    if (n.isEmpty() || n.size() > 64) return false;
    for (QChar c : n)
        if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != QLatin1Char('_') && c != QLatin1Char('-') &&
            c != QLatin1Char('.'))
            return false;
    return true;
}

bool readTools(const QJsonObject& o, ChatRequest& out, ApiError& err) {
    QStringList names;
    if (present(o, "tools")) {
        const QJsonValue tv = o.value(QLatin1String("tools"));
        if (!tv.isArray()) {
            err = wrongType(QStringLiteral("tools"), QStringLiteral("an array"), tv);
            return false;
        }
        const QJsonArray tools = tv.toArray();
        if (tools.size() > kMaxTools) {
            err = badValue(QStringLiteral("tools"), QStringLiteral("at most %1 tools are allowed.").arg(kMaxTools));
            return false;
        }
        for (qsizetype i = 0; i < tools.size(); ++i) {
            const QString p = QStringLiteral("tools[%1]").arg(i);
            if (!tools[i].isObject()) {
                err = wrongType(p, QStringLiteral("an object"), tools[i]);
                return false;
            }
            const QJsonObject t = tools[i].toObject();
            const QJsonValue type = t.value(QLatin1String("type"));
            if (type != QJsonValue(QStringLiteral("function"))) {
                err = type.isUndefined() ? missing(p + QStringLiteral(".type"))
                                         : badValue(p + QStringLiteral(".type"), QStringLiteral("only 'function' tools are supported."));
                return false;
            }
            const QJsonValue fv = t.value(QLatin1String("function"));
            if (!fv.isObject()) {
                err = fv.isUndefined() ? missing(p + QStringLiteral(".function"))
                                       : wrongType(p + QStringLiteral(".function"), QStringLiteral("an object"), fv);
                return false;
            }
            const QJsonObject f = fv.toObject();
            const QJsonValue name = f.value(QLatin1String("name"));
            if (!name.isString()) {
                err = name.isUndefined() ? missing(p + QStringLiteral(".function.name"))
                                         : wrongType(p + QStringLiteral(".function.name"), QStringLiteral("a string"), name);
                return false;
            }
            if (!validFunctionName(name.toString())) {
                err = badValue(p + QStringLiteral(".function.name"),
                               QStringLiteral("a function name must be 1 to 64 characters of a-z, A-Z, 0-9, '_', '-' or '.'."));
                return false;
            }
            if (names.contains(name.toString())) {
                err = badValue(p + QStringLiteral(".function.name"),
                               QStringLiteral("the function name '%1' is used twice.").arg(name.toString()));
                return false;
            }
            names << name.toString();
            const QJsonValue desc = f.value(QLatin1String("description"));
            if (!desc.isUndefined() && !desc.isNull() && !desc.isString()) {
                err = wrongType(p + QStringLiteral(".function.description"), QStringLiteral("a string"), desc);
                return false;
            }
            const QJsonValue params = f.value(QLatin1String("parameters"));
            if (!params.isUndefined() && !params.isNull() && !params.isObject()) {
                err = wrongType(p + QStringLiteral(".function.parameters"), QStringLiteral("an object"), params);
                return false;
            }
        }
        out.tools = tools;
    }
    if (present(o, "tool_choice")) {
        const QJsonValue c = o.value(QLatin1String("tool_choice"));
        if (c.isString()) {
            const QString s = c.toString();
            if (s == QLatin1String("none")) out.toolChoice.mode = ToolChoice::Mode::None;
            else if (s == QLatin1String("auto")) out.toolChoice.mode = ToolChoice::Mode::Auto;
            else if (s == QLatin1String("required")) out.toolChoice.mode = ToolChoice::Mode::Required;
            else {
                err = badValue(QStringLiteral("tool_choice"),
                               QStringLiteral("expected 'none', 'auto', 'required' or a function, but got '%1'.").arg(s.left(64)));
                return false;
            }
        } else if (c.isObject()) {
            const QJsonValue fn = c.toObject().value(QLatin1String("function"));
            const QJsonValue name = fn.toObject().value(QLatin1String("name"));
            if (!fn.isObject() || !name.isString()) {
                err = wrongType(QStringLiteral("tool_choice.function.name"), QStringLiteral("a string"), name);
                return false;
            }
            if (!names.contains(name.toString())) {
                err = badValue(QStringLiteral("tool_choice.function.name"),
                               QStringLiteral("no tool named '%1' was given.").arg(name.toString().left(64)));
                return false;
            }
            out.toolChoice.mode = ToolChoice::Mode::Function;
            out.toolChoice.function = name.toString().toStdString();
        } else {
            err = wrongType(QStringLiteral("tool_choice"), QStringLiteral("a string or an object"), c);
            return false;
        }
        if (out.toolChoice.mode != ToolChoice::Mode::None && out.toolChoice.mode != ToolChoice::Mode::Auto &&
            names.isEmpty()) {
            err = badValue(QStringLiteral("tool_choice"), QStringLiteral("a tool choice needs tools."));
            return false;
        }
    }
    if (!boolean(o, "parallel_tool_calls", out.parallelToolCalls, err)) return false;
    return true;
}

// response_format: free text, any JSON object (or, with "schema", JSON
// Schema), or JSON Schema (strict or not, the output is constrained either
// way, as llama.cpp and vLLM do).
bool readResponseFormat(const QJsonObject& o, OutputConstraint& out, ApiError& err) {
    if (!present(o, "response_format")) return true;
    const QJsonValue rf = o.value(QLatin1String("response_format"));
    if (!rf.isObject()) {
        err = wrongType(QStringLiteral("response_format"), QStringLiteral("an object"), rf);
        return false;
    }
    const QJsonValue type = rf.toObject().value(QLatin1String("type"));
    if (!type.isString()) {
        err = type.isUndefined() ? missing(QStringLiteral("response_format.type"))
                                 : wrongType(QStringLiteral("response_format.type"), QStringLiteral("a string"), type);
        return false;
    }
    const QString t = type.toString();
    if (t == QLatin1String("text")) {
        out = {};
    } else if (t == QLatin1String("json_object")) {
        // llama.cpp's extension: a schema beside json_object holds the reply to it, as json_schema does.
        const QJsonValue schema = rf.toObject().value(QLatin1String("schema"));
        if (schema.isUndefined() || schema.isNull()) {
            out = {OutputConstraint::Kind::JsonObject, {}};
        } else if (schema.isObject()) {
            out = {OutputConstraint::Kind::JsonSchema,
                   QJsonDocument(schema.toObject()).toJson(QJsonDocument::Compact).toStdString()};
        } else {
            err = wrongType(QStringLiteral("response_format.schema"), QStringLiteral("an object (a JSON Schema)"), schema);
            return false;
        }
    } else if (t == QLatin1String("json_schema")) {
        const QJsonValue js = rf.toObject().value(QLatin1String("json_schema"));
        if (!js.isObject()) {
            err = js.isUndefined() ? missing(QStringLiteral("response_format.json_schema"))
                                   : wrongType(QStringLiteral("response_format.json_schema"), QStringLiteral("an object"), js);
            return false;
        }
        const QJsonValue name = js.toObject().value(QLatin1String("name"));
        if (!name.isUndefined() && !name.isString()) {
            err = wrongType(QStringLiteral("response_format.json_schema.name"), QStringLiteral("a string"), name);
            return false;
        }
        const QJsonValue schema = js.toObject().value(QLatin1String("schema"));
        if (schema.isUndefined() || schema.isNull()) {
            out = {OutputConstraint::Kind::JsonObject, {}};  // no schema: any object
        } else if (schema.isObject()) {
            out = {OutputConstraint::Kind::JsonSchema,
                   QJsonDocument(schema.toObject()).toJson(QJsonDocument::Compact).toStdString()};
        } else {
            err = wrongType(QStringLiteral("response_format.json_schema.schema"), QStringLiteral("an object"), schema);
            return false;
        }
    } else {
        err = badValue(QStringLiteral("response_format.type"),
                       QStringLiteral("expected 'text', 'json_object' or 'json_schema', but got '%1'.").arg(t.left(64)));
        return false;
    }
    return true;
}

} // namespace

bool parseJsonBody(const QByteArray& body, QJsonObject& out, ApiError& err) { return parseObject(body, out, err); }

bool parseChatRequest(const QByteArray& body, ChatRequest& out, ApiError& err) {
    QJsonObject o;
    if (!parseObject(body, o, err) || !parseChatObject(o, out, err)) return false;
    const QJsonObject rf = o.value(QLatin1String("response_format")).toObject();
    const bool underJsonSchema = rf.value(QLatin1String("type")).toString() == QLatin1String("json_schema");
    keepSchemaOrder(body,
                    underJsonSchema ? QStringList{QStringLiteral("response_format"), QStringLiteral("json_schema"),
                                                  QStringLiteral("schema")}
                                    : QStringList{QStringLiteral("response_format"), QStringLiteral("schema")},
                    out.responseFormat);
    if (!out.tools.isEmpty()) out.toolsText = jsonSourceText(body, {QStringLiteral("tools")}).value_or(QByteArray());
    return true;
}

void keepSchemaOrder(const QByteArray& body, const QStringList& path, OutputConstraint& constraint) {
    if (constraint.kind != OutputConstraint::Kind::JsonSchema) return;
    if (std::optional<QByteArray> text = jsonSourceText(body, path)) constraint.schema = text->toStdString();
}

void keepToolsOrder(const QByteArray& body, const QString& schemaKey, ChatRequest& request) {
    const QByteArray tools = jsonSourceText(body, {QStringLiteral("tools")}).value_or(QByteArray());
    QByteArray out = "[";
    for (qsizetype i = 0; i < request.tools.size(); ++i) {
        const QByteArray item = jsonItemText(tools, i).value_or(QByteArray());
        if (i > 0) out += ',';
        out += R"({"function":{"parameters":)" + jsonSourceText(item, {schemaKey}).value_or("{}") + "}}";
    }
    request.toolsText = out + ']';
}

bool parseChatObject(const QJsonObject& o, ChatRequest& out, ApiError& err) {
    return readModel(o, out.model, err) && readMessages(o, out.messages, err) && readTools(o, out, err) &&
           readGeneration(o, true, out.gen, err) && readResponseFormat(o, out.responseFormat, err);
}

bool parseCompletionRequest(const QByteArray& body, CompletionRequest& out, ApiError& err) {
    QJsonObject o;
    if (!parseObject(body, o, err)) return false;
    if (!readModel(o, out.model, err)) return false;
    if (!o.contains(QLatin1String("prompt"))) {
        err = missing(QStringLiteral("prompt"));
        return false;
    }
    const QJsonValue pv = o.value(QLatin1String("prompt"));
    const QString expected = QStringLiteral("a string, an array of strings, an array of token ids or an array of those");
    auto tokens = [&](const QJsonArray& a, const QString& param) -> bool {
        CompletionPrompt p;
        p.isTokens = true;
        for (qsizetype i = 0; i < a.size(); ++i) {
            const double d = a[i].toDouble(-1);
            if (!a[i].isDouble() || d != std::floor(d) || d < 0 || d > double(std::numeric_limits<int32_t>::max())) {
                err = wrongType(QStringLiteral("%1[%2]").arg(param).arg(i), QStringLiteral("a token id (an integer >= 0)"), a[i]);
                return false;
            }
            p.tokens.push_back(int32_t(d));
        }
        if (p.tokens.empty()) {
            err = badValue(param, QStringLiteral("the prompt has no tokens."));
            return false;
        }
        out.prompts.push_back(std::move(p));
        return true;
    };
    if (pv.isString()) {
        out.prompts.push_back(CompletionPrompt{pv.toString().toStdString(), {}, false});
    } else if (pv.isArray() && !pv.toArray().isEmpty() && pv.toArray()[0].isDouble()) {
        if (!tokens(pv.toArray(), QStringLiteral("prompt"))) return false;
    } else if (pv.isArray() && !pv.toArray().isEmpty()) {
        // Several prompts: strings or token-id arrays.
        const QJsonArray a = pv.toArray();
        if (a.size() > kMaxPrompts) {
            err = badValue(QStringLiteral("prompt"),
                           QStringLiteral("at most %1 prompts per request are allowed, got %2.").arg(kMaxPrompts).arg(a.size()));
            return false;
        }
        for (qsizetype i = 0; i < a.size(); ++i) {
            const QString param = QStringLiteral("prompt[%1]").arg(i);
            if (a[i].isString()) out.prompts.push_back(CompletionPrompt{a[i].toString().toStdString(), {}, false});
            else if (a[i].isArray()) {
                if (!tokens(a[i].toArray(), param)) return false;
            } else {
                err = wrongType(param, QStringLiteral("a string or an array of token ids"), a[i]);
                return false;
            }
        }
    } else {
        err = wrongType(QStringLiteral("prompt"), expected, pv);
        return false;
    }
    if (!boolean(o, "echo", out.echo, err)) return false;
    if (!boolean(o, "skip_special_tokens", out.skipSpecialTokens, err)) return false;
    if (!readGeneration(o, false, out.gen, err)) return false;
    if (!out.gen.maxTokens) out.gen.maxTokens = 16;  // OpenAI's default for completions
    if (present(o, "suffix")) {
        const QJsonValue sv = o.value(QLatin1String("suffix"));
        if (!sv.isString()) {
            err = wrongType(QStringLiteral("suffix"), QStringLiteral("a string"), sv);
            return false;
        }
        for (const CompletionPrompt& p : out.prompts)
            if (p.isTokens) {
                err = badValue(QStringLiteral("suffix"), QStringLiteral("a suffix needs a text prompt, not token ids."));
                return false;
            }
        out.suffix = sv.toString().toStdString();
    }
    if (present(o, "best_of")) {
        std::optional<int64_t> bestOf;
        if (!integer(o, "best_of", 1, 1, bestOf, err)) return false;
    }
    return true;
}

} // namespace weir::server
