#include "app/remote/remote_error.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QUrl>

namespace weir::remote {

QString hostPortOf(const QUrl& url) {
    const int port = url.port(url.scheme() == QLatin1String("https") ? 443 : 80);
    return QStringLiteral("%1:%2").arg(url.host()).arg(port);
}

namespace {

QString said(const QString& serverMessage) {
    return serverMessage.isEmpty() ? QString() : QStringLiteral(" The server said: %1").arg(serverMessage);
}

QString trimmed(QString s) {
    s = s.simplified();
    if (s.size() > 400) s = s.left(400) + QStringLiteral("…");
    return s;
}

QString messageOf(const QJsonObject& o) {
    const QJsonValue e = o.value(QStringLiteral("error"));
    if (e.isObject()) return e.toObject().value(QStringLiteral("message")).toString();
    if (e.isString()) return e.toString();
    if (o.value(QStringLiteral("message")).isString()) return o.value(QStringLiteral("message")).toString();
    const QJsonValue d = o.value(QStringLiteral("detail"));
    if (d.isString()) return d.toString();
    if (d.isArray() || d.isObject())
        return QString::fromUtf8(QJsonDocument(d.isArray() ? QJsonDocument(d.toArray()) : QJsonDocument(d.toObject()))
                                     .toJson(QJsonDocument::Compact));
    return {};
}

// The error object's fields wherever the server put them (nested or flat).
QJsonObject errorFields(const QJsonObject& o) {
    const QJsonValue e = o.value(QStringLiteral("error"));
    return e.isObject() ? e.toObject() : o;
}

std::optional<qint64> firstNumber(const QString& text, const QString& pattern) {
    const QRegularExpressionMatch m =
        QRegularExpression(pattern, QRegularExpression::CaseInsensitiveOption).match(text);
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const qint64 v = m.captured(1).remove(QLatin1Char(',')).toLongLong(&ok);
    return ok ? std::optional<qint64>(v) : std::nullopt;
}

bool looksLikeContextTooLong(const QJsonObject& fields, const QString& message) {
    const QString code = fields.value(QStringLiteral("code")).toVariant().toString();
    const QString type = fields.value(QStringLiteral("type")).toString();
    if (code == QLatin1String("context_length_exceeded") || type == QLatin1String("exceed_context_size_error")) return true;
    static const QRegularExpression words(
        QStringLiteral("maximum context length|context length|context size|context window|exceeds? the (available )?context|"
                       "prompt is too long|input is too long|too many tokens"),
        QRegularExpression::CaseInsensitiveOption);
    return words.match(message).hasMatch();
}

RemoteError contextTooLong(const QJsonObject& fields, const QString& message, const QString& model, const QString& hostPort) {
    RemoteError e;
    e.kind = RemoteErrorKind::ContextTooLong;
    e.serverMessage = message;
    // llama.cpp's server gives the numbers as fields; OpenAI, vLLM and Weir in the sentence.
    if (fields.contains(QStringLiteral("n_ctx"))) e.contextLimit = fields.value(QStringLiteral("n_ctx")).toInteger();
    if (fields.contains(QStringLiteral("n_prompt_tokens")))
        e.requestedTokens = fields.value(QStringLiteral("n_prompt_tokens")).toInteger();
    if (!e.contextLimit) e.contextLimit = firstNumber(message, QStringLiteral("maximum context length is ([\\d,]+)"));
    // Other wordings: "context length is N", "context length (N tokens)", "context size of N".
    if (!e.contextLimit) e.contextLimit = firstNumber(message, QStringLiteral("context (?:size|window|length)\\D{0,20}?([\\d,]+)"));
    if (!e.requestedTokens)
        e.requestedTokens = firstNumber(message, QStringLiteral("(?:you )?requested ([\\d,]+) tokens"));
    if (!e.requestedTokens) e.requestedTokens = firstNumber(message, QStringLiteral("resulted in ([\\d,]+) tokens"));
    if (!e.requestedTokens) e.requestedTokens = firstNumber(message, QStringLiteral("input\\D{0,20}?([\\d,]+) tokens"));
    const QString who = model.isEmpty() ? QStringLiteral("the model") : QStringLiteral("“%1”").arg(model);
    if (e.contextLimit && e.requestedTokens)
        e.message = QStringLiteral("The conversation is too long for %1 on %2: the model holds %3 tokens and this request "
                                   "needs %4. Shorten the conversation or start a new one.")
                        .arg(who, hostPort)
                        .arg(*e.contextLimit)
                        .arg(*e.requestedTokens);
    else if (e.contextLimit)
        e.message = QStringLiteral("The conversation is too long for %1 on %2: the model holds %3 tokens. Shorten the "
                                   "conversation or start a new one.%4")
                        .arg(who, hostPort)
                        .arg(*e.contextLimit)
                        .arg(said(message));
    else
        e.message = QStringLiteral("The conversation is too long for %1 on %2.%3").arg(who, hostPort, said(message));
    return e;
}

} // namespace

QString serverMessageOf(const QByteArray& body) {
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &pe);
    if (pe.error == QJsonParseError::NoError && doc.isObject()) return trimmed(messageOf(doc.object()));
    return trimmed(QString::fromUtf8(body));
}

RemoteError errorFromHttp(int status, const QByteArray& body, const QString& model, const QString& hostPort) {
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    const QJsonObject fields = errorFields(o);
    const QString msg = serverMessageOf(body);
    if (status == 400 || status == 413 || status == 422) {
        if (looksLikeContextTooLong(fields, msg)) {
            RemoteError e = contextTooLong(fields, msg, model, hostPort);
            e.httpStatus = status;
            return e;
        }
    }
    RemoteError e;
    e.httpStatus = status;
    e.serverMessage = msg;
    if (status == 401 || status == 403) {
        e.kind = RemoteErrorKind::Unauthorized;
        e.message = QStringLiteral("%1 refused the API key (HTTP %2). Check the key in the endpoint's settings.%3")
                        .arg(hostPort)
                        .arg(status)
                        .arg(said(msg));
        return e;
    }
    const QString code = fields.value(QStringLiteral("code")).toVariant().toString();
    if (status == 404 && (code == QLatin1String("model_not_found") ||
                          (!model.isEmpty() && msg.contains(model)) || msg.contains(QLatin1String("model"), Qt::CaseInsensitive))) {
        e.kind = RemoteErrorKind::ModelNotFound;
        e.message = QStringLiteral("%1 has no model named “%2” (HTTP 404). Pick one of the models it lists.%3")
                        .arg(hostPort, model, said(msg));
        return e;
    }
    if (status == 429 || status == 503) {
        e.kind = RemoteErrorKind::Overloaded;
        e.message = QStringLiteral("%1 is busy (HTTP %2) and did not take the request after the retries.%3")
                        .arg(hostPort)
                        .arg(status)
                        .arg(said(msg));
        return e;
    }
    e.kind = RemoteErrorKind::Http;
    if (status == 404)
        e.message = QStringLiteral("%1 answered HTTP 404: no such endpoint. Is the base URL right (it usually ends in /v1)?%2")
                        .arg(hostPort, said(msg));
    else
        e.message = QStringLiteral("%1 answered HTTP %2.%3").arg(hostPort).arg(status).arg(said(msg));
    return e;
}

RemoteError errorFromStreamEvent(const QJsonObject& event, const QString& model, const QString& hostPort) {
    const QJsonObject fields = errorFields(event);
    const QString msg = trimmed(messageOf(event));
    if (looksLikeContextTooLong(fields, msg)) return contextTooLong(fields, msg, model, hostPort);
    RemoteError e;
    e.kind = RemoteErrorKind::Http;
    // Some servers put the HTTP status they would have sent in "code".
    const int code = fields.value(QStringLiteral("code")).toInt();
    e.httpStatus = (code >= 400 && code < 600) ? code : 0;
    e.serverMessage = msg;
    e.message = QStringLiteral("%1 stopped the answer with an error.%2").arg(hostPort, said(msg));
    return e;
}

RemoteError errorFromNetwork(int qtError, const QString& text, const QString& hostPort) {
    RemoteError e;
    e.kind = RemoteErrorKind::Unreachable;
    e.serverMessage = text;
    switch (QNetworkReply::NetworkError(qtError)) {
    case QNetworkReply::ConnectionRefusedError:
        e.message = QStringLiteral("Cannot reach %1: the connection was refused (is the server running, on that port?).").arg(hostPort);
        break;
    case QNetworkReply::HostNotFoundError:
        e.message = QStringLiteral("Cannot reach %1: no such host.").arg(hostPort);
        break;
    case QNetworkReply::TimeoutError:
        e.kind = RemoteErrorKind::Timeout;
        e.message = QStringLiteral("%1 did not answer in time.").arg(hostPort);
        break;
    case QNetworkReply::RemoteHostClosedError:
        e.kind = RemoteErrorKind::StreamCut;
        e.message = QStringLiteral("%1 closed the connection before answering.").arg(hostPort);
        break;
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProxyAuthenticationRequiredError:
        e.message = QStringLiteral("Cannot reach %1 through the proxy set in the environment: %2").arg(hostPort, text);
        break;
    case QNetworkReply::SslHandshakeFailedError:
        e.message = QStringLiteral("Cannot reach %1: the secure connection failed (%2).").arg(hostPort, text);
        break;
    default:
        e.message = QStringLiteral("Cannot reach %1: %2").arg(hostPort, text);
        break;
    }
    return e;
}

} // namespace weir::remote
