// The pool poller against a fake server playing each kind: vLLM (/metrics,
// two rounds for a rate), llama.cpp's server (/metrics and /slots), Ollama
// (/api/ps), Weir (/v1/cache/status and /v1/stats), a server that exposes
// none of them, one whose /metrics is malformed, and one that is not there.
#include <QtTest>

#include <QFile>

#include "app/remote/remote_pool_poller.h"
#include "tests/remote/fake_openai_server.h"

using namespace weir::remote;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

namespace {

QByteArray fixture(const char* name) {
    QFile f(QStringLiteral(WEIR_REMOTE_FIXTURES "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s missing", name);
    return f.readAll();
}

FakeOpenAiServer::Answer text(QByteArray body, QByteArray type = "text/plain; version=0.0.4") {
    return [=](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", body, {}, type); };
}
FakeOpenAiServer::Answer json(QByteArray body) { return text(body, "application/json"); }

RemoteClientOptions direct() {
    RemoteClientOptions o;
    o.systemProxy = false;
    return o;
}

// One round: the status it read.
RemotePoolStatus pollOnce(RemotePoolPoller& p) {
    QList<RemotePoolStatus> got;
    const auto c = QObject::connect(&p, &RemotePoolPoller::statusRead, [&](const RemotePoolStatus& s) { got << s; });
    p.pollOnce();
    QElapsedTimer t;
    t.start();
    while (got.isEmpty() && t.elapsed() < 15000) QTest::qWait(5);
    QObject::disconnect(c);
    if (got.size() != 1) qFatal("expected one status, got %d", int(got.size()));
    return got.first();
}

QStringList paths(const FakeOpenAiServer& s) {
    QStringList out;
    for (const SeenRequest& r : s.requests()) out << QString::fromLatin1(r.path);
    return out;
}

} // namespace

class RemotePoolPollerTest : public QObject {
    Q_OBJECT
private slots:
    void vllmTwoRounds() {
        FakeOpenAiServer server;
        QByteArray page = fixture("vllm_v1.prom");
        server.route("/metrics", [&](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", page, {}, "text/plain"); });
        RemotePoolPoller p({QUrl(server.baseUrl()), QStringLiteral("k")}, direct());
        QCOMPARE(p.serverRoot(), QUrl(QStringLiteral("http://127.0.0.1:%1").arg(server.port())));
        const RemotePoolStatus a = pollOnce(p);
        QCOMPARE(a.source, RemoteSource::Vllm);
        QCOMPARE(a.kvUsage.value_or(-1), 0.4125);
        QVERIFY(!a.tokensPerSecond);
        QCOMPARE(paths(server), (QStringList{QStringLiteral("/v1/cache/status"), QStringLiteral("/metrics")}));
        QCOMPARE(server.requests()[1].headers.value("authorization"), QByteArray("Bearer k"));
        QTest::qWait(20);   // some time must pass for a rate
        page.replace("4500.0", "4600.0");
        const RemotePoolStatus b = pollOnce(p);
        QVERIFY(b.tokensPerSecond.value_or(0) > 0);
        QCOMPARE(paths(server).size(), 3);   // the second round asks /metrics only
        QCOMPARE(paths(server).last(), QStringLiteral("/metrics"));
    }

    void llamaCppMetricsAndSlots() {
        FakeOpenAiServer server;
        server.route("/metrics", text(fixture("llamacpp.prom")));
        server.route("/slots", json(R"([{"id":0,"n_ctx":4096,"is_processing":true},{"id":1,"n_ctx":4096,"is_processing":false}])"));
        RemotePoolPoller p({QUrl(server.baseUrl()), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.source, RemoteSource::LlamaCpp);
        QCOMPARE(s.kvUsage.value_or(-1), 0.25);
        QCOMPARE(s.maxRunning.value_or(-1), 2);
        QCOMPARE(s.slotContextTokens.value_or(-1), qint64(4096));
        QVERIFY(!s.kvCapacityTokens);   // two slots of 4,096 may share one cache (remote_pool_status_test)
    }

    void ollama() {
        FakeOpenAiServer server;
        server.route("/api/ps", json(R"({"models":[{"name":"llama3.2:latest","size":3383340032}]})"));
        RemotePoolPoller p({QUrl(server.baseUrl()), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.source, RemoteSource::Ollama);
        QCOMPARE(s.loadedModels, QStringList{QStringLiteral("llama3.2:latest")});
        QVERIFY(!s.kvUsage);
        pollOnce(p);
        QCOMPARE(paths(server).last(), QStringLiteral("/api/ps"));
        QCOMPARE(paths(server).size(), 4);   // probe: cache/status, metrics, api/ps; then api/ps only
    }

    void weir() {
        FakeOpenAiServer server;
        server.route("/v1/cache/status", json(R"({"full":{"capacity_tokens":1000,"free_tokens":750},"running":1,"waiting":0})"));
        server.route("/v1/stats", json(R"({"tokens":{"prompt":10,"cached_prompt":5},"throughput":{"generated_tokens_per_second":3.5}})"));
        RemotePoolPoller p({QUrl(server.baseUrl()), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.source, RemoteSource::Weir);
        QCOMPARE(s.kvUsage.value_or(-1), 0.25);
        QCOMPARE(s.running.value_or(-1), 1);
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.5);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 3.5);
    }

    void serverThatExposesNothing() {
        FakeOpenAiServer server;   // 404 everywhere
        RemotePoolPoller p({QUrl(server.baseUrl()), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.source, RemoteSource::Unknown);
        QVERIFY(!s.kvUsage && !s.running && !s.waiting);
        QCOMPARE(s.notes.size(), 1);
        QVERIFY2(s.notes[0].contains(QLatin1String("exposes none of")), qPrintable(s.notes[0]));
    }

    void malformedMetricsPage() {
        FakeOpenAiServer server;
        server.route("/metrics", text("vllm:num_requests_running 1\nvllm:kv_cache_usage_perc{engine=\"0\" 0.5\n"));
        RemotePoolPoller p({QUrl(server.baseUrl()), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.notes.size(), 1);
        QVERIFY2(s.notes[0].contains(QLatin1String("could not be read: line 2:")), qPrintable(s.notes[0]));
    }

    void serverNotThere() {
        quint16 port = 0;
        {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            port = probe.serverPort();
        }
        RemotePoolPoller p({QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)), {}}, direct());
        const RemotePoolStatus s = pollOnce(p);
        QCOMPARE(s.source, RemoteSource::Unknown);
        QCOMPARE(s.notes.size(), 1);
        QVERIFY2(s.notes[0].startsWith(QLatin1String("cannot read the server's pools")), qPrintable(s.notes[0]));
    }
};

QTEST_GUILESS_MAIN(RemotePoolPollerTest)
#include "remote_pool_poller_test.moc"
