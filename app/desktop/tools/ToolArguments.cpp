#include "tools/ToolArguments.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <cmath>

namespace weir::desktop {
namespace {

QString typeName(const QJsonValue& v) {
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    default: return QStringLiteral("nothing");
    }
}

bool hasType(const QJsonValue& v, const QString& type) {
    if (type == u"object") return v.isObject();
    if (type == u"string") return v.isString();
    if (type == u"number") return v.isDouble();
    if (type == u"integer") return v.isDouble() && std::floor(v.toDouble()) == v.toDouble();
    if (type == u"boolean") return v.isBool();
    if (type == u"array") return v.isArray();
    if (type == u"null") return v.isNull();
    return true;  // a type this checker does not know: the tool decides
}

QString check(const QJsonValue& v, const QJsonObject& schema, const QString& where) {
    const QJsonValue type = schema.value(u"type");
    if (type.isString() && !hasType(v, type.toString()))
        return QStringLiteral("%1: expected %2, got %3").arg(where, type.toString(), typeName(v));
    if (type.isArray()) {
        bool any = false;
        for (const QJsonValue& t : type.toArray()) any = any || hasType(v, t.toString());
        if (!any) return QStringLiteral("%1: %2 is not among the allowed types").arg(where, typeName(v));
    }
    if (schema.contains(u"enum") && !schema.value(u"enum").toArray().contains(v)) {
        QStringList allowed;
        for (const QJsonValue& e : schema.value(u"enum").toArray())
            allowed << QString::fromUtf8(QJsonDocument(QJsonArray{e}).toJson(QJsonDocument::Compact)).mid(1).chopped(1);
        return QStringLiteral("%1: must be one of %2").arg(where, allowed.join(u", "));
    }
    if (v.isObject()) {
        const QJsonObject obj = v.toObject();
        const QJsonObject props = schema.value(u"properties").toObject();
        for (const QJsonValue& r : schema.value(u"required").toArray())
            if (!obj.contains(r.toString())) return QStringLiteral("%1.%2: required, missing").arg(where, r.toString());
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (props.contains(it.key())) {
                const QString problem = check(it.value(), props.value(it.key()).toObject(), where + u'.' + it.key());
                if (!problem.isEmpty()) return problem;
            } else if (schema.value(u"additionalProperties") == QJsonValue(false)) {
                return QStringLiteral("%1.%2: not a known argument").arg(where, it.key());
            }
        }
    }
    if (v.isArray() && schema.value(u"items").isObject()) {
        const QJsonArray items = v.toArray();
        for (qsizetype i = 0; i < items.size(); ++i) {
            const QString problem = check(items[i], schema.value(u"items").toObject(), QStringLiteral("%1[%2]").arg(where).arg(i));
            if (!problem.isEmpty()) return problem;
        }
    }
    return {};
}

} // namespace

QString validateArguments(const QJsonValue& arguments, const QJsonObject& schema) {
    return check(arguments, schema, QStringLiteral("arguments"));
}

bool parseArguments(const QString& text, QJsonObject* out, QString* error) {
    if (text.trimmed().isEmpty()) {
        *out = {};
        return true;
    }
    QJsonParseError e;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &e);
    if (e.error != QJsonParseError::NoError) {
        *error = QStringLiteral("the arguments are not JSON (%1 at offset %2)").arg(e.errorString()).arg(e.offset);
        return false;
    }
    if (!doc.isObject()) {
        *error = QStringLiteral("the arguments must be a JSON object");
        return false;
    }
    *out = doc.object();
    return true;
}

} // namespace weir::desktop
