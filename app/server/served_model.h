#pragma once
// The one model an endpoint serves, as clients name it: its id (the file name
// without ".gguf", or the one given), never its path on disk, which is neither
// shown nor accepted, so a client cannot probe the file system through it.
#include <QJsonObject>
#include <QString>

#include "app/server/api_error.h"

namespace weir::server {

struct ServedModel {
    QString id;
    // The context one request may reach (prompt and reply), said in the
    // listing as vLLM's max_model_len, so clients (the app's remote engines)
    // can size what they send; 0 leaves it out.
    qint64 contextLength = 0;

    // "gemma-3-270m" and "gemma-3-270m.gguf" both name it.
    bool matches(const QString& name) const { return name == id || name == id + QLatin1String(".gguf"); }

    QJsonObject json() const {
        QJsonObject o{{QStringLiteral("id"), id},
                      {QStringLiteral("object"), QStringLiteral("model")},
                      {QStringLiteral("created"), qint64(0)},
                      {QStringLiteral("owned_by"), QStringLiteral("weir")}};
        if (contextLength > 0) o.insert(QStringLiteral("max_model_len"), contextLength);
        return o;
    }

    ApiError unknown(const QString& name) const {
        ApiError e;
        e.status = 404;
        e.param = QStringLiteral("model");
        e.code = QStringLiteral("model_not_found");
        e.message = QStringLiteral("The model '%1' does not exist; this server serves '%2'.").arg(name.left(200), id);
        return e;
    }

    // The id for a model file: its name without folders and ".gguf".
    static QString idForFile(const QString& path) {
        QString file = path.mid(path.lastIndexOf(QLatin1Char('/')) + 1);
        if (file.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) file.chop(5);
        return file.isEmpty() ? QStringLiteral("weir") : file;
    }
};

} // namespace weir::server
