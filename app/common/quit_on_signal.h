#pragma once
// SIGTERM and SIGINT end a Qt program the normal way: the event loop returns
// (QCoreApplication::quit) and the program's own shutdown runs (the endpoint
// ends its streams properly, the app saves its settings), instead of the
// process dying mid-write. The handler only writes a byte to a socket pair
// that a QSocketNotifier watches, the one thing a signal handler may safely
// do. A second signal while shutting down ends the process at once.
// In weir_common: both programs that serve (weir-cli serve, the app) use it.
class QCoreApplication;

namespace weir::common {

// Call once, after the application object exists. False when the signals
// could not be hooked (they then keep their default action).
bool quitOnTerminationSignals(QCoreApplication& app);

} // namespace weir::common
