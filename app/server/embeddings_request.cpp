#include "app/server/embeddings_request.h"

#include <QJsonArray>
#include <QJsonObject>
#include <cmath>
#include <limits>

namespace weir::server {

namespace {

ApiError invalid(const QString& param, const QString& why, const char* code = "invalid_value") {
    return ApiError::invalid(param, QStringLiteral("Invalid value for '%1': %2").arg(param, why), QLatin1String(code));
}

bool tokenIds(const QJsonArray& a, const QString& param, CompletionPrompt& out, ApiError& err) {
    out.isTokens = true;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const double d = a[i].toDouble(-1);
        if (!a[i].isDouble() || d != std::floor(d) || d < 0 || d > double(std::numeric_limits<int32_t>::max())) {
            err = invalid(QStringLiteral("%1[%2]").arg(param).arg(i), QStringLiteral("expected a token id (an integer >= 0)."),
                          "invalid_type");
            return false;
        }
        out.tokens.push_back(int32_t(d));
    }
    if (out.tokens.empty()) {
        err = invalid(param, QStringLiteral("an input has no tokens."));
        return false;
    }
    return true;
}

bool text(const QJsonValue& v, const QString& param, CompletionPrompt& out, ApiError& err) {
    out.text = v.toString().toStdString();
    if (out.text.empty()) {
        err = invalid(param, QStringLiteral("an input must not be an empty string."));
        return false;
    }
    return true;
}

} // namespace

bool parseEmbeddingsRequest(const QByteArray& body, EmbeddingsRequest& out, ApiError& err) {
    QJsonObject o;
    if (!parseJsonBody(body, o, err)) return false;
    const QJsonValue model = o.value(QLatin1String("model"));
    if (model.isString()) out.model = model.toString();
    else if (!model.isUndefined() && !model.isNull()) {
        err = invalid(QStringLiteral("model"), QStringLiteral("expected a string."), "invalid_type");
        return false;
    }
    const QJsonValue dims = o.value(QLatin1String("dimensions"));
    if (!dims.isUndefined() && !dims.isNull()) {
        err = invalid(QStringLiteral("dimensions"),
                      QStringLiteral("this model's embeddings have a fixed width and cannot be shortened; leave "
                                     "'dimensions' out."),
                      "unsupported_parameter");
        return false;
    }
    const QJsonValue format = o.value(QLatin1String("encoding_format"));
    if (format.isString() && format.toString() == QLatin1String("base64")) out.base64 = true;
    else if (!format.isUndefined() && !format.isNull() &&
             !(format.isString() && format.toString() == QLatin1String("float"))) {
        err = invalid(QStringLiteral("encoding_format"), QStringLiteral("expected 'float' or 'base64'."));
        return false;
    }
    if (!o.contains(QLatin1String("input"))) {
        err = ApiError::invalid(QStringLiteral("input"), QStringLiteral("Missing required parameter: 'input'."),
                                QStringLiteral("missing_required_parameter"));
        return false;
    }
    const QJsonValue input = o.value(QLatin1String("input"));
    if (input.isString()) {
        CompletionPrompt p;
        if (!text(input, QStringLiteral("input"), p, err)) return false;
        out.inputs.push_back(std::move(p));
        return true;
    }
    if (!input.isArray() || input.toArray().isEmpty()) {
        err = invalid(QStringLiteral("input"),
                      QStringLiteral("expected a string, an array of strings, an array of token ids or an array of "
                                     "those, not empty."),
                      "invalid_type");
        return false;
    }
    const QJsonArray a = input.toArray();
    if (a[0].isDouble()) {
        CompletionPrompt p;
        if (!tokenIds(a, QStringLiteral("input"), p, err)) return false;
        out.inputs.push_back(std::move(p));
        return true;
    }
    if (a.size() > kMaxEmbeddingInputs) {
        err = invalid(QStringLiteral("input"),
                      QStringLiteral("at most %1 inputs per request are allowed, got %2.").arg(kMaxEmbeddingInputs).arg(a.size()));
        return false;
    }
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString param = QStringLiteral("input[%1]").arg(i);
        CompletionPrompt p;
        if (a[i].isString()) {
            if (!text(a[i], param, p, err)) return false;
        } else if (a[i].isArray()) {
            if (!tokenIds(a[i].toArray(), param, p, err)) return false;
        } else {
            err = invalid(param, QStringLiteral("expected a string or an array of token ids."), "invalid_type");
            return false;
        }
        out.inputs.push_back(std::move(p));
    }
    return true;
}

} // namespace weir::server
