#include "AppIcon.h"

#include <QFile>

namespace weir::desktop {

QIcon appIcon() {
    QIcon icon;
    for (int size : {16, 22, 24, 32, 48, 64, 128, 256, 512}) {
        const QString file = QStringLiteral(":/icons/%1x%1/apps/%2.png").arg(size).arg(QStringLiteral(WEIR_APP_ID));
        if (QFile::exists(file)) icon.addFile(file, QSize(size, size));
    }
    return icon;
}

} // namespace weir::desktop
