#pragma once
// The one way values cross threads in the app: producers on any thread put
// values in; the thread of a receiving QObject is woken and takes them.
//
// Why not QMetaObject::invokeMethod(receiver, lambda) or a queued signal: Qt's
// event queue does order the post before the call, but it synchronizes inside
// uninstrumented Qt, where ThreadSanitizer cannot see it, while the values are
// written and read in our (instrumented) code: TSan then reports each hand-off
// as a race. Here the values travel through a std::mutex, which TSan sees, and
// Qt's queue carries only a bare wake-up event that our code never writes.
//
// Keep::Every queues values in order; Keep::Latest holds only the newest (a
// status snapshot: an untaken one is replaced). The receiver is woken once per
// batch: a put finds a wake-up already on its way and adds to what it takes.
// The wake handler should take everything (takeAll, or take until empty).
//
// Lifetime: the inbox is shared by its producers and its wake-up target, a
// child of the receiver that is there until the receiver goes or the inbox is
// closed (so a value put is taken even if its producer let go of the inbox
// right after). When the receiver goes, the inbox closes: what is
// pending is dropped and later puts are refused, so a producer that outlives
// the receiver never reaches it. Values leave the inbox only under the mutex,
// so whichever thread drops them (a closing receiver, the last owner) sees
// them whole; they are destroyed after the lock is released, so a value's
// destructor may use the inbox.
#include <QObject>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace weir::common {

namespace detail {

// Receives the wake-up events of one inbox on the receiver's thread. Not a
// template (and no Q_OBJECT): it only forwards to the inbox.
class InboxWaker : public QObject {
public:
    // `woken` runs on `receiver`'s thread for each wake-up; `closed` when this
    // object is destroyed (with the receiver, or after the inbox was closed).
    InboxWaker(QObject* receiver, std::function<void()> woken, std::function<void()> closed);
    ~InboxWaker() override;

    // From any thread, with the inbox's mutex held (so this object cannot be
    // destroyed meanwhile: its destructor takes that mutex to close the inbox).
    void wake();

protected:
    bool event(QEvent* e) override;

private:
    std::function<void()> woken_, closed_;
};

} // namespace detail

enum class Keep { Every, Latest };

template <class T>
class Inbox {
public:
    using Wake = std::function<void(Inbox&)>;

    // An inbox nobody is woken for: the taker looks when it needs the value.
    static std::shared_ptr<Inbox> create(Keep keep) { return std::shared_ptr<Inbox>(new Inbox(keep)); }

    // An inbox that runs `onWake` on `receiver`'s thread once per batch put.
    // Call on that thread; the inbox closes when `receiver` is destroyed.
    static std::shared_ptr<Inbox> create(Keep keep, QObject* receiver, Wake onWake) {
        std::shared_ptr<Inbox> inbox = create(keep);
        // The wake-up target holds the inbox: what was put is taken even when
        // every producer has let go of it since.
        auto* waker = new detail::InboxWaker(
            receiver, [inbox] { inbox->woken(); }, [inbox] { inbox->shut(false); });
        std::lock_guard lock(inbox->mutex_);
        inbox->onWake_ = std::move(onWake);
        inbox->waker_ = waker;
        return inbox;
    }

    ~Inbox() { std::deque<T> dropped = drain(); }
    Inbox(const Inbox&) = delete;
    Inbox& operator=(const Inbox&) = delete;

    // From any thread. False (and `value` dropped) once the inbox is closed.
    bool put(T value) {
        std::deque<T> replaced;  // destroyed after the lock is released
        std::lock_guard lock(mutex_);
        if (closed_) return false;
        if (keep_ == Keep::Latest) replaced.swap(values_);
        values_.push_back(std::move(value));
        if (waker_ && !wakePending_) {
            wakePending_ = true;
            waker_->wake();
        }
        return true;
    }

    // Everything put since the last take, oldest first (with Keep::Latest, at most one).
    std::vector<T> takeAll() {
        std::deque<T> taken = drain();
        std::vector<T> out;
        out.reserve(taken.size());
        for (T& v : taken) out.push_back(std::move(v));
        return out;
    }

    // The oldest value not yet taken (with Keep::Latest, the newest), or nothing.
    std::optional<T> take() {
        std::lock_guard lock(mutex_);
        if (values_.empty()) return std::nullopt;
        std::optional<T> out(std::move(values_.front()));
        values_.pop_front();
        return out;
    }

    // Drops what is pending and refuses later puts (the taker is going away).
    // The wake-up target goes too, whichever thread closes.
    void close() { shut(true); }

    bool isClosed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

private:
    // Locks once so that the thread that uses the inbox next sees it whole
    // whichever way the pointer reached it (through Qt's thread pool or event
    // queue, ThreadSanitizer would not see it).
    explicit Inbox(Keep keep) : keep_(keep) { std::lock_guard lock(mutex_); }

    // `dropWaker`: delete the wake-up target (not when it is the one going).
    void shut(bool dropWaker) {
        std::deque<T> dropped;  // destroyed after the lock is released
        std::lock_guard lock(mutex_);
        closed_ = true;
        if (waker_ && dropWaker) waker_->deleteLater();
        waker_ = nullptr;
        dropped.swap(values_);
    }

    // Takes every value out under the lock; the caller's thread owns them after.
    std::deque<T> drain() {
        std::deque<T> out;
        std::lock_guard lock(mutex_);
        out.swap(values_);
        return out;
    }

    // On the receiver's thread, by the wake-up target (which holds the inbox).
    void woken() {
        {
            std::lock_guard lock(mutex_);
            wakePending_ = false;  // a put from now on needs a wake-up of its own
        }
        onWake_(*this);
    }

    const Keep keep_;
    Wake onWake_;                          // read on the receiver's thread only
    mutable std::mutex mutex_;
    std::deque<T> values_;
    detail::InboxWaker* waker_ = nullptr;  // owned by the receiver; nulled when it goes
    bool wakePending_ = false;             // a wake-up is posted and has not started yet
    bool closed_ = false;
};

} // namespace weir::common
