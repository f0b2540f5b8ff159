#pragma once
// One logging category per subsystem of the app. Enable or silence them the
// usual Qt way, e.g. QT_LOGGING_RULES="weir.engine.debug=false;weir.server=false".
//   weir.app      start-up, models loaded, settings
//   weir.engine   the engine's own lines (weir/log.h), "subsystem: message"
//   weir.server   the HTTP endpoint: one line per answered request
//   weir.storage  the conversation database
//   weir.ui       QML warnings
#include <QLoggingCategory>

namespace weir::logging {

Q_DECLARE_LOGGING_CATEGORY(lcApp)
Q_DECLARE_LOGGING_CATEGORY(lcEngine)
Q_DECLARE_LOGGING_CATEGORY(lcServer)
Q_DECLARE_LOGGING_CATEGORY(lcStorage)
Q_DECLARE_LOGGING_CATEGORY(lcUi)

} // namespace weir::logging
