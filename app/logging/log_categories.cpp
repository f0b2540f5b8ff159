#include "app/logging/log_categories.h"

namespace weir::logging {

Q_LOGGING_CATEGORY(lcApp, "weir.app")
Q_LOGGING_CATEGORY(lcEngine, "weir.engine")
Q_LOGGING_CATEGORY(lcServer, "weir.server")
Q_LOGGING_CATEGORY(lcStorage, "weir.storage")
Q_LOGGING_CATEGORY(lcUi, "weir.ui")

} // namespace weir::logging
