#include "app/logging/engine_log_bridge.h"

#include <QString>

#include "app/logging/log_categories.h"
#include "weir/log.h"

namespace weir::logging {

void routeEngineLogToQt() {
    weir::setLogSink([](LogLevel level, std::string_view subsystem, std::string_view message) {
        const QString text = QString::fromUtf8(subsystem.data(), qsizetype(subsystem.size())) + QStringLiteral(": ") +
                             QString::fromUtf8(message.data(), qsizetype(message.size()));
        switch (level) {
        case LogLevel::Debug: qCDebug(lcEngine).noquote() << text; break;
        case LogLevel::Info: qCInfo(lcEngine).noquote() << text; break;
        case LogLevel::Warning: qCWarning(lcEngine).noquote() << text; break;
        case LogLevel::Error: qCCritical(lcEngine).noquote() << text; break;
        }
    });
}

} // namespace weir::logging
