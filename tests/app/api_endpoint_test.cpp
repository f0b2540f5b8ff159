// The app's endpoint toggle (ApiEndpoint + EngineHost) on a real engine with
// a tiny random-weight Gemma 3: off by default, settings that persist, the
// server answering HTTP (streaming included) while an app conversation
// generates on the same engine, the app's Stop not waiting while the
// endpoint prepares a prompt of megabytes, following a reload,
// stopping when switched off, a port in use reported in place, the warning
// for every-interface binding, and a clear message where the backend cannot
// be served (the fake engine).
#include <QtTest>

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <QTemporaryDir>

#include "FakeEngineBackend.h"
#include "engine_host/EngineHost.h"
#include "server/ApiEndpoint.h"
#include "settings/AppSettings.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "tests/server/http_test_client.h"
#include "tests/server/raw_http_client.h"

using namespace weir::desktop;
using namespace weir::test::http;
namespace raw = weir::test::raw;


class ApiEndpointTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_;

    weir::EngineOptions options() const {
        weir::EngineOptions o;
        o.threads = 2;
        o.maxRunningRequests = 4;
        o.prefillChunk = 64;
        o.maxContext = 4096;
        o.checkIntegrityEveryStep = true;
        return o;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath(QStringLiteral("tiny-gemma3.gguf"));
        weir::test::writeTinyGemma3(model_.toStdString());
    }

    void offByDefaultAndSettingsPersist() {
        QTemporaryDir data;
        {
            AppSettings settings(data.path(), model_);
            EngineHost host(realEngineFactory());
            ApiEndpoint endpoint(&settings, &host);
            QVERIFY(!endpoint.enabled());
            QCOMPARE(endpoint.port(), kDefaultEndpointPort);
            QCOMPARE(endpoint.host(), QStringLiteral("127.0.0.1"));
            QVERIFY(!endpoint.allowNetwork());
            QVERIFY(endpoint.error().isEmpty());
            endpoint.setPort(9123);
            endpoint.setApiKey(QStringLiteral("secret"));
            endpoint.setAllowNetwork(true);
            QCOMPARE(endpoint.host(), QStringLiteral("0.0.0.0"));
            // Web pages: none by default; a list as typed; a typo is refused and changes nothing.
            QVERIFY(endpoint.corsOrigins().isEmpty());
            endpoint.setCorsOrigins(QStringLiteral("https://App.example/, http://localhost:3000"));
            QVERIFY(endpoint.corsError().isEmpty());
            QCOMPARE(endpoint.corsOrigins(), QStringLiteral("https://app.example, http://localhost:3000"));
            endpoint.setCorsOrigins(QStringLiteral("https://app.example/chat"));
            QVERIFY(endpoint.corsError().contains(QStringLiteral("not an origin")));
            QCOMPARE(endpoint.corsOrigins(), QStringLiteral("https://app.example, http://localhost:3000"));
            endpoint.setEnabled(true);
            // No model yet: enabled, not listening, and it says when it will start.
            QTRY_VERIFY(endpoint.error().contains(QStringLiteral("when a model is loaded")));
            QVERIFY(endpoint.waitingForModel());
            QVERIFY(!endpoint.listening());
        }
        AppSettings again(data.path(), model_);
        const EndpointConfig c = again.endpointConfig();
        QVERIFY(c.enabled);
        QCOMPARE(c.port, 9123);
        QCOMPARE(c.apiKey, QStringLiteral("secret"));
        QCOMPARE(c.host, QStringLiteral("0.0.0.0"));
        QCOMPARE(c.corsOrigins, (QStringList{QStringLiteral("https://app.example"), QStringLiteral("http://localhost:3000")}));
    }

    void servesTheAppsEngineBesideAConversation() {
        QTemporaryDir data;
        AppSettings settings(data.path(), model_);
        EngineHost host(realEngineFactory());
        host.setEngineOptions(options());
        ApiEndpoint endpoint(&settings, &host);
        endpoint.setPort(0);
        endpoint.setCorsOrigins(QStringLiteral("https://app.example"));
        endpoint.setEnabled(true);
        host.load(model_);
        QTRY_VERIFY_WITH_TIMEOUT(host.state() != EngineHost::Loading, 60000);
        QCOMPARE(host.state(), EngineHost::Ready);
        // (Enabled before the model loaded: it said it would start with the model.)
        QTRY_VERIFY2_WITH_TIMEOUT(endpoint.listening(), qPrintable(endpoint.error()), 10000);
        QVERIFY(endpoint.url().startsWith(QStringLiteral("http://127.0.0.1:")));
        QVERIFY(endpoint.warning().isEmpty());

        // The origin set on the card reaches the server: its preflight is answered.
        const quint16 port = quint16(QUrl(endpoint.url()).port());
        const raw::Response preflight = raw::exchange(
            port, raw::request("OPTIONS", "/v1/chat/completions", {},
                               "Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n"));
        QCOMPARE(preflight.status, 204);
        QCOMPARE(preflight.header("access-control-allow-origin"), QByteArray("https://app.example"));

        QNetworkAccessManager nam;
        const Reply models = send(nam, endpoint.url() + "/models", "GET");
        QCOMPARE(models.status, 200);
        QCOMPARE(QJsonDocument::fromJson(models.body).object()["data"].toArray()[0].toObject()["id"].toString(),
                 QStringLiteral("tiny-gemma3"));

        // An app conversation that is still generating when the API request runs.
        bool appDone = false;
        int appTokens = 0;
        weir::GenerateRequest long_;
        long_.maxTokens = 2000;
        long_.stopAtEndOfGeneration = false;
        const quint64 ticket = host.submit(conversationTag(1), {{"user", "the operator shall record"}}, long_);
        connect(&host, &EngineHost::tokens, this, [&](quint64 t, const QString&, int n) { if (t == ticket) appTokens += n; });
        connect(&host, &EngineHost::finished, this, [&](quint64 t) { if (t == ticket) appDone = true; });
        QTRY_VERIFY_WITH_TIMEOUT(appTokens > 0, 30000);

        bool sawBoth = false;
        connect(&host, &EngineHost::statusUpdated, this, [&](const weir::CacheStatus& s) {
            bool api = false, conv = false;
            for (const auto& r : s.requests) {
                api = api || apiRequestOf(r.tag) != 0;
                conv = conv || conversationOf(r.tag) == 1;
            }
            sawBoth = sawBoth || (api && conv);
        });
        host.setStatusInterval(20);
        const Reply streamed = send(nam, endpoint.url() + "/chat/completions", "POST", chatBody(400, true, "tiny-gemma3"));
        QCOMPARE(streamed.status, 200);
        QVERIFY(streamed.body.contains("data: [DONE]"));
        QVERIFY2(!appDone, "the app's conversation should still be generating beside the API request");
        QVERIFY(streamed.body.count("chat.completion.chunk") >= 2);
        QVERIFY2(sawBoth, "the API request must appear in the pool status beside the conversation");
        QTRY_COMPARE(endpoint.sessionsServed(), qint64(1));
        QTRY_COMPARE(endpoint.activeSessions(), 0);
        host.cancel(ticket);

        // A reload keeps it on (a new server for the new engine).
        host.load(model_);
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(endpoint.listening(), 10000);
        QCOMPARE(send(nam, endpoint.url() + "/chat/completions", "POST", chatBody(4, false, "tiny-gemma3")).status, 200);

        const QString url = endpoint.url();
        endpoint.setEnabled(false);
        QTRY_VERIFY(!endpoint.listening());
        QVERIFY(endpoint.url().isEmpty());
        QCOMPARE(send(nam, url + "/models", "GET").status, 0);  // connection refused: nothing listens
    }

    // The endpoint works on a thread of its own, not the engine host thread
    // that carries the app's calls: while it parses and tokenizes a prompt of
    // megabytes, a Stop in the app (a cancel through the engine host thread)
    // goes through at once.
    void theAppsStopDoesNotWaitBehindTheEndpoint() {
        QTemporaryDir data;
        AppSettings settings(data.path(), model_);
        EngineHost host(realEngineFactory());
        host.setEngineOptions(options());
        ApiEndpoint endpoint(&settings, &host);
        endpoint.setPort(0);
        endpoint.setEnabled(true);
        host.load(model_);
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(endpoint.listening(), 10000);
        const quint16 port = quint16(QUrl(endpoint.url()).port());

        weir::GenerateRequest long_;
        long_.maxTokens = 4000;
        long_.stopAtEndOfGeneration = false;
        int appTokens = 0;
        bool cancelled = false;
        const quint64 ticket = host.submit(conversationTag(1), {{"user", "the operator shall record"}}, long_);
        connect(&host, &EngineHost::tokens, this, [&](quint64 t, const QString&, int n) { if (t == ticket) appTokens += n; });
        connect(&host, &EngineHost::cancelled, this, [&](quint64 t) { cancelled = cancelled || t == ticket; });
        QTRY_VERIFY_WITH_TIMEOUT(appTokens > 0, 30000);

        QByteArray prompt;
        while (prompt.size() < 6 * 1024 * 1024) prompt += "the operator shall record every change to a ledger ";
        const QByteArray body = QJsonDocument(QJsonObject{{"model", "tiny-gemma3"}, {"prompt", QString::fromLatin1(prompt)},
                                                          {"max_tokens", 1}})
                                    .toJson(QJsonDocument::Compact);
        QTcpSocket big;
        QVERIFY(raw::connectTo(big, port));
        QVERIFY(raw::sendAll(big, raw::request("POST", "/v1/completions", body)));
        // Until the endpoint says it is preparing that request.
        int preparing = 0;
        for (int i = 0; i < 600 && preparing == 0; ++i) {
            const raw::Response stats = raw::exchange(port, raw::request("GET", "/v1/stats"));
            preparing = QJsonDocument::fromJson(stats.body).object()["requests"].toObject()["preparing"].toInt();
            if (preparing == 0) QThread::msleep(20);
        }
        QCOMPARE(preparing, 1);

        host.cancel(ticket);
        QTRY_VERIFY_WITH_TIMEOUT(cancelled, 30000);
        big.waitForReadyRead(0);
        QVERIFY2(big.bytesAvailable() == 0, "the app's Stop waited until the endpoint had answered");

        QByteArray buffer;
        const raw::Response r = raw::readResponse(big, buffer);
        QCOMPARE(r.status, 400);  // far over the context limit
    }

    void aPortInUseIsReportedAndEveryInterfaceWarns() {
        QTemporaryDir data;
        AppSettings settings(data.path(), model_);
        EngineHost host(realEngineFactory());
        host.setEngineOptions(options());
        host.load(model_);
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, 60000);
        QTcpServer squatter;
        QVERIFY(squatter.listen(QHostAddress::LocalHost, 0));
        ApiEndpoint endpoint(&settings, &host);
        endpoint.setPort(squatter.serverPort());
        endpoint.setEnabled(true);
        QTRY_VERIFY_WITH_TIMEOUT(!endpoint.error().isEmpty(), 10000);
        QVERIFY(!endpoint.listening());
        QVERIFY2(endpoint.error().contains(QString::number(squatter.serverPort())), qPrintable(endpoint.error()));

        endpoint.setPort(0);
        endpoint.setAllowNetwork(true);
        // Binding every interface must say so.
        QTRY_VERIFY_WITH_TIMEOUT(endpoint.listening() && !endpoint.warning().isEmpty(), 10000);
        endpoint.setAllowNetwork(false);
        QTRY_VERIFY_WITH_TIMEOUT(endpoint.listening() && endpoint.warning().isEmpty(), 10000);
    }

    void aBackendWithoutAnEngineSaysSo() {
        QTemporaryDir data;
        AppSettings settings(data.path(), model_);
        EngineHost host(testing::FakeEngineBackend::factory({}));
        host.load(QStringLiteral("/models/fake.gguf"));
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, 30000);
        ApiEndpoint endpoint(&settings, &host);
        endpoint.setEnabled(true);
        QTRY_VERIFY_WITH_TIMEOUT(!endpoint.error().isEmpty(), 10000);
        QVERIFY(!endpoint.listening());
        QVERIFY(!endpoint.available());
        QVERIFY2(endpoint.error().contains(QStringLiteral("cannot be served")), qPrintable(endpoint.error()));
    }
};

QTEST_MAIN(ApiEndpointTest)
#include "api_endpoint_test.moc"
