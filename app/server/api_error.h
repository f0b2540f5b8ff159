#pragma once
// An error as the OpenAI API reports it:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// with the HTTP status it goes out with.
#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace weir::server {

struct ApiError {
    int status = 400;
    QString message;
    QString type = QStringLiteral("invalid_request_error");
    QString param;   // the request field at fault; empty -> null
    QString code;    // e.g. "invalid_type", "model_not_found"; empty -> null
    int retryAfterSeconds = 0;  // > 0: sent as Retry-After (503)

    QJsonObject toJson() const {
        QJsonObject e;
        e.insert(QStringLiteral("message"), message);
        e.insert(QStringLiteral("type"), type);
        e.insert(QStringLiteral("param"), param.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(param));
        e.insert(QStringLiteral("code"), code.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(code));
        return QJsonObject{{QStringLiteral("error"), e}};
    }
    QByteArray body() const { return QJsonDocument(toJson()).toJson(QJsonDocument::Compact); }

    static ApiError invalid(QString param, QString message, QString code = {}) {
        ApiError e;
        e.param = std::move(param);
        e.message = std::move(message);
        e.code = std::move(code);
        return e;
    }
};

} // namespace weir::server
