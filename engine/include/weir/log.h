#pragma once
// Where the engine's log lines go. The engine writes a few lines about what
// it does, never per token: a model loaded (architecture, size, time), the KV
// pools sized, a request preempted, the prefix cache cleared, a pool resized.
// Without a sink they are dropped.
#include "weir/types/log_sink.h"

namespace weir {

// Installs `sink` for the whole process, replacing the one before; an empty
// sink drops every line (the default). Safe from any thread, also while the
// engine runs: a line being delivered finishes with the sink it started with.
// The sink must not call setLogSink itself.
void setLogSink(LogSink sink);

} // namespace weir
