#pragma once
// How the tool-call reader of one agent reply gets from the engine host
// thread (where the backend makes it, with the template's call opening
// already pushed in) to the GUI thread (which reads the streamed reply with
// it). A mutex makes the hand-off visible to ThreadSanitizer; the GUI takes
// the reader once, at its first token or at the end of the reply.
#include <memory>
#include <mutex>

#include "weir/tool_calls.h"

namespace weir::desktop {

class ToolCallHandoff {
public:
    void put(std::unique_ptr<ToolCallReader> reader) {
        std::lock_guard lock(mutex_);
        reader_ = std::move(reader);
    }
    std::unique_ptr<ToolCallReader> take() {
        std::lock_guard lock(mutex_);
        return std::move(reader_);
    }

private:
    std::mutex mutex_;
    std::unique_ptr<ToolCallReader> reader_;
};

} // namespace weir::desktop
