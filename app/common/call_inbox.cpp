#include "app/common/call_inbox.h"

namespace weir::common {

std::shared_ptr<CallInbox> makeCallInbox(QObject* receiver) {
    return CallInbox::create(Keep::Every, receiver, [](CallInbox& inbox) {
        // One at a time: a call may destroy the receiver, which closes the
        // inbox, and the calls after it are then dropped rather than run.
        while (std::optional<std::function<void()>> call = inbox.take()) (*call)();
    });
}

} // namespace weir::common
