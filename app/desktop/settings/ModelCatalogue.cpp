#include "settings/ModelCatalogue.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QVariantMap>

#include "app/locations/model_locations.h"
#include "app/logging/log_categories.h"

namespace weir::desktop {

QVariantList bundledModels(const QString& catalogueFile) {
    QFile f(catalogueFile);
    if (!f.open(QIODevice::ReadOnly)) {
        qCWarning(weir::logging::lcApp) << "cannot read the model catalogue" << catalogueFile;
        return {};
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    if (error.error != QJsonParseError::NoError) {
        qCWarning(weir::logging::lcApp).noquote() << "model catalogue" << catalogueFile << "is not JSON:" << error.errorString();
        return {};
    }
    QVariantList out;
    for (const QJsonValue& v : doc.object().value(QStringLiteral("models")).toArray()) {
        const QJsonObject m = v.toObject();
        const QString file = m.value(QStringLiteral("file")).toString();
        if (file.isEmpty()) continue;
        out << QVariantMap{{"id", m.value(QStringLiteral("id")).toString()},
                           {"name", m.value(QStringLiteral("name")).toString()},
                           {"file", file},
                           {"architecture", m.value(QStringLiteral("architecture")).toString()},
                           {"quantization", m.value(QStringLiteral("quantization")).toString()},
                           {"parameters", m.value(QStringLiteral("parameters")).toString()},
                           {"licence", m.value(QStringLiteral("licence")).toString()},
                           {"licenceUrl", m.value(QStringLiteral("licence_url")).toString()},
                           {"role", m.value(QStringLiteral("role")).toString()},
                           {"path", QString::fromStdString(weir::locations::findModel(file.toStdString()))}};
    }
    return out;
}

QString catalogueName(const QString& fileName, const QString& catalogueFile) {
    QFile f(catalogueFile);
    if (fileName.isEmpty() || !f.open(QIODevice::ReadOnly)) return {};
    for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("models")).toArray())
        if (v.toObject().value(QStringLiteral("file")).toString() == fileName)
            return v.toObject().value(QStringLiteral("name")).toString();
    return {};
}

} // namespace weir::desktop
