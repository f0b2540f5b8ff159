#pragma once
// A value handed to another thread through Qt's event queue. The queue does
// synchronize, but inside uninstrumented Qt, where ThreadSanitizer cannot see
// it; putting the value in under a std::mutex and taking it out under the
// same mutex makes the hand-off (and everything written before it) visible.
#include <mutex>
#include <utility>

namespace weir::desktop {

template <class T>
class CrossThreadParcel {
public:
    explicit CrossThreadParcel(T value) {
        std::lock_guard lock(mutex_);
        value_ = std::move(value);
    }
    T take() {
        std::lock_guard lock(mutex_);
        return std::move(value_);
    }

private:
    std::mutex mutex_;
    T value_;
};

} // namespace weir::desktop
