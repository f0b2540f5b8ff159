#include "app/server/answer_writer.h"

#include <QJsonDocument>

#include "app/server/anthropic_answer.h"

namespace weir::server {

QByteArray namedSseEvent(const QString& name, const QJsonObject& data) {
    return "event: " + name.toUtf8() + "\ndata: " + QJsonDocument(data).toJson(QJsonDocument::Compact) + "\n\n";
}

QJsonObject errorJsonFor(ApiDialect dialect, const ApiError& e) {
    return dialect == ApiDialect::Anthropic ? anthropicErrorJson(e) : e.toJson();
}

} // namespace weir::server
