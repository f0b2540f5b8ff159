#pragma once
// The engine's log lines as plain values: a level, the subsystem that wrote
// the line ("model", "kv", "scheduler") and the text. The engine uses no
// logging library; a client installs one LogSink (weir/log.h) and routes the
// lines into its own logging (the app: QLoggingCategory "weir.engine").
#include <functional>
#include <string_view>

namespace weir {

enum class LogLevel { Debug, Info, Warning, Error };

// "debug", "info", "warning", "error".
const char* logLevelName(LogLevel level);

// Called on whichever engine thread writes a line, possibly on several at
// once, so it must be thread-safe. The views are valid only during the call.
using LogSink = std::function<void(LogLevel level, std::string_view subsystem, std::string_view message)>;

} // namespace weir
