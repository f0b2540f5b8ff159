// Conversations on llama.cpp's own server (llama-server on SmolLM2 135M,
// tests/remote/llama_server_process.h), through the app's own path
// (ChatController → GenerationTracker → RemoteReplySource): a reply streams
// in order and is stored with llama-server's own token counts; Stop ends it
// once and keeps the partial; a server killed mid-reply fails the reply in plain words with the partial kept, and
// the next reply works once it is back; a refused key fails in plain words
// with the user's message kept; a forced tool call the server answers in
// words fails in words with the text kept; the remote pool monitor shows
// llama.cpp's gauges, marked with their source. Skipped (exit 77) when llama-server or
// the model is not there.
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "FakeEngineBackend.h"
#include "app/remote/prometheus_text.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "remote/RemoteEnginesController.h"
#include "remote/RemotePoolModel.h"
#include "storage/Storage.h"
#include "tests/remote/llama_server_process.h"
#include "tools/ToolRegistry.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using weir::remote::ApiKeyVault;
using weir::remote::RemoteClientOptions;
using weir::test::LlamaServer;
using weir::test::patienceMs;

namespace {

const QString kKey = QStringLiteral("llama-test-key");

RemoteClientOptions direct() {
    RemoteClientOptions o;
    o.systemProxy = false;
    o.connectTimeoutMs = patienceMs();
    o.readTimeoutMs = patienceMs();
    o.maxRetries = 0;
    return o;
}

// The app's parts with no local model loaded: a remote conversation needs none.
struct Fixture {
    Fixture() : storage(dir.path()), host(FakeEngineBackend::factory({})) {
        QVERIFY(storage.open());
        remote = std::make_unique<RemoteEnginesController>(dir.path(), ApiKeyVault::Keyring::Never, direct());
        chat = std::make_unique<ChatController>(&storage, &host);
        chat->setRemoteEngines(remote.get());
    }
    // A conversation on the endpoint "llama" at `server`, greedy and short.
    qint64 conversationOn(const LlamaServer& server, const QString& key = kKey, int maxTokens = 24) {
        const QString problem = remote->addEndpoint(QStringLiteral("llama"), server.baseUrl(), key, QStringLiteral("smollm2"));
        if (!problem.isEmpty()) qWarning() << problem;
        const qint64 id = chat->newConversation();
        chat->setEngine(id, QStringLiteral("llama"));
        chat->setSettingsOf(id, {{QStringLiteral("temperature"), 0.0}, {QStringLiteral("maxTokens"), maxTokens},
                                 {QStringLiteral("seed"), 7}});
        return id;
    }
    QTemporaryDir dir;
    Storage storage;
    EngineHost host;
    std::unique_ptr<RemoteEnginesController> remote;
    std::unique_ptr<ChatController> chat;
};

// llama-server's own counters (--metrics): generated tokens, and prompt tokens computed plus found cached.
struct Counters {
    double predicted = -1, prompt = -1;
};
Counters countersOf(const LlamaServer& server) {
    QByteArray body;
    Counters c;
    if (server.get(QStringLiteral("/metrics"), &body) != 200) return c;
    const weir::remote::PromParseResult parsed = weir::remote::parsePrometheusText(body);
    auto value = [&](const char* name) {
        const QList<const weir::remote::PromSample*> s = parsed.text.samples(QLatin1String(name));
        return s.isEmpty() ? -1.0 : s.first()->value;
    };
    c.predicted = value("llamacpp:tokens_predicted_total");
    c.prompt = value("llamacpp:prompt_tokens_total") + value("llamacpp:prompt_tokens_cached_total");
    return c;
}


} // namespace

class LlamaServerConversationTest : public QObject {
    Q_OBJECT
    LlamaServer server_;

private slots:
    void initTestCase() {
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
        QString why;
        QVERIFY2(server_.start({kKey}, &why), qPrintable(why));
    }

    void cleanupTestCase() { server_.stop(); }

    // What the view shows only grows (each text starts with the one before),
    // ends as the stored reply, and the stored counts are llama-server's.
    void aReplyStreamsInOrderAndIsStoredWithItsUsage() {
        Fixture f;
        const qint64 id = f.conversationOn(server_);
        const Counters before = countersOf(server_);
        QStringList shown;
        connect(f.chat->messages(), &QAbstractItemModel::dataChanged, f.chat.get(), [&] {
            if (f.chat->messages()->rowCount() < 2) return;
            const QString text = f.chat->messages()->get(1).value(QStringLiteral("content")).toString();
            if (shown.isEmpty() || shown.last() != text) shown << text;
        });
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Name three colours of the rainbow.")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));

        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QVERIFY(!stored[1].content.isEmpty());
        QVERIFY(!shown.isEmpty());
        for (int i = 1; i < shown.size(); ++i) QVERIFY2(shown[i].startsWith(shown[i - 1]), qPrintable(shown[i]));
        QCOMPARE(shown.last(), stored[1].content);
        QCOMPARE(stored[1].model, QStringLiteral("smollm2"));
        QVERIFY(stored[1].completionTokens > 0 && stored[1].completionTokens <= 24);
        QVERIFY(stored[1].promptTokens > 0);
        // The server counts this request the same way (its counters may lag the answer by a moment).
        QTRY_COMPARE_WITH_TIMEOUT(countersOf(server_).predicted - before.predicted, double(stored[1].completionTokens), patienceMs());
        QCOMPARE(countersOf(server_).prompt - before.prompt, double(stored[1].promptTokens));
    }

    void stopMidStreamEndsOnceAndKeepsThePartial() {
        Fixture f;
        const qint64 id = f.conversationOn(server_, kKey, 400);
        const QString predicted = QStringLiteral("llamacpp:tokens_predicted_total");
        const double before = server_.metric(predicted);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        int pieces = 0;
        connect(f.chat.get(), &ChatController::replyTokens, f.chat.get(), [&] {
            if (++pieces == 2) f.chat->stop();
        });
        QVERIFY(f.chat->send(QStringLiteral("Tell me a long story about a river and a mill.")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("cancelled"));
        QVERIFY(!f.chat->currentGenerating());
        QTest::qWait(100);
        QCOMPARE(ended.count(), 1);
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].state, MessageState::Cancelled);
        QVERIFY(!stored[1].content.isEmpty());
        // llama-server saw the connection close: it ends the request long before the 400 tokens.
        QTRY_VERIFY_WITH_TIMEOUT(!server_.anySlotBusy(), patienceMs());
        QTRY_VERIFY_WITH_TIMEOUT(server_.metric(predicted) > before, patienceMs());
        const double generated = server_.metric(predicted) - before;
        QVERIFY2(generated > 0 && generated < 400, qPrintable(QString::number(generated)));
    }

    void aServerKilledMidReplyKeepsThePartialAndTheNextReplyWorks() {
        LlamaServer own;
        QString why;
        QVERIFY2(own.start({kKey}, &why), qPrintable(why));
        Fixture f;
        const qint64 id = f.conversationOn(own, kKey, 400);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        int pieces = 0;
        connect(f.chat.get(), &ChatController::replyTokens, f.chat.get(), [&] {
            if (++pieces == 2) own.kill();   // the server dies mid-reply
        });
        QVERIFY(f.chat->send(QStringLiteral("Tell me a long story about a river and a mill.")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        QTest::qWait(100);
        QCOMPARE(ended.count(), 1);
        QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].state, MessageState::Failed);
        QVERIFY(!stored[1].content.isEmpty());
        QCOMPARE(stored[1].error, QStringLiteral("The connection to 127.0.0.1:%1 ended before the answer finished (the text "
                                                 "so far is kept).").arg(own.port()));

        // Back on the same port: the next message is answered.
        QVERIFY2(own.restart(&why), qPrintable(why));
        f.chat->setSettingsOf(id, {{QStringLiteral("maxTokens"), 16}});
        QVERIFY(f.chat->send(QStringLiteral("Say hello.")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, patienceMs());
        QCOMPARE(ended.at(1).at(2).toString(), QStringLiteral("complete"));
        stored = f.storage.messages(id);
        QCOMPARE(stored.last().state, MessageState::Complete);
        QVERIFY(!stored.last().content.isEmpty());
    }

    void aWrongKeyIsRefusedAndNothingTypedIsLost() {
        Fixture f;
        const qint64 id = f.conversationOn(server_, QStringLiteral("not-the-key"));
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Are you there?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Are you there?"));
        QCOMPARE(stored[1].state, MessageState::Failed);
        QCOMPARE(stored[1].error, QStringLiteral("127.0.0.1:%1 refused the API key (HTTP 401). Check the key in the "
                                                 "endpoint's settings. The server said: Invalid API Key").arg(server_.port()));
        QCOMPARE(f.chat->messages()->get(1).value("error").toString(), stored[1].error);
    }

    // The calculator forced: the app sends tool_choice "required" with that
    // tool alone, and this llama-server writes words for SmolLM2 all the
    // same. The reply fails once, saying so; its text, its counts and the
    // message typed stay.
    void aForcedCallAnsweredInWordsFailsWithItsTextKept() {
        Fixture f;
        ToolRegistry tools;
        f.chat->setToolRegistry(&tools);
        const qint64 id = f.conversationOn(server_, kKey, 16);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QVERIFY(f.chat->sendForcing(id, QStringLiteral("What is (2+3)*4?"), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("failed"));
        QTest::qWait(100);
        QCOMPARE(ended.count(), 1);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("What is (2+3)*4?"));
        QCOMPARE(stored[1].state, MessageState::Failed);
        QVERIFY(!stored[1].content.isEmpty());
        QVERIFY(stored[1].completionTokens > 0 && stored[1].completionTokens <= 16);
        QCOMPARE(stored[1].error, QStringLiteral("The remote engine \u2018llama\u2019 answered without calling \u201ccalculator\u201d, "
                                                 "which this reply was asked to call (its text is kept below). Its server may "
                                                 "not support forced tool calls for the model smollm2."));
        QVERIFY(f.storage.toolCalls(stored[1].id).isEmpty());
    }

    // The monitor on the endpoint: llama.cpp's gauges, each marked with where it came from.
    void thePoolMonitorShowsLlamaCppGauges() {
        Fixture f;
        f.conversationOn(server_);
        RemotePoolModel pool(f.remote.get());
        pool.setIntervalMs(300);
        pool.setEndpointName(QStringLiteral("llama"));
        pool.setActive(true);
        QTRY_VERIFY_WITH_TIMEOUT(pool.hasData(), patienceMs());
        QCOMPARE(pool.source(), QStringLiteral("llama.cpp server /metrics"));
        // tokens/s needs two readings.
        QTRY_VERIFY_WITH_TIMEOUT(pool.gauges().last().toMap().value(QStringLiteral("exposed")).toBool(), patienceMs());
        QStringList keys;
        for (const QVariant& v : pool.gauges()) {
            const QVariantMap g = v.toMap();
            keys << g.value(QStringLiteral("key")).toString();
            QVERIFY(!g.value(QStringLiteral("source")).toString().isEmpty());
            if (keys.last() == u"kvUsage") continue;
            QVERIFY2(g.value(QStringLiteral("exposed")).toBool(), qPrintable(keys.last()));
        }
        QCOMPARE(keys, (QStringList{QStringLiteral("kvUsage"), QStringLiteral("running"), QStringLiteral("waiting"),
                                    QStringLiteral("prefixHitRate"), QStringLiteral("tokensPerSecond")}));
        // This llama.cpp has no KV gauge in /metrics, and its two slots of
        // 1,024 tokens may share one cache or not (it does not say): no
        // KV gauge, and a note that says why.
        const QVariantMap kv = pool.gauges()[0].toMap();
        QVERIFY(!kv.value(QStringLiteral("exposed")).toBool());
        QVERIFY2(pool.notes().filter(QStringLiteral("does not say whether its 2 slots share one cache of 1024 tokens")).size() == 1,
                 qPrintable(pool.notes().join(QStringLiteral("; "))));
        const QVariantMap running = pool.gauges()[1].toMap();
        QCOMPARE(running.value(QStringLiteral("source")).toString(), QStringLiteral("llama.cpp server /metrics"));
        QCOMPARE(running.value(QStringLiteral("detail")).toString(), QStringLiteral("of 2 at most"));
    }
};

int main(int argc, char** argv) {
    if (const int skip = weir::test::skipWithoutLlamaServer()) return skip;
    QGuiApplication app(argc, argv);
    LlamaServerConversationTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "llama_server_conversation_test.moc"
