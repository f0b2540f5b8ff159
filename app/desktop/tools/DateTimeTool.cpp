#include "tools/DateTimeTool.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>
#include <QTimeZone>

namespace weir::desktop {

QString DateTimeTool::description() const {
    return QStringLiteral("Returns the current date, time, weekday and time zone.");
}

QByteArray DateTimeTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"timezone": {"type": "string",
                                           "description": "an IANA time zone such as Europe/Paris; empty for the user's own"}},
               "additionalProperties": false})";
}

ToolResult DateTimeTool::run(const QJsonObject& arguments) const {
    const QString zoneName = arguments.value(u"timezone").toString().trimmed();
    QTimeZone zone = QTimeZone::systemTimeZone();
    if (!zoneName.isEmpty()) {
        zone = QTimeZone(zoneName.toUtf8());
        if (!zone.isValid()) return {false, QStringLiteral("unknown time zone '%1' (use an IANA name such as Europe/Paris)").arg(zoneName)};
    }
    const QDateTime now = QDateTime::currentDateTime().toTimeZone(zone);
    const QString id = QString::fromUtf8(zone.id());
    // ISO 8601 with the offset, then the weekday and the zone's name and offset.
    return {true, QStringLiteral("%1 (%2, %3, %4)")
                      .arg(now.toString(Qt::ISODate), QLocale::c().dayName(now.date().dayOfWeek()),
                           id.isEmpty() ? QStringLiteral("local time") : id,
                           zone.displayName(now, QTimeZone::OffsetName))};
}

} // namespace weir::desktop
