#pragma once
// A value handed to another thread through Qt's event queue. The queue does
// synchronize, but inside uninstrumented Qt, where ThreadSanitizer cannot see
// it; putting the value in, taking it out and destroying what is left all
// under one std::mutex makes the hand-off (and everything written before
// it) visible, whichever thread drops the last reference to the parcel.
#include <mutex>
#include <optional>
#include <utility>

namespace weir::desktop {

template <class T>
class CrossThreadParcel {
public:
    explicit CrossThreadParcel(T value) {
        std::lock_guard lock(mutex_);
        value_.emplace(std::move(value));
    }
    ~CrossThreadParcel() {
        std::lock_guard lock(mutex_);
        value_.reset();
    }
    CrossThreadParcel(const CrossThreadParcel&) = delete;
    CrossThreadParcel& operator=(const CrossThreadParcel&) = delete;

    // The value; taken once (a second call returns a default T).
    T take() {
        std::lock_guard lock(mutex_);
        if (!value_) return T{};
        T out = std::move(*value_);
        value_.reset();
        return out;
    }

private:
    std::mutex mutex_;
    std::optional<T> value_;
};

} // namespace weir::desktop
