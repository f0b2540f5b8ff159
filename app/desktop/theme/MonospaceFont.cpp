#include "theme/MonospaceFont.h"

#include <QFontDatabase>
#include <QFontInfo>
#include <QStringList>

namespace weir::desktop {

QString monospaceFamily() {
    const QFont system = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    // QFontInfo reports the face actually matched, which for a generic name
    // such as "monospace" is what fontconfig resolved it to.
    const QFontInfo matched(system);
    if (matched.fixedPitch()) return matched.family();

    const QStringList preferred{QStringLiteral("DejaVu Sans Mono"), QStringLiteral("Noto Sans Mono"),
                                QStringLiteral("Liberation Mono"), QStringLiteral("Ubuntu Mono"),
                                QStringLiteral("Cascadia Mono"), QStringLiteral("Menlo"),
                                QStringLiteral("Consolas"), QStringLiteral("Courier New")};
    for (const QString& family : preferred)
        if (QFontDatabase::hasFamily(family) && QFontDatabase::isFixedPitch(family)) return family;
    for (const QString& family : QFontDatabase::families())
        if (QFontDatabase::isFixedPitch(family) && !QFontDatabase::isPrivateFamily(family)) return family;
    return system.family();
}

} // namespace weir::desktop
