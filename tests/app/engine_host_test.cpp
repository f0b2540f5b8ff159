// EngineHost on the fake engine: loading in the background (success,
// failure, cancel), streaming in order with one terminal event, several
// requests at once with a queue beyond max running, cancel, and errors when
// there is no model. The GUI thread keeps running while the engine loads.
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include "FakeEngineBackend.h"
#include "engine_host/EngineHost.h"
#include "weir/base/error.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using testing::FakeEngineConfig;

namespace {

std::vector<weir::Message> prompt(const char* text) { return {{"user", text}}; }

#define WAIT_LOADED(host) QTRY_VERIFY_WITH_TIMEOUT((host).state() != EngineHost::Loading, 30000)
#define WAIT_READY(host) do { WAIT_LOADED(host); QCOMPARE((host).state(), EngineHost::Ready); } while (0)

struct Collected {
    QString text;
    int tokens = 0, signals_ = 0;
    bool finished = false, cancelled = false;
    QString error;
};

} // namespace

class EngineHostTest : public QObject {
    Q_OBJECT
private slots:
    void loadsInTheBackground() {
        FakeEngineConfig config;
        config.loadDelayMs = 300;
        EngineHost host(FakeEngineBackend::factory(config));
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, [&] { ++ticks; });
        ticker.start(5);
        host.load(QStringLiteral("/models/fake.gguf"));
        QCOMPARE(host.state(), EngineHost::Loading);
        WAIT_READY(host);
        QVERIFY2(ticks > 0, "the GUI event loop must keep running while the model loads");
        const QVariantMap info = host.modelInfo();
        QCOMPARE(info.value("name").toString(), QStringLiteral("Fake Gemma"));
        QCOMPARE(info.value("layers").toInt(), 18);
        QCOMPARE(info.value("slidingLayers").toInt(), 15);
        QCOMPARE(info.value("layerPattern").toString(), QStringLiteral("SSSSSFSSSSSFSSSSSF"));
        QCOMPARE(info.value("slidingWindow").toInt(), 512);
        QCOMPARE(host.modelPath(), QStringLiteral("/models/fake.gguf"));
    }

    void loadFailureIsReportedWithItsMessage() {
        FakeEngineConfig config;
        config.failLoad = "unsupported architecture 'mamba'";
        EngineHost host(FakeEngineBackend::factory(config));
        host.load(QStringLiteral("bad.gguf"));
        WAIT_LOADED(host);
        QCOMPARE(host.state(), EngineHost::Failed);
        QCOMPARE(host.errorString(), QStringLiteral("unsupported architecture 'mamba'"));
    }

    // Before: a bad file unloaded the working model first and left none, and
    // every running reply was ended.
    void badFileLeavesTheModelInUse() {
        FakeEngineConfig config;
        config.endless = true;
        EngineHost host(FakeEngineBackend::factory(config));
        host.setFileCheck([](const std::string& path) {
            if (path.find("bad") != std::string::npos) throw weir::Error(path + ": missing metadata key general.architecture");
        });
        host.load(QStringLiteral("good.gguf"));
        WAIT_READY(host);
        bool ended = false;
        connect(&host, &EngineHost::failed, [&](quint64) { ended = true; });
        connect(&host, &EngineHost::cancelled, [&](quint64) { ended = true; });
        weir::GenerateRequest request;
        request.maxTokens = 100000;
        const quint64 ticket = host.submit(conversationTag(1), prompt("keep going"), request);
        QSignalSpy refused(&host, &EngineHost::loadRefused);
        QSignalSpy states(&host, &EngineHost::stateChanged);
        host.load(QStringLiteral("bad.gguf"));
        QTRY_COMPARE_WITH_TIMEOUT(refused.count(), 1, 30000);
        QCOMPARE(refused.at(0).at(0).toString(), QStringLiteral("bad.gguf"));
        QVERIFY(refused.at(0).at(1).toString().contains(QStringLiteral("general.architecture")));
        // A plain sentence leads, the reader's detail follows (issue 26).
        QVERIFY2(refused.at(0).at(1).toString().startsWith(QStringLiteral("Weir cannot load this model. bad.gguf: missing")),
                 qPrintable(refused.at(0).at(1).toString()));
        QCOMPARE(states.count(), 0);  // never Loading, never Failed
        QCOMPARE(host.state(), EngineHost::Ready);
        QCOMPARE(host.modelPath(), QStringLiteral("good.gguf"));
        QVERIFY(host.isActive(ticket));
        QVERIFY(!ended);
        // A file that passes the check replaces the model as before.
        host.load(QStringLiteral("other.gguf"));
        QTRY_COMPARE_WITH_TIMEOUT(host.modelPath(), QStringLiteral("other.gguf"), 30000);
        WAIT_READY(host);
        QVERIFY(ended);  // the reply was ended by the switch
    }

    void cancelledLoadNeverBecomesReady() {
        FakeEngineConfig config;
        config.loadDelayMs = 200;
        EngineHost host(FakeEngineBackend::factory(config));
        host.load(QStringLiteral("a.gguf"));
        host.cancelLoad();
        QCOMPARE(host.state(), EngineHost::NoModel);  // at once
        QList<EngineHost::State> seen;
        connect(&host, &EngineHost::stateChanged, [&] { seen.append(host.state()); });
        host.load(QStringLiteral("b.gguf"));
        WAIT_READY(host);
        QCOMPARE(seen, (QList<EngineHost::State>{EngineHost::Loading, EngineHost::Ready}));
        QCOMPARE(host.modelPath(), QStringLiteral("b.gguf"));
    }

    void streamsInOrderWithOneTerminalEvent() {
        EngineHost host(FakeEngineBackend::factory());
        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        QMap<quint64, Collected> got;
        connect(&host, &EngineHost::tokens, [&](quint64 t, const QString& text, int n) {
            QVERIFY(!got[t].finished);
            got[t].text += text;
            got[t].tokens += n;
            ++got[t].signals_;
        });
        int terminals = 0;
        connect(&host, &EngineHost::finished, [&](quint64 t, const weir::Usage& u, weir::FinishReason) {
            got[t].finished = true;
            ++terminals;
            QCOMPARE(u.completionTokens, got[t].tokens);
        });
        weir::GenerateRequest request;
        request.maxTokens = 1000;
        const quint64 ticket = host.submit(conversationTag(1), prompt("hello there"), request);
        QVERIFY(ticket != 0);
        QTRY_VERIFY_WITH_TIMEOUT(got[ticket].finished, 30000);
        QCOMPARE(terminals, 1);
        // The fake's reply for this client and prompt size (2 words + 2 framing tokens).
        QCOMPARE(got[ticket].text, QString::fromStdString(testing::fakeReplyFor(testing::tagText(conversationTag(1)) + " (4 tokens)")));
        QVERIFY(got[ticket].signals_ <= got[ticket].tokens);
        QVERIFY(!host.isActive(ticket));
    }

    void severalAtOnceWithAQueue() {
        EngineHost host(FakeEngineBackend::factory());
        weir::EngineOptions options;
        options.maxRunningRequests = 2;
        host.setEngineOptions(options);
        host.setStatusInterval(20);
        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        int maxRunning = 0, maxWaiting = 0;
        connect(&host, &EngineHost::statusUpdated, [&](const weir::CacheStatus& s) {
            maxRunning = std::max(maxRunning, int(s.running));
            maxWaiting = std::max(maxWaiting, int(s.waiting));
        });
        QSet<quint64> done;
        connect(&host, &EngineHost::finished, [&](quint64 t, const weir::Usage&, weir::FinishReason) { done.insert(t); });
        weir::GenerateRequest request;
        QList<quint64> tickets;
        for (int i = 0; i < 3; ++i)
            tickets << host.submit(conversationTag(i + 1), prompt("go"), request);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 3, 30000);
        QCOMPARE(maxRunning, 2);
        QCOMPARE(maxWaiting, 1);
        QCOMPARE(host.activeRequests(), 0);
    }

    void cancelEndsARequest() {
        FakeEngineConfig config;
        config.endless = true;
        EngineHost host(FakeEngineBackend::factory(config));
        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        int tokens = 0;
        bool cancelled = false;
        connect(&host, &EngineHost::tokens, [&](quint64, const QString&, int n) {
            QVERIFY2(!cancelled, "no tokens after the terminal event");
            tokens += n;
        });
        connect(&host, &EngineHost::cancelled, [&](quint64) { cancelled = true; });
        const quint64 ticket = host.submit(conversationTag(1), prompt("forever"), {});
        QTRY_VERIFY_WITH_TIMEOUT(tokens > 5, 30000);
        host.cancel(ticket);
        QTRY_VERIFY_WITH_TIMEOUT(cancelled, 30000);
        QVERIFY(!host.isActive(ticket));
        QTest::qWait(50);  // any stray token would fail the check above
    }

    void errorsWithoutAModelOrOnUnload() {
        FakeEngineConfig config;
        config.endless = true;
        EngineHost host(FakeEngineBackend::factory(config));
        QSignalSpy failed(&host, &EngineHost::failed);
        const quint64 early = host.submit(conversationTag(1), prompt("x"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QCOMPARE(failed.at(0).at(0).toULongLong(), early);
        QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("No model is loaded."));

        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        const quint64 running = host.submit(conversationTag(1), prompt("x"), {});
        host.unload();
        QCOMPARE(failed.count(), 2);
        QCOMPARE(failed.at(1).at(0).toULongLong(), running);
        QVERIFY(failed.at(1).at(1).toString().contains(QStringLiteral("unloaded")));
    }

    void clearPrefixCacheFreesCachedPages() {
        EngineHost host(FakeEngineBackend::factory());
        host.setStatusInterval(20);
        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        qint64 cached = -1;
        connect(&host, &EngineHost::statusUpdated, [&](const weir::CacheStatus& s) { cached = s.full.cachedTokens; });
        QTRY_VERIFY_WITH_TIMEOUT(cached > 0, 10000);
        host.clearPrefixCache();
        QTRY_COMPARE_WITH_TIMEOUT(cached, qint64(0), 10000);
    }

    void refusedRequestEndsWithTheEnginesMessage() {
        FakeEngineConfig config;
        config.refuseTagKind = kConversationTagKind;
        config.refuseTagId = 999;
        EngineHost host(FakeEngineBackend::factory(config));
        host.load(QStringLiteral("m.gguf"));
        WAIT_READY(host);
        QSignalSpy failed(&host, &EngineHost::failed);
        host.submit(conversationTag(999), prompt("x"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("can never fit")));
    }
};

QTEST_GUILESS_MAIN(EngineHostTest)
#include "engine_host_test.moc"
