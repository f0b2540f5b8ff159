// weir::server::ApiServer in process, on a tiny random-weight Gemma 3 (no
// default model needed): the API the app uses (start/stop/url/signals), JSON
// and SSE answers over a real socket, engine events arriving on the server's
// thread, 503 from a full queue, a disconnecting client cancelled, stop()
// ending requests in flight, and the warning for a non-loopback address.
#include <QtTest>

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>

#include "app/server/api_server.h"
#include "tests/server/http_test_client.h"
#include "weir/engine.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using weir::Engine;
using weir::EngineOptions;
using weir::server::ApiServer;
using weir::server::ServerOptions;
using namespace weir::test::http;


class ApiServerTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;

    EngineOptions options() const {
        EngineOptions o;
        o.modelPath = model_;
        o.threads = 2;
        o.maxRunningRequests = 2;
        o.prefillChunk = 64;
        o.maxContext = 8192;
        o.checkIntegrityEveryStep = true;
        return o;
    }

    ServerOptions serverOptions() const {
        ServerOptions s;
        s.port = 0;
        s.modelId = QStringLiteral("tiny");
        return s;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny-gemma3.gguf").toStdString();
        weir::test::writeTinyGemma3(model_);
    }

    void servesJsonAndSse() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QSignalSpy listening(&server, &ApiServer::listeningChanged);
        QSignalSpy started(&server, &ApiServer::sessionStarted);
        QSignalSpy finished(&server, &ApiServer::sessionFinished);
        QString error, warning;
        QVERIFY2(server.start(&error, &warning), qPrintable(error));
        QVERIFY(warning.isEmpty());
        QVERIFY(server.isListening());
        QCOMPARE(listening.count(), 1);
        QVERIFY(server.port() > 0);
        QCOMPARE(server.url(), QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port()));

        QNetworkAccessManager nam;
        Reply r = send(nam, server.url() + "/models", "GET");
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["data"].toArray()[0].toObject()["id"].toString(), QStringLiteral("tiny"));

        // The sinks' events are handled on this thread.
        Qt::HANDLE handledOn = nullptr;
        connect(&server, &ApiServer::sessionFinished, this, [&] { handledOn = QThread::currentThreadId(); });
        r = send(nam, server.url() + "/chat/completions", "POST", chatBody(8, false));
        QCOMPARE(r.status, 200);
        const QJsonObject done = obj(r.body);
        QCOMPARE(done["object"].toString(), QStringLiteral("chat.completion"));
        const QString finish = done["choices"].toArray()[0].toObject()["finish_reason"].toString();
        QVERIFY2(finish == "stop" || finish == "length", qPrintable(finish));
        QVERIFY(done["usage"].toObject()["prompt_tokens"].toInt() > 0);
        QCOMPARE(handledOn, QThread::currentThreadId());
        QCOMPARE(started.count(), 1);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(started[0][1].toString(), finished[0][1].toString());
        QVERIFY(started[0][1].toString().startsWith(QStringLiteral("api:")));
        QCOMPARE(finished[0][2].toString(), finish);

        r = send(nam, server.url() + "/chat/completions", "POST", chatBody(8, true));
        QCOMPARE(r.status, 200);
        QVERIFY(r.header("content-type").startsWith("text/event-stream"));
        const QList<QByteArray> events = r.body.split('\n');
        QByteArrayList data;
        for (const QByteArray& line : events)
            if (line.startsWith("data: ")) data << line.mid(6);
        QVERIFY(data.size() >= 3);
        QCOMPARE(data.last(), QByteArray("[DONE]"));
        for (int i = 0; i + 1 < data.size(); ++i) QVERIFY(QJsonDocument::fromJson(data[i]).isObject());

        r = send(nam, server.url() + "/chat/completions", "POST", chatBody(8, false, "other"));
        QCOMPARE(r.status, 404);
        QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("model_not_found"));

        r = send(nam, server.url() + "/stats", "GET");
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["requests"].toObject()["succeeded"].toInt(), 2);

        server.stop();
        QVERIFY(!server.isListening());
        QCOMPARE(listening.count(), 2);
        QCOMPARE(listening[1][0].toBool(), false);
        const weir::CacheStatus st = engine.cacheStatus();
        QCOMPARE(st.violations, uint64_t(0));
    }

    void apiKey() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.apiKey = QStringLiteral("secret");
        ApiServer server(engine, so);
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        Reply r = send(nam, server.url() + "/models", "GET");
        QCOMPARE(r.status, 401);
        QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("missing_api_key"));
        r = send(nam, server.url() + "/models", "GET", {}, "Bearer wrong");
        QCOMPARE(r.status, 401);
        QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("invalid_api_key"));
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "Bearer secret").status, 200);
        QCOMPARE(send(nam, QStringLiteral("http://127.0.0.1:%1/health").arg(server.port()), "GET").status, 200);
    }

    // A wait queue of zero: the engine refuses every request, the client gets 503 + Retry-After.
    void queueFullIs503() {
        EngineOptions o = options();
        o.maxWaiting = 0;
        Engine engine(o);
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        for (bool stream : {false, true}) {
            const Reply r = send(nam, server.url() + "/chat/completions", "POST", chatBody(4, stream));
            QCOMPARE(r.status, 503);
            QVERIFY(r.header("retry-after").toInt() >= 1);
            QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("queue_full"));
        }
    }

    // The client hangs up mid-stream: the request is cancelled and its pages freed.
    void disconnectCancels() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QSignalSpy finished(&server, &ApiServer::sessionFinished);
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        QNetworkRequest req{QUrl(server.url() + "/chat/completions")};
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        // ignore_eos: the random-weight model would otherwise end on its own
        // before the client hangs up, now that decoding is fast.
        QJsonObject body = obj(chatBody(8000, true));
        body["ignore_eos"] = true;
        QNetworkReply* r = nam.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
        QEventLoop loop;
        connect(r, &QNetworkReply::readyRead, &loop, &QEventLoop::quit);
        connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        QVERIFY(!r->isFinished());
        r->abort();
        r->deleteLater();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished[0][2].toString(), QStringLiteral("cancelled"));
        QCOMPARE(server.activeRequests(), 0);
        engine.clearPrefixCache();
        const weir::CacheStatus st = engine.cacheStatus();
        QCOMPARE(st.running, 0);
        QCOMPARE(st.full.freeTokens, st.full.capacityTokens);
        QCOMPARE(st.window.freeTokens, st.window.capacityTokens);
        QCOMPARE(st.violations, uint64_t(0));
    }

    // stop() ends what is in flight: the client hears why, the app sees "cancelled".
    void stopEndsRequestsInFlight() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QSignalSpy finished(&server, &ApiServer::sessionFinished);
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        QNetworkRequest req{QUrl(server.url() + "/chat/completions")};
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        // ignore_eos: the random-weight model would otherwise end on its own
        // before the client hangs up, now that decoding is fast.
        QJsonObject body = obj(chatBody(8000, true));
        body["ignore_eos"] = true;
        QNetworkReply* r = nam.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
        QEventLoop loop;
        connect(r, &QNetworkReply::readyRead, &loop, &QEventLoop::quit);
        loop.exec();
        server.stop();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished[0][2].toString(), QStringLiteral("cancelled"));
        QTRY_VERIFY_WITH_TIMEOUT(r->isFinished(), 60000);
        r->deleteLater();
        QTRY_COMPARE_WITH_TIMEOUT(engine.cacheStatus().running, 0, 60000);
        // It can start again on a fresh port.
        QVERIFY(server.start());
        QCOMPARE(send(nam, server.url() + "/models", "GET").status, 200);
    }

    void nonLoopbackNeedsSayingSo() {
        QVERIFY(ApiServer::isLoopbackHost(QStringLiteral("127.0.0.1")));
        QVERIFY(ApiServer::isLoopbackHost(QStringLiteral("::1")));
        QVERIFY(ApiServer::isLoopbackHost(QStringLiteral("localhost")));
        QVERIFY(!ApiServer::isLoopbackHost(QStringLiteral("0.0.0.0")));
        QVERIFY(!ApiServer::isLoopbackHost(QStringLiteral("192.168.1.5")));
        QCOMPARE(ServerOptions{}.host, QStringLiteral("127.0.0.1"));
        QCOMPARE(ServerOptions{}.port, quint16(8719));

        Engine engine(options());
        ServerOptions so = serverOptions();
        so.host = QStringLiteral("0.0.0.0");
        ApiServer server(engine, so);
        QString error, warning;
        QVERIFY2(server.start(&error, &warning), qPrintable(error));
        QVERIFY2(warning.contains(QStringLiteral("other machines")), qPrintable(warning));
        QVERIFY(warning.contains(QStringLiteral("no API key")));
        QVERIFY(server.url().startsWith(QStringLiteral("http://127.0.0.1:")));
        server.stop();

        ServerOptions bad = serverOptions();
        bad.host = QStringLiteral("not an address");
        ApiServer refused(engine, bad);
        QVERIFY(!refused.start(&error));
        QVERIFY(error.contains(QStringLiteral("not an address")));
    }
};

QTEST_GUILESS_MAIN(ApiServerTest)
#include "api_server_test.moc"
