#pragma once
// The engine's side of weir/log.h: internals write lines here; the facade
// installs the client's sink. Formatting a line costs nothing when no sink
// is installed (check logEnabled() before building an expensive message).
#include <string_view>

#include "weir/types/log_sink.h"

namespace weir {

bool logEnabled();
void logLine(LogLevel level, std::string_view subsystem, std::string_view message);
void installLogSink(LogSink sink);

} // namespace weir
