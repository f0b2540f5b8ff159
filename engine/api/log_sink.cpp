// weir::setLogSink: hands the client's sink to the engine's log (engine/util/log.h).
#include "weir/log.h"

#include "engine/util/log.h"

namespace weir {

void setLogSink(LogSink sink) { installLogSink(std::move(sink)); }

} // namespace weir
