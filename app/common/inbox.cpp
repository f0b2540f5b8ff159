#include "app/common/inbox.h"

#include <QCoreApplication>
#include <QEvent>

namespace weir::common::detail {

namespace {

QEvent::Type wakeType() {
    static const QEvent::Type type = QEvent::Type(QEvent::registerEventType());
    return type;
}

} // namespace

InboxWaker::InboxWaker(QObject* receiver, std::function<void()> woken, std::function<void()> closed)
    : QObject(receiver), woken_(std::move(woken)), closed_(std::move(closed)) {}

InboxWaker::~InboxWaker() {
    // Under the inbox's mutex: a put on another thread either posted its
    // wake-up before this (Qt drops it with this object) or finds it closed.
    closed_();
}

void InboxWaker::wake() { QCoreApplication::postEvent(this, new QEvent(wakeType())); }

bool InboxWaker::event(QEvent* e) {
    if (e->type() != wakeType()) return QObject::event(e);
    // A copy (it holds the inbox): the wake handler may destroy the receiver,
    // and this object with it.
    const std::function<void()> woken = woken_;
    woken();
    return true;
}

} // namespace weir::common::detail
