#pragma once
// Carries engine events from the engine's thread to the HTTP server's thread,
// the way the desktop's EventRelay does for the GUI: the engine thread only
// appends under a mutex, and the server's thread is woken once per batch (not
// once per token) to take everything queued so far, in order. Once detached
// (the server stopped), events are dropped.
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "app/server/thread_inbox.h"
#include "weir/engine.h"

namespace weir::server {

class EngineEventQueue {
public:
    using Batch = std::vector<std::pair<quint64, Event>>;  // (job key, event)

    // `drain` runs on `inbox`'s thread and should call take().
    EngineEventQueue(ThreadInbox* inbox, std::function<void()> drain)
        : receiver_(inbox), drain_(std::move(drain)) {}

    // From the engine thread.
    void push(quint64 key, const Event& event) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!receiver_) return;
        pending_.emplace_back(key, event);
        if (scheduled_) return;
        scheduled_ = true;
        receiver_->post(drain_);
    }

    Batch take() {
        std::lock_guard<std::mutex> lock(mutex_);
        scheduled_ = false;
        Batch out;
        out.swap(pending_);
        return out;
    }

    void detach() {
        std::lock_guard<std::mutex> lock(mutex_);
        receiver_ = nullptr;
        pending_.clear();
    }

private:
    std::mutex mutex_;
    ThreadInbox* receiver_;
    std::function<void()> drain_;
    Batch pending_;
    bool scheduled_ = false;
};

} // namespace weir::server
