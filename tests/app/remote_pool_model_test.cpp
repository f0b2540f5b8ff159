// The pool monitor's model for a remote engine: readings from the /metrics
// fixtures of tests/remote become gauges marked with their source, "not
// exposed" where the server does not say; the sizing line follows the
// readings and the conversations at once; polling runs only while the
// monitor is shown and an endpoint is chosen, and stops when it is removed.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/remote/remote_pool_status.h"
#include "remote/RemoteEnginesController.h"
#include "remote/RemotePoolModel.h"
#include "tests/remote/fake_openai_server.h"

using namespace weir::desktop;
using namespace weir::remote;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

namespace {

QByteArray fixture(const char* name) {
    QFile f(QStringLiteral(WEIR_REMOTE_FIXTURES "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s missing", name);
    return f.readAll();
}

RemotePoolStatus fromFixture(const char* name) {
    const PromParseResult r = parsePrometheusText(fixture(name));
    if (!r.ok) qFatal("%s", qPrintable(r.error));
    return poolStatusFromMetrics({r.text, 1000});
}

QVariantMap gaugeOf(const RemotePoolModel& m, const QString& key) {
    for (const QVariant& g : m.gauges())
        if (g.toMap().value(QStringLiteral("key")).toString() == key) return g.toMap();
    qFatal("no gauge %s", qPrintable(key));
}

RemoteClientOptions direct() {
    RemoteClientOptions o;
    o.systemProxy = false;
    o.connectTimeoutMs = 5000;
    o.maxRetries = 0;
    return o;
}

} // namespace

class RemotePoolModelTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<RemoteEnginesController> engines_;

private slots:
    void initTestCase() { QLocale::setDefault(QLocale::c()); }
    void init() { engines_ = std::make_unique<RemoteEnginesController>(dir_.path(), ApiKeyVault::Keyring::Never, direct()); }
    void cleanup() {
        for (const QString& n : engines_->names()) engines_->removeEndpoint(n);
        engines_.reset();
    }

    void vllmGauges() {
        RemotePoolModel m(engines_.get());
        QVERIFY(!m.hasData());
        m.setStatus(fromFixture("vllm_v1.prom"));
        QVERIFY(m.hasData());
        QCOMPARE(m.source(), QStringLiteral("vLLM /metrics"));
        const QVariantMap kv = gaugeOf(m, QStringLiteral("kvUsage"));
        QCOMPARE(kv.value(QStringLiteral("exposed")).toBool(), true);
        QCOMPARE(kv.value(QStringLiteral("text")).toString(), QStringLiteral("41%"));
        QCOMPARE(kv.value(QStringLiteral("detail")).toString(), QStringLiteral("of 32768 tokens"));
        QCOMPARE(kv.value(QStringLiteral("fraction")).toDouble(), 0.4125);
        QCOMPARE(kv.value(QStringLiteral("source")).toString(), QStringLiteral("vLLM /metrics"));
        QCOMPARE(gaugeOf(m, QStringLiteral("running")).value(QStringLiteral("text")).toString(), QStringLiteral("3"));
        QCOMPARE(gaugeOf(m, QStringLiteral("waiting")).value(QStringLiteral("text")).toString(), QStringLiteral("2"));
        QCOMPARE(gaugeOf(m, QStringLiteral("prefixHitRate")).value(QStringLiteral("text")).toString(), QStringLiteral("25%"));
        // One reading gives no rate: not exposed yet, and said so in the notes.
        const QVariantMap tps = gaugeOf(m, QStringLiteral("tokensPerSecond"));
        QCOMPARE(tps.value(QStringLiteral("exposed")).toBool(), false);
        QCOMPARE(tps.value(QStringLiteral("text")).toString(), QStringLiteral("not exposed"));
        QCOMPARE(tps.value(QStringLiteral("fraction")).toDouble(), -1.0);
        QVERIFY(m.notes().join(u'\n').contains(QLatin1String("tokens/s: not exposed by vLLM /metrics")));
    }

    void llamaCppWithSlots() {
        RemotePoolModel m(engines_.get());
        RemotePoolStatus s = fromFixture("llamacpp.prom");
        addLlamaCppSlots(s, QJsonDocument::fromJson(R"([{"id":0,"n_ctx":4096,"is_processing":true},
                                                        {"id":1,"n_ctx":4096,"is_processing":false}])").array());
        m.setStatus(s);
        QCOMPARE(m.source(), QStringLiteral("llama.cpp server /metrics"));
        QCOMPARE(gaugeOf(m, QStringLiteral("kvUsage")).value(QStringLiteral("text")).toString(), QStringLiteral("25%"));
        // Two slots of 4096 that may share one cache: what each holds, not a sum.
        QCOMPARE(gaugeOf(m, QStringLiteral("kvUsage")).value(QStringLiteral("detail")).toString(), QStringLiteral("2 slots of 4096 tokens"));
        const QVariantMap prefix = gaugeOf(m, QStringLiteral("prefixHitRate"));
        QCOMPARE(prefix.value(QStringLiteral("text")).toString(), QStringLiteral("not exposed"));
        const QVariantMap running = gaugeOf(m, QStringLiteral("running"));
        QCOMPARE(running.value(QStringLiteral("detail")).toString(), QStringLiteral("of 2 at most"));
        QCOMPARE(running.value(QStringLiteral("fraction")).toDouble(),
                 running.value(QStringLiteral("text")).toString().toDouble() / 2.0);

        // Two slots of 4096 for a model of 8192: a long conversation does not fit its slot.
        m.setContextLength(8192);
        m.setConversationsAtOnce(1);
        QVERIFY(m.sizingWarns());
        QVERIFY2(m.sizing().contains(QLatin1String("2 slots holds 4096 tokens")), qPrintable(m.sizing()));
        m.setConversationsAtOnce(3);
        QVERIFY2(m.sizing().contains(QLatin1String("1 would wait")), qPrintable(m.sizing()));
    }

    void ollamaExposesNoGauges() {
        RemotePoolModel m(engines_.get());
        m.setStatus(poolStatusFromOllama(QJsonDocument::fromJson(R"({"models":[{"name":"llama3.2:latest"}]})").object()));
        QCOMPARE(m.source(), QStringLiteral("Ollama /api/ps"));
        for (const QVariant& g : m.gauges()) {
            QCOMPARE(g.toMap().value(QStringLiteral("exposed")).toBool(), false);
            QCOMPARE(g.toMap().value(QStringLiteral("text")).toString(), QStringLiteral("not exposed"));
        }
        QCOMPARE(m.loadedModels(), QStringList{QStringLiteral("llama3.2:latest")});
        QVERIFY(!m.sizingWarns());
        QVERIFY(m.sizing().startsWith(QLatin1String("Cannot tell")));
    }

    // Nothing is asked until the monitor shows a chosen endpoint; then the
    // pools and the model's context length; hiding the monitor stops it.
    void pollsOnlyWhileShown() {
        FakeOpenAiServer server;
        const QByteArray page = fixture("vllm_v1.prom");
        server.route("/metrics", [page](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", page, {}, "text/plain"); });
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK", R"({"data":[{"id":"Qwen/Qwen3-8B","max_model_len":16384}]})");
        });
        QCOMPARE(engines_->addEndpoint(QStringLiteral("vllm"), server.baseUrl(), QStringLiteral("k"), QStringLiteral("Qwen/Qwen3-8B")), QString());
        RemotePoolModel m(engines_.get());
        QSignalSpy polling(&m, &RemotePoolModel::pollingChanged);

        m.setEndpointName(QStringLiteral("vllm"));   // chosen, but the monitor is not on screen
        QVERIFY(!m.polling());
        QCOMPARE(m.serverUrl(), server.baseUrl());
        QCOMPARE(m.model(), QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(server.requests().size(), 0);

        m.setActive(true);
        QVERIFY(m.polling());
        QTRY_VERIFY_WITH_TIMEOUT(m.hasData(), 15000);
        QCOMPARE(m.source(), QStringLiteral("vLLM /metrics"));
        QTRY_COMPARE_WITH_TIMEOUT(m.contextLength(), 16384, 15000);
        // 32768 tokens of KV cache hold two at 16384; four would be preempted.
        QVERIFY(m.sizingWarns());
        QVERIFY2(m.sizing().contains(QLatin1String("room for 2 conversations")), qPrintable(m.sizing()));
        m.setConversationsAtOnce(2);
        QVERIFY(!m.sizingWarns());
        for (const SeenRequest& r : server.requests()) QCOMPARE(r.headers.value("authorization"), QByteArray("Bearer k"));

        m.setActive(false);
        QVERIFY(!m.polling());
        QVERIFY(m.hasData());   // the last reading stays on screen
        QCOMPARE(polling.count(), 2);

        // Back to the local engine: nothing remote is shown.
        m.setActive(true);
        m.setEndpointName(QString());
        QVERIFY(!m.polling());
        QVERIFY(!m.hasData());
        QCOMPARE(m.serverUrl(), QString());
    }

    void removedEndpointGoesBackToLocal() {
        QCOMPARE(engines_->addEndpoint(QStringLiteral("gone"), QStringLiteral("http://127.0.0.1:9/v1"), QString()), QString());
        RemotePoolModel m(engines_.get());
        m.setEndpointName(QStringLiteral("gone"));
        QSignalSpy changed(&m, &RemotePoolModel::endpointChanged);
        QCOMPARE(engines_->removeEndpoint(QStringLiteral("gone")), QString());
        QCOMPARE(m.endpointName(), QString());
        QVERIFY(changed.count() >= 1);
    }
};

QTEST_GUILESS_MAIN(RemotePoolModelTest)
#include "remote_pool_model_test.moc"
