#include "storage/LegacyDataDir.h"

#include <QDir>
#include <QStandardPaths>

#include "app/logging/log_categories.h"

namespace weir::desktop {

QString legacyDataDir() {
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/Weir/Weir");
}

int moveLegacyData(const QString& legacyDir, const QString& dataDir) {
    const QDir from(legacyDir);
    if (!from.exists() || QDir::cleanPath(from.absolutePath()) == QDir::cleanPath(QDir(dataDir).absolutePath())) return 0;
    QDir to(dataDir);
    if (to.exists(QStringLiteral("weir.sqlite3"))) return 0;  // the new folder is in use already
    if (!to.mkpath(QStringLiteral("."))) {
        qCWarning(weir::logging::lcStorage) << "cannot create" << dataDir << "to move the data of" << legacyDir << "into";
        return 0;
    }
    int moved = 0;
    const auto entries = from.entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    for (const QString& name : entries) {
        if (to.exists(name)) continue;
        if (QDir().rename(from.filePath(name), to.filePath(name))) ++moved;
        else qCWarning(weir::logging::lcStorage) << "could not move" << from.filePath(name) << "to" << to.filePath(name);
    }
    if (moved > 0) qCInfo(weir::logging::lcStorage).noquote() << "moved" << moved << "entries from" << legacyDir << "to" << dataDir;
    QDir().rmdir(legacyDir);  // only if empty
    return moved;
}

} // namespace weir::desktop
