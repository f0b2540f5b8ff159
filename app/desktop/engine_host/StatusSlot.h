#pragma once
// The latest engine status snapshot, from the engine host thread to the GUI
// thread. A std::mutex carries the data (ThreadSanitizer sees it; it cannot see
// the locking inside Qt's event queue); a queued call only wakes the GUI, once
// per snapshot it has not taken yet. A newer snapshot replaces an untaken one.
#include <QtGlobal>
#include <mutex>
#include <optional>
#include <utility>

#include "weir/types/cache_status.h"

namespace weir::desktop {

class StatusSlot {
public:
    // True when the slot was empty, i.e. the GUI must be woken.
    bool put(quint64 generation, CacheStatus status) {
        std::lock_guard lock(mutex_);
        const bool wasEmpty = !full_;
        generation_ = generation;
        status_ = std::move(status);
        full_ = true;
        return wasEmpty;
    }

    std::optional<std::pair<quint64, CacheStatus>> take() {
        std::lock_guard lock(mutex_);
        if (!full_) return std::nullopt;
        full_ = false;
        return std::make_pair(generation_, std::move(status_));
    }

private:
    std::mutex mutex_;
    bool full_ = false;
    quint64 generation_ = 0;
    CacheStatus status_;
};

} // namespace weir::desktop
