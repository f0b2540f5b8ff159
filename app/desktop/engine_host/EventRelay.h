#pragma once
// Carries engine events from the engine's thread to the GUI thread. The engine
// calls push() for every event; the GUI is woken once per batch (not once per
// token) and takes everything queued so far, in order.
#include <QMutex>
#include <QMutexLocker>
#include <QObject>
#include <functional>
#include <utility>
#include <vector>

#include "app/server/thread_inbox.h"
#include "weir/engine.h"

namespace weir::desktop {

struct EventRelay {
    using Batch = std::vector<std::pair<quint64, Event>>;

    // `inbox` lives on the GUI thread; `drain` runs there.
    EventRelay(server::ThreadInbox* inbox, std::function<void()> drain) : receiver_(inbox), drain_(std::move(drain)) {}

    void push(quint64 ticket, const Event& event) {
        QMutexLocker lock(&mutex_);
        pending_.emplace_back(ticket, event);
        if (scheduled_ || !receiver_) return;
        scheduled_ = true;
        receiver_->post(drain_);
    }

    Batch take() {
        QMutexLocker lock(&mutex_);
        scheduled_ = false;
        Batch out;
        out.swap(pending_);
        return out;
    }

    // The receiver is going away: drop whatever comes later.
    void detach() {
        QMutexLocker lock(&mutex_);
        receiver_ = nullptr;
        pending_.clear();
    }

private:
    QMutex mutex_;
    server::ThreadInbox* receiver_;
    std::function<void()> drain_;
    Batch pending_;
    bool scheduled_ = false;
};

} // namespace weir::desktop
