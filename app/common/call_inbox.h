#pragma once
// Calls posted from any thread, run on the thread a QObject lives on, in the
// order posted: an Inbox of calls (see inbox.h for why not invokeMethod). A
// call's captures travel with it under the inbox's mutex.
#include <QObject>
#include <functional>
#include <memory>

#include "app/common/inbox.h"

namespace weir::common {

using CallInbox = Inbox<std::function<void()>>;

// Runs each call on `receiver`'s thread (and follows it across moveToThread);
// calls still pending when `receiver` is destroyed are dropped, not run.
// Call on `receiver`'s thread.
std::shared_ptr<CallInbox> makeCallInbox(QObject* receiver);

} // namespace weir::common
