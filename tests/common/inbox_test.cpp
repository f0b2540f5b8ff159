// The cross-thread Inbox (app/common/inbox.h) and CallInbox on it. Wake-ups
// are delivered with sendPostedEvents/processEvents, so every count below is
// exact: nothing waits on a clock.
#include <QCoreApplication>
#include <QObject>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "app/common/call_inbox.h"
#include "app/common/inbox.h"

using weir::common::CallInbox;
using weir::common::Inbox;
using weir::common::Keep;
using weir::common::makeCallInbox;

namespace {

// Records what each wake-up took.
template <class T>
struct Taker {
    int wakes = 0;
    std::vector<std::vector<T>> batches;

    std::shared_ptr<Inbox<T>> inbox(Keep keep, QObject* receiver) {
        return Inbox<T>::create(keep, receiver, [this](Inbox<T>& in) {
            ++wakes;
            batches.push_back(in.takeAll());
        });
    }
};

// Delivers the wake-ups posted so far (and only those).
void deliverWakeUps() { QCoreApplication::sendPostedEvents(); }

} // namespace

class InboxTest : public QObject {
    Q_OBJECT

private slots:
    void queueKeepsEveryValueInOrder() {
        QObject receiver;
        Taker<int> taker;
        auto inbox = taker.inbox(Keep::Every, &receiver);
        QVERIFY(inbox->put(1));
        QVERIFY(inbox->put(2));
        QVERIFY(inbox->put(3));
        QCOMPARE(taker.wakes, 0);  // woken through the event queue, never inside put
        deliverWakeUps();
        QCOMPARE(taker.wakes, 1);
        QCOMPARE(taker.batches, (std::vector<std::vector<int>>{{1, 2, 3}}));
    }

    void latestOnlyKeepsTheNewest() {
        QObject receiver;
        Taker<int> taker;
        auto inbox = taker.inbox(Keep::Latest, &receiver);
        inbox->put(1);
        inbox->put(2);
        inbox->put(3);
        deliverWakeUps();
        QCOMPARE(taker.wakes, 1);
        QCOMPARE(taker.batches, (std::vector<std::vector<int>>{{3}}));
        // A later value is a batch of its own.
        inbox->put(4);
        deliverWakeUps();
        QCOMPARE(taker.batches, (std::vector<std::vector<int>>{{3}, {4}}));
    }

    void wakesOncePerBatch() {
        QObject receiver;
        Taker<int> taker;
        auto inbox = taker.inbox(Keep::Every, &receiver);
        deliverWakeUps();
        QCOMPARE(taker.wakes, 0);  // nothing put, nobody woken
        for (int i = 0; i < 100; ++i) inbox->put(i);
        deliverWakeUps();
        QCOMPARE(taker.wakes, 1);
        QCOMPARE(taker.batches.back().size(), size_t(100));
        inbox->put(100);
        inbox->put(101);
        deliverWakeUps();
        QCOMPARE(taker.wakes, 2);
        QCOMPARE(taker.batches.back(), (std::vector<int>{100, 101}));
        deliverWakeUps();
        QCOMPARE(taker.wakes, 2);
    }

    void takeGivesTheOldestFirst() {
        auto inbox = Inbox<int>::create(Keep::Every);  // nobody woken: the taker looks
        QVERIFY(!inbox->take());
        inbox->put(7);
        inbox->put(8);
        QCOMPARE(inbox->take(), std::optional<int>(7));
        QCOMPARE(inbox->take(), std::optional<int>(8));
        QVERIFY(!inbox->take());
    }

    void receiverGoneDropsPendingValuesAndRefusesMore() {
        auto token = std::make_shared<int>(0);  // each pending value holds a reference
        auto receiver = std::make_unique<QObject>();
        Taker<std::shared_ptr<int>> taker;
        auto inbox = taker.inbox(Keep::Every, receiver.get());
        inbox->put(token);
        inbox->put(token);
        QCOMPARE(token.use_count(), 3L);
        receiver.reset();  // before its wake-up was delivered
        QVERIFY(inbox->isClosed());
        QCOMPARE(token.use_count(), 1L);  // the pending values were destroyed
        QVERIFY(!inbox->put(token));
        QCOMPARE(token.use_count(), 1L);  // and the refused one too
        deliverWakeUps();
        QCOMPARE(taker.wakes, 0);
    }

    // A producer may let go right after its put (a pool job ending): the
    // receiver still gets the value.
    void valueOutlivesItsProducer() {
        QObject receiver;
        Taker<int> taker;
        auto inbox = taker.inbox(Keep::Latest, &receiver);
        inbox->put(42);
        inbox.reset();
        deliverWakeUps();
        QCOMPARE(taker.wakes, 1);
        QCOMPARE(taker.batches, (std::vector<std::vector<int>>{{42}}));
    }

    void lastOwnerGoneDropsPendingValues() {
        auto token = std::make_shared<int>(0);
        auto inbox = Inbox<std::shared_ptr<int>>::create(Keep::Every);
        inbox->put(token);
        inbox->put(token);
        QCOMPARE(token.use_count(), 3L);
        inbox.reset();
        QCOMPARE(token.use_count(), 1L);
    }

    void closeDropsPendingValuesAndTheWakeUpTarget() {
        auto token = std::make_shared<int>(0);
        QObject receiver;
        Taker<std::shared_ptr<int>> taker;
        auto inbox = taker.inbox(Keep::Latest, &receiver);
        QCOMPARE(receiver.children().size(), qsizetype(1));
        inbox->put(token);
        inbox->close();
        QCOMPARE(token.use_count(), 1L);
        QVERIFY(!inbox->put(token));
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QCOMPARE(receiver.children().size(), qsizetype(0));
        deliverWakeUps();
        QCOMPARE(taker.wakes, 0);
    }

    // Two std::threads (not Qt threads) put while the receiving thread takes:
    // every value arrives once, each producer's in its order, with at most one
    // wake-up per value.
    void stdThreadProducers() {
        constexpr int kEach = 20000;
        QObject receiver;
        Taker<std::pair<int, int>> taker;  // (producer, sequence)
        auto inbox = taker.inbox(Keep::Every, &receiver);
        std::atomic<int> refused{0};  // QTest's checks are for this thread only
        auto produce = [inbox, &refused](int producer) {
            for (int i = 0; i < kEach; ++i)
                if (!inbox->put({producer, i})) ++refused;
        };
        std::thread a(produce, 0), b(produce, 1);
        auto count = [&] {
            size_t n = 0;
            for (const auto& batch : taker.batches) n += batch.size();
            return n;
        };
        while (count() < size_t(2 * kEach)) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        a.join();
        b.join();
        deliverWakeUps();
        QCOMPARE(refused.load(), 0);
        QCOMPARE(count(), size_t(2 * kEach));
        int next[2] = {0, 0};
        // A wake-up may find its values taken already (they came while the
        // one before was being handled): such a batch is empty.
        for (const auto& batch : taker.batches) {
            for (const auto& [producer, i] : batch) {
                QCOMPARE(i, next[producer]);
                ++next[producer];
            }
        }
        QVERIFY(taker.wakes >= 1 && taker.wakes <= 2 * kEach);
    }

    // Calls run on the receiver's thread, in order, after it moved there.
    void callInboxRunsOnTheReceiversThread() {
        QThread thread;
        QObject receiver;
        std::shared_ptr<CallInbox> calls = makeCallInbox(&receiver);
        receiver.moveToThread(&thread);
        thread.start();
        QObject back;
        Taker<std::pair<int, QThread*>> answers;
        auto answer = answers.inbox(Keep::Every, &back);
        for (int i = 0; i < 3; ++i) calls->put([answer, i] { answer->put({i, QThread::currentThread()}); });
        auto count = [&] {
            size_t n = 0;
            for (const auto& batch : answers.batches) n += batch.size();
            return n;
        };
        while (count() < 3) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        int next = 0;
        for (const auto& batch : answers.batches)
            for (const auto& [i, ranOn] : batch) {
                QCOMPARE(i, next++);
                QCOMPARE(ranOn, &thread);
            }
        // The receiver comes back to this thread before it is destroyed here
        // (one call: a later one would be woken on this thread, which waits).
        QThread* home = QThread::currentThread();
        calls->put([&receiver, &thread, home] {
            receiver.moveToThread(home);
            thread.quit();
        });
        thread.wait();
    }

    // A call that destroys the receiver: the calls after it are dropped.
    void callDestroyingTheReceiverDropsTheRest() {
        auto* receiver = new QObject;
        std::shared_ptr<CallInbox> calls = makeCallInbox(receiver);
        std::vector<int> ran;
        calls->put([&ran] { ran.push_back(1); });
        calls->put([&ran, receiver] {
            ran.push_back(2);
            delete receiver;
        });
        calls->put([&ran] { ran.push_back(3); });
        deliverWakeUps();
        QCOMPARE(ran, (std::vector<int>{1, 2}));
        QVERIFY(calls->isClosed());
        QVERIFY(!calls->put([&ran] { ran.push_back(4); }));
    }
};

QTEST_GUILESS_MAIN(InboxTest)
#include "inbox_test.moc"
