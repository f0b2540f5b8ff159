#pragma once
// Calls made on the thread an object lives on, posted from any thread.
//
// Why not QMetaObject::invokeMethod(target, lambda): Qt's event queue does
// order the post before the call, but it synchronizes inside uninstrumented
// Qt, where ThreadSanitizer cannot see it, while the lambda's captures are
// written and read in our (instrumented) code: TSan then reports each such
// hand-off as a race whenever the receiving thread was not asleep. Here the
// calls travel through a std::mutex, which TSan sees, and Qt's queue carries
// only a bare wake-up event that our code never writes.
#include <QCoreApplication>
#include <QEvent>
#include <QObject>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace weir::server {

class ThreadInbox : public QObject {
public:
    // Lives on `parent`'s thread (and moves with it).
    explicit ThreadInbox(QObject* parent) : QObject(parent) {}
    ~ThreadInbox() override {
        std::lock_guard lock(mutex_);
        calls_.clear();  // destroyed under the lock: their captures were made on other threads
    }

    // Runs `call` on this inbox's thread, after the calls posted before it.
    void post(std::function<void()> call) {
        bool wake = false;
        {
            std::lock_guard lock(mutex_);
            wake = calls_.empty();
            calls_.push_back(std::move(call));
        }
        if (wake) QCoreApplication::postEvent(this, new QEvent(wakeType()));
    }

protected:
    bool event(QEvent* e) override {
        if (e->type() != wakeType()) return QObject::event(e);
        for (;;) {
            std::function<void()> call;
            {
                std::lock_guard lock(mutex_);
                if (calls_.empty()) return true;
                call = std::move(calls_.front());
                calls_.pop_front();
            }
            call();
            // `call` (and its captures) is destroyed here, on this thread, outside the lock.
        }
    }

private:
    static QEvent::Type wakeType() {
        static const QEvent::Type type = QEvent::Type(QEvent::registerEventType());
        return type;
    }

    std::mutex mutex_;
    std::deque<std::function<void()>> calls_;
};

} // namespace weir::server
