// The sizing advice for a remote engine: queueing past its running limit,
// preemption when the conversations at full context outgrow its KV cache,
// slots that hold less than the model's context, what it says when the
// server exposes too little, and a bad number of conversations.
#include <QTest>

#include "remote/RemoteSizing.h"

using namespace weir::desktop;

class RemoteSizingTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QLocale::setDefault(QLocale::c()); }

    // vLLM: a KV cache of 32,768 tokens and a model of 8,192 hold four at full context.
    void kvCacheHoldsThemAll() {
        const RemoteSizingAdvice a = adviseRemoteSizing({4, 8192, 32768, std::nullopt});
        QVERIFY(a.checked);
        QVERIFY(!a.warns());
        QCOMPARE(a.fitAtFullContext.value_or(-1), 4);
        QVERIFY2(a.text.contains(QLatin1String("room for 4 conversations")), qPrintable(a.text));
    }

    void fiveOutgrowTheKvCache() {
        const RemoteSizingAdvice a = adviseRemoteSizing({5, 8192, 32768, std::nullopt});
        QVERIFY(a.preempts);
        QVERIFY(!a.queues);
        QCOMPARE(a.fitAtFullContext.value_or(-1), 4);
        QVERIFY2(a.text.contains(QLatin1String("preempted")), qPrintable(a.text));
        QVERIFY2(a.text.contains(QLatin1String("with 5 conversations at once")), qPrintable(a.text));
    }

    // llama.cpp: four slots; a fifth conversation waits for one.
    void moreThanTheSlotsQueue() {
        const RemoteSizingAdvice a = adviseRemoteSizing({6, 4096, 16384, 4});
        QVERIFY(a.queues);
        QVERIFY(!a.preempts);   // each slot holds the model's whole context
        QVERIFY2(a.text.contains(QLatin1String("more than the 4 requests")), qPrintable(a.text));
        QVERIFY2(a.text.contains(QLatin1String("2 would wait")), qPrintable(a.text));
    }

    // llama.cpp splits its context over the slots: 4 slots of 2,048 for a 8,192 model.
    void slotsSmallerThanTheContext() {
        const RemoteSizingAdvice a = adviseRemoteSizing({2, 8192, 8192, 4});
        QVERIFY(a.preempts);
        QVERIFY(!a.queues);
        QVERIFY2(a.text.contains(QLatin1String("4 slots holds 2048 tokens")), qPrintable(a.text));
    }

    // llama.cpp's slots sharing one cache (-kvu) each report all of it; its
    // size is not known (RemotePoolStatus), what a slot holds is.
    void sharedSlotsHoldTheirOwnContext() {
        const RemoteSizingAdvice small = adviseRemoteSizing({2, 8192, std::nullopt, 4, 2048});
        QVERIFY(small.preempts);
        QVERIFY2(small.text.contains(QLatin1String("4 slots holds 2048 tokens")), qPrintable(small.text));
        // Slots that hold the model's context each: no warning, and the cache's size is not claimed.
        const RemoteSizingAdvice whole = adviseRemoteSizing({2, 8192, std::nullopt, 4, 8192});
        QVERIFY(whole.checked);
        QVERIFY(!whole.warns());
        QVERIFY2(whole.text.contains(QLatin1String("KV cache size is not exposed")), qPrintable(whole.text));
    }

    void queueAndPreemptTogether() {
        const RemoteSizingAdvice a = adviseRemoteSizing({8, 8192, 8192, 4});
        QVERIFY(a.queues);
        QVERIFY(a.preempts);
        QVERIFY(a.text.contains(QLatin1String("would wait")));
        QVERIFY(a.text.contains(QLatin1String("slots holds")));
    }

    void runningLimitOnly() {
        const RemoteSizingAdvice a = adviseRemoteSizing({2, std::nullopt, std::nullopt, 4});
        QVERIFY(a.checked);
        QVERIFY(!a.warns());
        QVERIFY2(a.text.contains(QLatin1String("KV cache size is not exposed")), qPrintable(a.text));
    }

    // Ollama exposes neither; a model without a listed context cannot be checked against the cache.
    void tooLittleExposed() {
        const RemoteSizingAdvice none = adviseRemoteSizing({3, 8192, std::nullopt, std::nullopt});
        QVERIFY(!none.checked);
        QVERIFY(!none.warns());
        QVERIFY2(none.text.startsWith(QLatin1String("Cannot tell whether 3 conversations")), qPrintable(none.text));
        QVERIFY(none.text.contains(QLatin1String("KV cache size")));
        const RemoteSizingAdvice noContext = adviseRemoteSizing({3, std::nullopt, 32768, std::nullopt});
        QVERIFY(!noContext.checked);
        QVERIFY2(noContext.text.contains(QLatin1String("context length")), qPrintable(noContext.text));
    }

    // Zero or negative numbers from a server count as not said, not as a limit of zero.
    void nonsenseFromTheServerIsIgnored() {
        const RemoteSizingAdvice a = adviseRemoteSizing({3, 0, -5, 0});
        QVERIFY(!a.checked);
        QVERIFY(!a.warns());
    }

    void badConversationCount() {
        const RemoteSizingAdvice a = adviseRemoteSizing({0, 8192, 32768, 4});
        QVERIFY(!a.checked);
        QVERIFY(!a.warns());
        QCOMPARE(a.text, QStringLiteral("The number of conversations at once must be at least 1 (it is 0)."));
    }

    void oneConversation() {
        const RemoteSizingAdvice a = adviseRemoteSizing({1, 8192, 32768, std::nullopt});
        QVERIFY2(a.text.startsWith(QLatin1String("1 conversation at once fits")), qPrintable(a.text));
    }
};

QTEST_GUILESS_MAIN(RemoteSizingTest)
#include "remote_sizing_test.moc"
