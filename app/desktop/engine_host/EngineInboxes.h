#pragma once
// What crosses from the engine host thread (EngineWorker, the engine's own
// thread) to the GUI thread besides calls, each in a common::Inbox (see
// app/common/inbox.h for why not a queued signal).
#include <QtGlobal>
#include <memory>
#include <utility>

#include "app/common/inbox.h"
#include "weir/engine.h"
#include "weir/tool_calls.h"

namespace weir::desktop {

// Every request's events, (ticket, event) in order, from the engine's
// thread; the GUI is woken once per batch, not once per token.
using EngineEvents = common::Inbox<std::pair<quint64, Event>>;

// The latest status snapshot, (generation, status): one not yet taken is
// replaced by a newer one.
using StatusSnapshots = common::Inbox<std::pair<quint64, CacheStatus>>;

// The tool-call reader of one agent reply, made on the engine host thread
// (with the template's call opening already pushed in) before the request
// runs; the GUI takes it at the reply's first token or at its end.
using ToolCallHandoff = common::Inbox<std::unique_ptr<ToolCallReader>>;

} // namespace weir::desktop
