#pragma once
// Routes the engine's log lines (weir::setLogSink) into the weir.engine
// category as "subsystem: message", at the matching Qt level (Error becomes
// critical). Call once at start-up; later engines use it too.
namespace weir::logging {

void routeEngineLogToQt();

} // namespace weir::logging
