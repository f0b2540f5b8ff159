// weir::server::ApiServer in process, on a tiny random-weight Gemma 3 (no
// default model needed): the API the app uses (start/stop/url/signals), JSON
// and SSE answers over a real socket, the server working on its own thread
// (answering while its owner's thread is blocked, /health at once while a
// big prompt is prepared), 503 from a full queue, a disconnecting client
// cancelled, stop() ending streams with an error event and [DONE] and queued
// requests with 503 + Retry-After, HTTP keep-alive and Connection: close,
// timeouts for slow and idle clients, the connection cap and its reserve
// (256 dripping uploads do not lock out /health and whole requests, and are
// cut off by the body's minimum rate and deadline), what a browser page may
// not do without a key, the warning for a non-loopback address, "required"
// tool calls, and completions leaving special tokens out.
#include <QtTest>

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QElapsedTimer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QUrl>
#include <atomic>
#include <cmath>
#include <memory>

#include "app/server/api_server.h"
#include "app/server/cors_origin.h"
#include "app/common/forced_tool_call.h"
#include "tests/server/http_test_client.h"
#include "tests/server/raw_http_client.h"
#include "weir/engine.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using weir::Engine;
using weir::EngineOptions;
using weir::server::ApiServer;
using weir::server::ServerOptions;
using namespace weir::test::http;
namespace raw = weir::test::raw;

// The server's session signals, as received on the test's thread: the
// server emits them on its own thread, so they arrive queued (a QSignalSpy
// would record them on the emitting thread, racing with the test's reads).
struct SessionLog : QObject {
    explicit SessionLog(ApiServer& server) {
        connect(&server, &ApiServer::sessionStarted, this,
                [this](quint64, const QString& client, const QString&) { started << client; });
        connect(&server, &ApiServer::sessionFinished, this, [this](quint64, const QString& client, const QString& outcome) {
            finished << QStringList{client, outcome};
        });
    }
    QStringList started;
    QList<QStringList> finished;  // {client, outcome}
};


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
        SessionLog sessions(server);
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

        // The engine's events are handled on the server's own thread, not this one.
        std::atomic<Qt::HANDLE> handledOn = nullptr;
        connect(&server, &ApiServer::sessionFinished, this,
                [&] { handledOn = QThread::currentThreadId(); }, Qt::DirectConnection);
        r = send(nam, server.url() + "/chat/completions", "POST", chatBody(8, false));
        QCOMPARE(r.status, 200);
        const QJsonObject done = obj(r.body);
        QCOMPARE(done["object"].toString(), QStringLiteral("chat.completion"));
        const QString finish = done["choices"].toArray()[0].toObject()["finish_reason"].toString();
        QVERIFY2(finish == "stop" || finish == "length", qPrintable(finish));
        QVERIFY(done["usage"].toObject()["prompt_tokens"].toInt() > 0);
        QVERIFY(handledOn.load() != nullptr);
        QVERIFY(handledOn.load() != QThread::currentThreadId());
        QTRY_COMPARE(sessions.finished.size(), 1);
        QCOMPARE(sessions.started.size(), 1);
        QCOMPARE(sessions.started[0], sessions.finished[0][0]);
        QVERIFY(sessions.started[0].startsWith(QStringLiteral("api:")));
        QCOMPARE(sessions.finished[0][1], finish);

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
        // The scheme is case-insensitive (RFC 7235); the key is not.
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "bearer secret").status, 200);
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "BEARER  secret").status, 200);
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "bearer SECRET").status, 401);
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "Basic secret").status, 401);
        QCOMPARE(send(nam, server.url() + "/models", "GET", {}, "Bearersecret").status, 401);
    }

    // Anthropic Messages, Responses and embeddings on the same server: the key
    // as x-api-key too, Anthropic's error shape on its paths, each API's own
    // stream ending (no [DONE]), count_tokens equal to the prompt that ran,
    // and a batch of embeddings larger than the server feeds the engine at once.
    void otherApis() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.apiKey = QStringLiteral("secret");
        ApiServer server(engine, so);
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        auto post = [&](const QString& path, const QJsonObject& body, const QByteArray& apiKey) {
            QNetworkRequest req{QUrl(server.url() + path)};
            req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
            if (!apiKey.isEmpty()) req.setRawHeader("x-api-key", apiKey);
            req.setRawHeader("anthropic-version", "2023-06-01");
            QNetworkReply* r = nam.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
            QEventLoop loop;
            connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            loop.exec();
            Reply out;
            out.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            out.body = r->readAll();
            r->deleteLater();
            return out;
        };
        const QJsonObject message{
            {"max_tokens", 4}, {"temperature", 0}, {"system", "terse"},
            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hello world status"}}}}};
        Reply r = post("/messages", message, {});
        QCOMPARE(r.status, 401);
        QCOMPARE(obj(r.body)["type"].toString(), QStringLiteral("error"));
        QCOMPARE(obj(r.body)["error"].toObject()["type"].toString(), QStringLiteral("authentication_error"));
        QCOMPARE(post("/messages", message, "wrong").status, 401);
        r = post("/messages", message, "secret");
        QCOMPARE(r.status, 200);
        const QJsonObject m = obj(r.body);
        QCOMPARE(m["type"].toString(), QStringLiteral("message"));
        QCOMPARE(m["model"].toString(), QStringLiteral("tiny"));
        r = post("/messages/count_tokens", message, "secret");
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["input_tokens"].toInt(), m["usage"].toObject()["input_tokens"].toInt());
        QJsonObject streamed = message;
        streamed["stream"] = true;
        r = post("/messages", streamed, "secret");
        QCOMPARE(r.status, 200);
        QVERIFY(r.body.startsWith("event: message_start\n"));
        QVERIFY(r.body.endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
        QVERIFY(!r.body.contains("[DONE]"));
        r = post("/messages", QJsonObject{{"messages", "not a list"}}, "secret");
        QCOMPARE(r.status, 400);
        QCOMPARE(obj(r.body)["error"].toObject()["type"].toString(), QStringLiteral("invalid_request_error"));
        // max_tokens is required, as the Messages API has it; count_tokens needs none.
        QJsonObject unbounded = message;
        unbounded.remove("max_tokens");
        r = post("/messages", unbounded, "secret");
        QCOMPARE(r.status, 400);
        QCOMPARE(obj(r.body)["error"].toObject()["message"].toString(), QStringLiteral("max_tokens: Field required"));
        r = post("/messages/count_tokens", unbounded, "secret");
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["input_tokens"].toInt(), m["usage"].toObject()["input_tokens"].toInt());

        r = post("/responses", QJsonObject{{"input", "hello world"}, {"max_output_tokens", 3}, {"stream", true}}, "secret");
        QCOMPARE(r.status, 200);
        QVERIFY(r.body.startsWith("event: response.created\n"));
        QVERIFY(r.body.contains("event: response.incomplete\n") || r.body.contains("event: response.completed\n"));
        QVERIFY(!r.body.contains("[DONE]"));

        QJsonArray inputs;
        for (int i = 0; i < 20; ++i) inputs.append(QStringLiteral("the ledger %1").arg(i));
        r = post("/embeddings", QJsonObject{{"input", inputs}}, "secret");
        QCOMPARE(r.status, 200);
        const QJsonArray data = obj(r.body)["data"].toArray();
        QCOMPARE(data.size(), 20);
        for (int i = 0; i < 20; ++i) QCOMPARE(data[i].toObject()["index"].toInt(), i);
        const Reply one = post("/embeddings", QJsonObject{{"input", inputs[13]}}, "secret");
        QCOMPARE(obj(one.body)["data"].toArray()[0].toObject()["embedding"].toArray().size(),
                 data[13].toObject()["embedding"].toArray().size());
        const QJsonArray a = obj(one.body)["data"].toArray()[0].toObject()["embedding"].toArray();
        const QJsonArray b = data[13].toObject()["embedding"].toArray();
        double diff = 0;
        for (qsizetype i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i].toDouble() - b[i].toDouble()));
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
        QCOMPARE(server.activeRequests(), 0);
        engine.clearPrefixCache();
        const weir::CacheStatus st = engine.cacheStatus();
        QCOMPARE(st.full.freeTokens, st.full.capacityTokens);
        QCOMPARE(st.violations, uint64_t(0));
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
        SessionLog sessions(server);
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
        QTRY_COMPARE_WITH_TIMEOUT(sessions.finished.size(), 1, 60000);
        QCOMPARE(sessions.finished[0][1], QStringLiteral("cancelled"));
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
        SessionLog sessions(server);
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
        QTRY_COMPARE(sessions.finished.size(), 1);  // emitted before stop() returned, queued to us
        QCOMPARE(sessions.finished[0][1], QStringLiteral("cancelled"));
        QTRY_VERIFY_WITH_TIMEOUT(r->isFinished(), 60000);
        r->deleteLater();
        QTRY_COMPARE_WITH_TIMEOUT(engine.cacheStatus().running, 0, 60000);
        // It can start again on a fresh port.
        QVERIFY(server.start());
        QCOMPARE(send(nam, server.url() + "/models", "GET").status, 200);
    }

    // The server needs nothing of its owner's thread: this thread never runs
    // an event loop here, yet every answer comes.
    void answersWhileItsOwnersThreadIsBlocked() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        raw::Response r = raw::exchange(server.port(), raw::request("GET", "/health"));
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["status"].toString(), QStringLiteral("ok"));
        r = raw::exchange(server.port(), raw::request("POST", "/v1/chat/completions", chatBody(4, true)));
        QCOMPARE(r.status, 200);
        QVERIFY(r.chunked);
        QVERIFY(r.complete);
        QCOMPARE(raw::sseData(r.body).last(), QByteArray("[DONE]"));
    }

    // A prompt of several megabytes is parsed and tokenized off the thread
    // that answers: /health comes back while the big request is still at it.
    void healthAnswersWhileABigPromptIsPrepared() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.http.maxBodyBytes = 16 * 1024 * 1024;
        ApiServer server(engine, so);
        QVERIFY(server.start());
        QByteArray prompt;
        while (prompt.size() < 6 * 1024 * 1024) prompt += "the operator shall record every change to a ledger ";
        const QByteArray body = QJsonDocument(QJsonObject{{"model", "tiny"}, {"prompt", QString::fromLatin1(prompt)},
                                                          {"max_tokens", 1}})
                                    .toJson(QJsonDocument::Compact);
        QTcpSocket big;
        QVERIFY(raw::connectTo(big, server.port()));
        QVERIFY(raw::sendAll(big, raw::request("POST", "/v1/completions", body)));

        const raw::Response health = raw::exchange(server.port(), raw::request("GET", "/health"));
        QCOMPARE(health.status, 200);
        big.waitForReadyRead(0);
        QVERIFY2(big.bytesAvailable() == 0, "the big request was answered before /health");

        QByteArray buffer;
        const raw::Response r = raw::readResponse(big, buffer);
        QCOMPARE(r.status, 400);  // far over the context limit, as counted by the tokenizer
        QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("context_length_exceeded"));
    }

    void keepAliveAndConnectionClose() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QTcpSocket s;
        QVERIFY(raw::connectTo(s, server.port()));
        QByteArray buffer;
        // Two requests on one connection, the second sent before the first
        // is answered (pipelined): both answered, in order.
        QVERIFY(raw::sendAll(s, raw::request("GET", "/health") + raw::request("GET", "/v1/models")));
        raw::Response r = raw::readResponse(s, buffer);
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["status"].toString(), QStringLiteral("ok"));
        QVERIFY(r.header("connection").isEmpty());
        r = raw::readResponse(s, buffer);
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["object"].toString(), QStringLiteral("list"));
        QCOMPARE(s.state(), QAbstractSocket::ConnectedState);
        // "Connection: close": answered, said so, and closed by the server.
        QVERIFY(raw::sendAll(s, raw::request("GET", "/health", {}, "Connection: close\r\n")));
        r = raw::readResponse(s, buffer);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("connection"), QByteArray("close"));
        QVERIFY2(raw::waitForClose(s), "the server kept the connection open after Connection: close");
        // HTTP/1.0: closed after the answer unless asked to keep it; a
        // stream is delimited by the close (no chunks in 1.0).
        QTcpSocket old;
        QVERIFY(raw::connectTo(old, server.port()));
        const QByteArray body = chatBody(4, true);
        QVERIFY(raw::sendAll(old, "POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
                                  "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body));
        QByteArray oldBuffer;
        r = raw::readResponse(old, oldBuffer);
        QCOMPARE(r.status, 200);
        QVERIFY(!r.chunked);
        QCOMPARE(raw::sseData(r.body).last(), QByteArray("[DONE]"));
        QVERIFY(raw::waitForClose(old));
    }

    // Clients that connect and say nothing, trickle a head, stall a body or
    // sit idle between requests are dropped: 408 when a request had begun.
    void slowAndIdleClientsAreDropped() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.http.headerTimeoutMs = 300;
        so.http.bodyTimeoutMs = 300;
        so.http.idleTimeoutMs = 300;
        ApiServer server(engine, so);
        QVERIFY(server.start());

        QTcpSocket silent;
        QVERIFY(raw::connectTo(silent, server.port()));
        QByteArray got;
        QVERIFY2(raw::waitForClose(silent, &got), "a silent connection was kept");
        QVERIFY2(got.isEmpty(), got.constData());

        QTcpSocket partialHead;
        QVERIFY(raw::connectTo(partialHead, server.port()));
        QVERIFY(raw::sendAll(partialHead, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
        got.clear();
        QVERIFY(raw::waitForClose(partialHead, &got));
        QVERIFY2(got.startsWith("HTTP/1.1 408 "), got.constData());
        QCOMPARE(obj(got.mid(got.indexOf("\r\n\r\n") + 4))["error"].toObject()["code"].toString(),
                 QStringLiteral("request_timeout"));

        QTcpSocket stalledBody;
        QVERIFY(raw::connectTo(stalledBody, server.port()));
        QVERIFY(raw::sendAll(stalledBody, "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                          "application/json\r\nContent-Length: 100\r\n\r\n{\"model\":"));
        got.clear();
        QVERIFY(raw::waitForClose(stalledBody, &got));
        QVERIFY2(got.startsWith("HTTP/1.1 408 "), got.constData());

        QTcpSocket idle;
        QVERIFY(raw::connectTo(idle, server.port()));
        QVERIFY(raw::sendAll(idle, raw::request("GET", "/health")));
        QByteArray buffer;
        QCOMPARE(raw::readResponse(idle, buffer).status, 200);
        got.clear();
        QVERIFY2(raw::waitForClose(idle, &got), "an idle kept-alive connection was kept");
        QVERIFY(got.isEmpty());
    }

    // More connections than the cap and its reserve: the next is told 503
    // with Retry-After and closed; once one closes, the server takes
    // connections again. A whole request beyond the cap is served from the
    // reserve, and that connection closed after its answer.
    void connectionCapAnswers503() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.http.maxConnections = 3;
        so.http.reservedConnections = 1;
        so.http.reservedRequestMs = 600000;  // the silent client below holds the reserve until it leaves
        ApiServer server(engine, so);
        QVERIFY(server.start());
        std::vector<std::unique_ptr<QTcpSocket>> held;
        for (int i = 0; i < 3; ++i) {
            held.push_back(std::make_unique<QTcpSocket>());
            QVERIFY(raw::connectTo(*held.back(), server.port()));
            // Answered: the server has taken this connection before the next.
            QVERIFY(raw::sendAll(*held.back(), raw::request("GET", "/health")));
            QByteArray buffer;
            QCOMPARE(raw::readResponse(*held.back(), buffer).status, 200);
        }
        auto silent = std::make_unique<QTcpSocket>();  // accepted into the reserve (connections are taken in order)
        QVERIFY(raw::connectTo(*silent, server.port()));
        const raw::Response refused = raw::exchange(server.port(), raw::request("GET", "/health"));
        QCOMPARE(refused.status, 503);
        QVERIFY(refused.header("retry-after").toInt() >= 1);
        QCOMPARE(refused.header("connection"), QByteArray("close"));
        QCOMPARE(obj(refused.body)["error"].toObject()["code"].toString(), QStringLiteral("too_many_connections"));

        // The reserve free again: a whole request is answered there, then closed.
        silent->disconnectFromHost();
        raw::Response reserved;
        for (int i = 0; i < 600 && reserved.status != 200; ++i) {
            reserved = raw::exchange(server.port(), raw::request("GET", "/health"));
            if (reserved.status != 200) QThread::msleep(50);
        }
        QCOMPARE(reserved.status, 200);
        QCOMPARE(reserved.header("connection"), QByteArray("close"));

        held.front()->disconnectFromHost();
        held.erase(held.begin());
        // (Tried once per turn: the server notices the close a moment later.)
        raw::Response regular;
        for (int i = 0; i < 600; ++i) {
            regular = raw::exchange(server.port(), raw::request("GET", "/health"));
            if (regular.status == 200 && regular.header("connection") != "close") break;
            QThread::msleep(50);
        }
        QCOMPARE(regular.status, 200);
        QVERIFY(regular.header("connection") != "close");  // kept alive: a regular connection again
    }

    // 256 clients that drip a body (a byte now and then, never pausing long
    // enough for the read timeout) hold every regular connection: /health
    // and a whole chat request still get through the reserve, and a dripper
    // that lands in the reserve is cut off with 408 while it drips.
    void drippingUploadsLeaveRoomForWholeRequests() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.http.bodyTimeoutMs = 600000;  // the drips never pause that long
        so.http.bodyGraceMs = 600000;    // nor does their rate cut them here (see drippingBodiesAreCutOff)
        so.http.reservedRequestMs = 300;
        ApiServer server(engine, so);
        QVERIFY(server.start());
        const QByteArray head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                "application/json\r\nContent-Length: 100000\r\n\r\n{";
        std::vector<std::unique_ptr<QTcpSocket>> drips;
        for (int i = 0; i < so.http.maxConnections; ++i) {
            drips.push_back(std::make_unique<QTcpSocket>());
            QVERIFY(raw::connectTo(*drips.back(), server.port()));
            QVERIFY(raw::sendAll(*drips.back(), head));
        }
        const raw::Response health = raw::exchange(server.port(), raw::request("GET", "/health"));
        QCOMPARE(health.status, 200);
        QCOMPARE(health.header("connection"), QByteArray("close"));  // a reserve connection
        const raw::Response chat = raw::exchange(server.port(), raw::request("POST", "/v1/chat/completions", chatBody(4, false)));
        QCOMPARE(chat.status, 200);
        QCOMPARE(obj(chat.body)["object"].toString(), QStringLiteral("chat.completion"));

        QTcpSocket late;
        QVERIFY(raw::connectTo(late, server.port()));
        QVERIFY(raw::sendAll(late, head));
        QByteArray got;
        QElapsedTimer guard;
        guard.start();
        while (late.state() == QAbstractSocket::ConnectedState && guard.elapsed() < raw::patienceMs()) {
            late.write("1");
            late.waitForBytesWritten(50);
            late.waitForReadyRead(50);
            got += late.readAll();
        }
        got += late.readAll();
        QVERIFY2(got.startsWith("HTTP/1.1 408 "), got.constData());
        QVERIFY2(got.contains("connection limit"), got.constData());
        // The drippers were neither answered nor dropped.
        for (const auto& d : drips) {
            QCOMPARE(d->state(), QAbstractSocket::ConnectedState);
            QCOMPARE(d->bytesAvailable(), qint64(0));
        }
    }

    // A body that drips is cut off by its rate after the grace, and one that
    // keeps a good rate but never ends by the body deadline, though neither
    // pauses long enough for the read timeout: 256 drippers and one endless
    // upload all get 408, and the connections come free.
    void drippingBodiesAreCutOff() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.http.bodyTimeoutMs = 600000;  // never the pause between reads
        so.http.bodyGraceMs = 200;
        so.http.bodyMinBytesPerSecond = 1000;
        so.http.bodyDeadlineMs = 1500;
        ApiServer server(engine, so);
        QVERIFY(server.start());
        const QByteArray head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                "application/json\r\nContent-Length: 1000000\r\n\r\n{";
        struct Client {
            std::unique_ptr<QTcpSocket> socket = std::make_unique<QTcpSocket>();
            QByteArray got;
            int bytesPerTurn = 1;  // a turn is ~50 ms: 20 bytes a second, or 4000 for the endless one
        };
        std::vector<Client> clients(size_t(so.http.maxConnections) + 1);
        clients.back().bytesPerTurn = 200;
        for (Client& c : clients) {
            QVERIFY(raw::connectTo(*c.socket, server.port()));
            QVERIFY(raw::sendAll(*c.socket, head));
        }
        QElapsedTimer guard;
        guard.start();
        for (int open = int(clients.size()); open > 0 && guard.elapsed() < raw::patienceMs();) {
            open = 0;
            for (Client& c : clients) {
                if (c.socket->state() != QAbstractSocket::ConnectedState) continue;
                ++open;
                c.socket->write(QByteArray(c.bytesPerTurn, ' '));
                c.socket->flush();
                c.got += c.socket->readAll();
            }
            QCoreApplication::processEvents();
            QThread::msleep(50);
        }
        for (Client& c : clients) {
            c.got += c.socket->readAll();
            QVERIFY2(c.got.startsWith("HTTP/1.1 408 "), c.got.constData());
            QVERIFY2(c.got.contains("too slowly"), c.got.constData());
        }
        const raw::Response health = raw::exchange(server.port(), raw::request("GET", "/health"));
        QCOMPARE(health.status, 200);
    }

    // Without a key, what a web page can send cross-site does not run: a
    // POST without a JSON content type (a "simple" request, which needs no
    // preflight), or a request for a host name that is not this machine's
    // (DNS rebinding). With a key, the key decides.
    void browserRequestsAreRefusedWithoutAKey() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        const quint16 port = server.port();
        auto post = [port](const QByteArray& path, const QByteArray& type, const QByteArray& body) {
            QByteArray r = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
            if (!type.isEmpty()) r += "Content-Type: " + type + "\r\n";
            return raw::exchange(port, r + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
        };
        // Fill the prefix cache (whole pages of a longer prompt), so that a clear would show.
        QNetworkAccessManager nam;
        QJsonObject longPrompt = obj(chatBody(2, false));
        longPrompt["messages"] = QJsonArray{QJsonObject{
            {"role", "user"}, {"content", QString("the operator shall record every change to a ledger ").repeated(20)}}};
        QCOMPARE(send(nam, server.url() + "/chat/completions", "POST",
                      QJsonDocument(longPrompt).toJson(QJsonDocument::Compact)).status, 200);
        const qint64 cached = engine.cacheStatus().full.cachedTokens;
        QVERIFY(cached > 0);
        for (const QByteArray& type : {QByteArray("text/plain;charset=UTF-8"), QByteArray("application/x-www-form-urlencoded"),
                                       QByteArray("multipart/form-data; boundary=x"), QByteArray()}) {
            raw::Response r = post("/v1/chat/completions", type, chatBody(2, false));
            QCOMPARE(r.status, 415);
            QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("unsupported_media_type"));
            r = post("/v1/cache/clear", type, {});
            QCOMPARE(r.status, 415);
        }
        QCOMPARE(engine.cacheStatus().full.cachedTokens, cached);
        QCOMPARE(post("/v1/chat/completions", "Application/JSON; charset=utf-8", chatBody(2, false)).status, 200);

        for (const QByteArray& host : {QByteArray("evil.example"), QByteArray("evil.example:") + QByteArray::number(port),
                                       QByteArray("127.0.0.1.nip.io")}) {
            const raw::Response r = raw::exchange(port, raw::request("GET", "/v1/models", {}, {}, host));
            QCOMPARE(r.status, 403);
            QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("host_not_allowed"));
        }
        for (const QByteArray& host : {QByteArray("127.0.0.1:") + QByteArray::number(port), QByteArray("localhost"),
                                       QByteArray("LOCALHOST:") + QByteArray::number(port), QByteArray("[::1]:1234"),
                                       QByteArray("weir.localhost"), QByteArray("192.168.1.20:8719")})
            QCOMPARE(raw::exchange(port, raw::request("GET", "/v1/models", {}, {}, host)).status, 200);

        ServerOptions named = serverOptions();
        named.allowedHosts = {QStringLiteral("workstation.lan")};
        ApiServer allowing(engine, named);
        QVERIFY(allowing.start());
        QCOMPARE(raw::exchange(allowing.port(), raw::request("GET", "/v1/models", {}, {}, "workstation.lan:80")).status, 200);
        QCOMPARE(raw::exchange(allowing.port(), raw::request("GET", "/v1/models", {}, {}, "other.lan")).status, 403);

        ServerOptions keyed = serverOptions();
        keyed.apiKey = QStringLiteral("secret");
        ApiServer withKey(engine, keyed);
        QVERIFY(withKey.start());
        QCOMPARE(raw::exchange(withKey.port(), raw::request("GET", "/v1/models", {}, "Authorization: Bearer secret\r\n",
                                                            "workstation.lan")).status, 200);
        QCOMPARE(raw::exchange(withKey.port(), raw::request("GET", "/v1/models", {}, {}, "evil.example")).status, 401);
    }


    // CORS: a browser's preflight (OPTIONS) never carries the key, so it is
    // answered without one, and only for the origins listed; every answer to
    // a listed origin (errors and streams too) says it may be read. Without
    // a key, a listed origin's JSON POST passes the cross-site guard.
    void corsForListedOrigins() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.apiKey = QStringLiteral("secret");
        so.corsOrigins = {QStringLiteral("https://app.example/"), QStringLiteral("http://localhost:3000")};
        ApiServer server(engine, so);
        QVERIFY(server.start());
        const quint16 port = server.port();
        const QByteArray listed = "Origin: https://app.example\r\n";
        const QByteArray preflightAsk = "Access-Control-Request-Method: POST\r\n"
                                        "Access-Control-Request-Headers: authorization, content-type\r\n";
        raw::Response r = raw::exchange(port, raw::request("OPTIONS", "/v1/chat/completions", {}, listed + preflightAsk));
        QCOMPARE(r.status, 204);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://app.example"));
        QVERIFY(r.header("access-control-allow-methods").contains("POST"));
        QCOMPARE(r.header("access-control-allow-headers"), QByteArray("authorization, content-type"));
        QCOMPARE(r.header("access-control-max-age"), QByteArray("600"));
        QVERIFY(r.header("vary").contains("Origin"));
        QVERIFY(!r.headers.contains("content-length"));
        // Another origin: refused, and nothing tells the browser it may go on.
        r = raw::exchange(port, raw::request("OPTIONS", "/v1/chat/completions", {}, "Origin: https://evil.example\r\n" + preflightAsk));
        QCOMPARE(r.status, 403);
        QCOMPARE(obj(r.body)["error"].toObject()["code"].toString(), QStringLiteral("origin_not_allowed"));
        QVERIFY(!r.headers.contains("access-control-allow-origin"));
        // The request itself: with the key, and the header on the answer, streamed or not.
        r = raw::exchange(port, raw::request("GET", "/v1/models", {}, listed + "Authorization: Bearer secret\r\n"));
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://app.example"));
        r = raw::exchange(port, raw::request("POST", "/v1/chat/completions", chatBody(3, true),
                                             "Origin: http://localhost:3000\r\nAuthorization: Bearer secret\r\n"));
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("http://localhost:3000"));
        QCOMPARE(raw::sseData(r.body).last(), QByteArray("[DONE]"));
        // Without the key: 401, readable by the page so it can say why.
        r = raw::exchange(port, raw::request("GET", "/v1/models", {}, listed));
        QCOMPARE(r.status, 401);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://app.example"));
        // An unlisted origin's request gets its answer without the header (the browser hides it).
        r = raw::exchange(port, raw::request("GET", "/v1/models", {}, "Origin: https://evil.example\r\nAuthorization: Bearer secret\r\n"));
        QCOMPARE(r.status, 200);
        QVERIFY(!r.headers.contains("access-control-allow-origin"));
        // OPTIONS without an Origin is no preflight: the methods, no CORS headers.
        r = raw::exchange(port, raw::request("OPTIONS", "/v1/models"));
        QCOMPARE(r.status, 204);
        QVERIFY(r.header("allow").contains("POST"));
        QVERIFY(!r.headers.contains("access-control-allow-origin"));

        // None listed (the default): every preflight is refused, with a key or without.
        ServerOptions plain = serverOptions();
        ApiServer closed(engine, plain);
        QVERIFY(closed.start());
        r = raw::exchange(closed.port(), raw::request("OPTIONS", "/v1/chat/completions", {}, listed + preflightAsk));
        QCOMPARE(r.status, 403);
        QVERIFY(!r.headers.contains("access-control-allow-origin"));

        // "*": any origin; without a key a listed page's JSON POST runs.
        ServerOptions any = serverOptions();
        any.corsOrigins = {QStringLiteral("*")};
        ApiServer open(engine, any);
        QVERIFY(open.start());
        r = raw::exchange(open.port(), raw::request("OPTIONS", "/v1/chat/completions", {}, "Origin: https://anything.example\r\n" + preflightAsk));
        QCOMPARE(r.status, 204);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://anything.example"));
        r = raw::exchange(open.port(), raw::request("POST", "/v1/chat/completions", chatBody(2, false), "Origin: https://anything.example\r\n"));
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray("https://anything.example"));

        QVERIFY(!weir::server::invalidCorsOrigin(QStringLiteral("https://app.example:8443")));
        QVERIFY(!weir::server::invalidCorsOrigin(QStringLiteral("*")));
        for (const char* bad : {"app.example", "https://app.example/path", "ftp://app.example", "https://", "null"})
            QVERIFY2(weir::server::invalidCorsOrigin(QString::fromLatin1(bad)), bad);
    }

    // What clients written for other servers send: no model, no /v1 in the
    // path; and what they read: system_fingerprint on every object.
    void compatibilityDetails() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        const quint16 port = server.port();
        QJsonObject body = obj(chatBody(3, false));
        body.remove("model");
        raw::Response r = raw::exchange(port, raw::request("POST", "/chat/completions", QJsonDocument(body).toJson()));
        QCOMPARE(r.status, 200);
        QJsonObject o = obj(r.body);
        QCOMPARE(o["model"].toString(), QStringLiteral("tiny"));
        const QString fingerprint = o["system_fingerprint"].toString();
        QVERIFY2(fingerprint.startsWith(QStringLiteral("fp_")), qPrintable(fingerprint));
        r = raw::exchange(port, raw::request("POST", "/completions", R"({"prompt": "hello", "max_tokens": 2})"));
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["object"].toString(), QStringLiteral("text_completion"));
        QCOMPARE(obj(r.body)["system_fingerprint"].toString(), fingerprint);
        r = raw::exchange(port, raw::request("GET", "/models"));
        QCOMPARE(r.status, 200);
        QCOMPARE(obj(r.body)["data"].toArray()[0].toObject()["id"].toString(), QStringLiteral("tiny"));
        QCOMPARE(raw::exchange(port, raw::request("GET", "/models/tiny")).status, 200);
        body["stream"] = true;
        body["stream_options"] = QJsonObject{{"include_usage", true}};
        r = raw::exchange(port, raw::request("POST", "/chat/completions", QJsonDocument(body).toJson()));
        QCOMPARE(r.status, 200);
        const QByteArrayList chunks = raw::sseData(r.body);
        QVERIFY(chunks.size() >= 3);
        for (int i = 0; i + 1 < chunks.size(); ++i)
            QCOMPARE(obj(chunks[i])["system_fingerprint"].toString(), fingerprint);
        QCOMPARE(raw::exchange(port, raw::request("GET", "/nothing/here")).status, 404);
    }

    // The context limit, as clients expect it: OpenAI's wording with the
    // numbers, and a reply that stops where prompt + completion fill it.
    void contextLimitAsOpenAiSaysIt() {
        EngineOptions o = options();
        o.maxContext = 64;
        Engine engine(o);
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        auto completion = [&](int promptTokens, int maxTokens) {
            QJsonArray ids;
            for (int i = 0; i < promptTokens; ++i) ids.append(300 + i);
            const QJsonObject b{{"prompt", ids}, {"max_tokens", maxTokens}, {"temperature", 0}, {"ignore_eos", true}};
            return send(nam, server.url() + "/completions", "POST", QJsonDocument(b).toJson(QJsonDocument::Compact));
        };
        Reply r = completion(60, 50);
        QCOMPARE(r.status, 200);
        QJsonObject usage = obj(r.body)["usage"].toObject();
        QCOMPARE(usage["prompt_tokens"].toInt(), 60);
        QCOMPARE(usage["total_tokens"].toInt(), 64);
        // Speculative drafts are Weir's own numbers, not OpenAI's Predicted Outputs fields.
        QVERIFY(!usage.contains("completion_tokens_details"));
        const QJsonObject drafts = usage["weir"].toObject();
        QVERIFY2(drafts["draft_tokens"].isDouble() && drafts["accepted_draft_tokens"].isDouble(),
                 QJsonDocument(usage).toJson().constData());
        QVERIFY(drafts["accepted_draft_tokens"].toInt() >= 0);
        QVERIFY(drafts["accepted_draft_tokens"].toInt() <= drafts["draft_tokens"].toInt());
        QCOMPARE(obj(r.body)["choices"].toArray()[0].toObject()["finish_reason"].toString(), QStringLiteral("length"));
        r = completion(70, 5);
        QCOMPARE(r.status, 400);
        const QJsonObject e = obj(r.body)["error"].toObject();
        QCOMPARE(e["code"].toString(), QStringLiteral("context_length_exceeded"));
        QCOMPARE(e["message"].toString(),
                 QStringLiteral("This model's maximum context length is 64 tokens. However, you requested 75 tokens "
                                "(70 in the prompt, 5 in the completion). Please reduce the length of the prompt or "
                                "completion."));
        QJsonObject chat = obj(chatBody(4, false));
        chat["messages"] = QJsonArray{QJsonObject{{"role", "user"}, {"content", QString("word ").repeated(80)}}};
        r = send(nam, server.url() + "/chat/completions", "POST", QJsonDocument(chat).toJson(QJsonDocument::Compact));
        QCOMPARE(r.status, 400);
        QVERIFY2(obj(r.body)["error"].toObject()["message"].toString().startsWith(
                     QStringLiteral("This model's maximum context length is 64 tokens. However, you requested ")),
                 r.body.constData());
        QVERIFY(obj(r.body)["error"].toObject()["message"].toString().contains(QStringLiteral("in the messages, 4 in the completion")));
    }

    // n choices, each its own sequence; several prompts per completions
    // request; log probabilities in OpenAI's shapes; logit_bias ids checked.
    void choicesLogprobsAndBias() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        auto post = [&](const char* path, const QJsonObject& b) {
            return send(nam, server.url() + path, "POST", QJsonDocument(b).toJson(QJsonDocument::Compact));
        };
        QJsonObject chat = obj(chatBody(6, false));
        chat["n"] = 3;
        chat["temperature"] = 1.5;
        chat["seed"] = 11;
        chat["ignore_eos"] = true;
        Reply r = post("/chat/completions", chat);
        QCOMPARE(r.status, 200);
        QJsonObject o = obj(r.body);
        QJsonArray choices = o["choices"].toArray();
        QCOMPARE(choices.size(), 3);
        QSet<QString> texts;
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(choices[i].toObject()["index"].toInt(), i);
            texts.insert(choices[i].toObject()["message"].toObject()["content"].toString());
        }
        QVERIFY2(texts.size() > 1, "the choices are separate samples");
        const int promptTokens = o["usage"].toObject()["prompt_tokens"].toInt();
        QCOMPARE(o["usage"].toObject()["completion_tokens"].toInt(), 18);
        QCOMPARE(obj(post("/chat/completions", chat).body)["choices"], o["choices"]);  // seeded: repeatable
        chat["n"] = 1;
        QCOMPARE(obj(post("/chat/completions", chat).body)["usage"].toObject()["prompt_tokens"].toInt(), promptTokens);

        // Streamed: every choice's chunks carry its index and end with its finish reason.
        chat["n"] = 2;
        chat["stream"] = true;
        r = post("/chat/completions", chat);
        QCOMPARE(r.status, 200);
        QMap<int, int> finishes;
        for (const QByteArray& d : raw::sseData(r.body)) {
            if (d == "[DONE]") continue;
            for (const QJsonValue& c : obj(d)["choices"].toArray())
                if (!c.toObject()["finish_reason"].isNull()) ++finishes[c.toObject()["index"].toInt()];
        }
        QCOMPARE(finishes, (QMap<int, int>{{0, 1}, {1, 1}}));

        // Two prompts, two choices each: prompt-major order.
        QJsonObject comp{{"prompt", QJsonArray{"alpha beta", "gamma delta epsilon"}}, {"n", 2}, {"max_tokens", 3},
                         {"temperature", 0}, {"ignore_eos", true}, {"logprobs", 2}};
        r = post("/completions", comp);
        QCOMPARE(r.status, 200);
        o = obj(r.body);
        choices = o["choices"].toArray();
        QCOMPARE(choices.size(), 4);
        QCOMPARE(choices[0].toObject()["text"], choices[1].toObject()["text"]);  // greedy: the same
        QCOMPARE(choices[2].toObject()["text"], choices[3].toObject()["text"]);
        QCOMPARE(o["usage"].toObject()["completion_tokens"].toInt(), 12);
        const QJsonObject lp = choices[0].toObject()["logprobs"].toObject();
        QCOMPARE(lp["tokens"].toArray().size(), 3);
        QCOMPARE(lp["token_logprobs"].toArray().size(), 3);
        QCOMPARE(lp["text_offset"].toArray()[0].toInt(), 0);
        for (const QJsonValue& top : lp["top_logprobs"].toArray()) QVERIFY(top.toObject().size() >= 1 && top.toObject().size() <= 3);
        QVERIFY(lp["token_logprobs"].toArray()[0].toDouble() <= 0);

        // Chat logprobs, greedy: the chosen token is the most likely one.
        QJsonObject withLogprobs = obj(chatBody(4, false));
        withLogprobs["logprobs"] = true;
        withLogprobs["top_logprobs"] = 3;
        withLogprobs["ignore_eos"] = true;
        r = post("/chat/completions", withLogprobs);
        QCOMPARE(r.status, 200);
        const QJsonArray content =
            obj(r.body)["choices"].toArray()[0].toObject()["logprobs"].toObject()["content"].toArray();
        QCOMPARE(content.size(), 4);
        for (const QJsonValue& v : content) {
            const QJsonObject t = v.toObject();
            const QJsonArray top = t["top_logprobs"].toArray();
            QCOMPARE(top.size(), 3);
            QCOMPARE(top[0].toObject()["logprob"].toDouble(), t["logprob"].toDouble());
            QCOMPARE(top[0].toObject()["token"].toString(), t["token"].toString());
            QVERIFY(t["bytes"].isArray());
        }
        // Streamed, the same entries arrive with the chunks.
        withLogprobs["stream"] = true;
        r = post("/chat/completions", withLogprobs);
        int streamed = 0;
        for (const QByteArray& d : raw::sseData(r.body)) {
            if (d == "[DONE]") continue;
            for (const QJsonValue& c : obj(d)["choices"].toArray()) {
                const QJsonValue l = c.toObject()["logprobs"];
                if (l.isObject()) streamed += int(l.toObject()["content"].toArray().size());
            }
        }
        QCOMPARE(streamed, 4);

        // logit_bias: an id outside the vocabulary is named; a ban changes the greedy choice.
        QJsonObject biased = obj(chatBody(1, false));
        biased["logit_bias"] = QJsonObject{{QString::number(engine.vocabSize() + 5), -100}};
        r = post("/chat/completions", biased);
        QCOMPARE(r.status, 400);
        QCOMPARE(obj(r.body)["error"].toObject()["param"].toString(), QStringLiteral("logit_bias"));
        QVERIFY(obj(r.body)["error"].toObject()["message"].toString().contains(QString::number(engine.vocabSize() + 5)));
        QJsonObject greedy = obj(chatBody(1, false));
        greedy["logprobs"] = true;
        greedy["ignore_eos"] = true;
        const QJsonObject first = obj(post("/chat/completions", greedy).body);
        const QJsonArray firstTokens = first["choices"].toArray()[0].toObject()["logprobs"].toObject()["content"].toArray();
        QCOMPARE(firstTokens.size(), 1);
        const QString before = firstTokens[0].toObject()["token"].toString();
        const std::vector<int32_t> ids = engine.tokenize(before.toStdString(), false);
        QCOMPARE(ids.size(), size_t(1));
        greedy["logit_bias"] = QJsonObject{{QString::number(ids[0]), -100}};
        const QJsonObject after = obj(post("/chat/completions", greedy).body);
        const QJsonObject token =
            after["choices"].toArray()[0].toObject()["logprobs"].toObject()["content"].toArray()[0].toObject();
        QVERIFY(token["token"].toString() != before);
        // The log probabilities are of the model's own logits: the banned token is still the most likely.
        QCOMPARE(token["top_logprobs"].toArray().size(), 0);
        greedy["top_logprobs"] = 1;
        const QJsonObject again = obj(post("/chat/completions", greedy).body);
        QCOMPARE(again["choices"].toArray()[0].toObject()["logprobs"].toObject()["content"].toArray()[0].toObject()
                     ["top_logprobs"].toArray()[0].toObject()["token"].toString(),
                 before);
    }

    // The model file's path names nothing: it cannot be used to probe the disk.
    // tool_choice "required": the reply is one or more calls (an array held
    // by the grammar), each returned; with parallel_tool_calls false, one.
    void requiredToolChoiceReturnsEveryCall() {
        Engine engine(options());
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        const QJsonObject noArguments{{"type", "object"}, {"properties", QJsonObject{}}, {"additionalProperties", false}};
        QJsonArray tools;
        for (const char* name : {"ping", "pong"})
            tools.append(QJsonObject{{"type", "function"},
                                     {"function", QJsonObject{{"name", name}, {"parameters", noArguments}}}});
        QJsonObject chat{{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "ping and pong"}}}},
                         {"tools", tools}, {"tool_choice", "required"}, {"max_tokens", 400}, {"temperature", 0}};
        auto calls = [&](const QJsonObject& body) {
            const Reply r = send(nam, server.url() + "/chat/completions", "POST",
                                 QJsonDocument(body).toJson(QJsonDocument::Compact));
            const QJsonObject choice = obj(r.body)["choices"].toArray()[0].toObject();
            if (r.status != 200 || choice["finish_reason"].toString() != QLatin1String("tool_calls")) {
                qWarning("%s", r.body.constData());
                return QJsonArray();
            }
            return choice["message"].toObject()["tool_calls"].toArray();
        };
        QSet<QString> ids;
        const QJsonArray several = calls(chat);
        QVERIFY(several.size() >= 1 && several.size() <= weir::common::kMaxForcedCalls);
        for (const QJsonValue& c : several) {
            const QJsonObject fn = c.toObject()["function"].toObject();
            QVERIFY(fn["name"] == QJsonValue("ping") || fn["name"] == QJsonValue("pong"));
            QCOMPARE(fn["arguments"].toString(), QStringLiteral("{}"));
            ids.insert(c.toObject()["id"].toString());
        }
        QCOMPARE(ids.size(), several.size());
        qInfo("tool_choice required wrote %lld call(s)", qlonglong(several.size()));
        chat["parallel_tool_calls"] = false;
        QCOMPARE(calls(chat).size(), 1);
    }

    // A completion's text leaves out what is not text: Gemma's media marker
    // <start_of_image> (user-defined in the file, special to Hugging Face)
    // pushed by a logit bias; skip_special_tokens false asks for it.
    void completionsLeaveSpecialTokensOut() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny-with-image.gguf").toStdString();
        weir::test::TinyGemma3Spec spec;
        spec.extraUserDefinedTokens = {"<start_of_image>"};
        weir::test::writeTinyGemma3(path, spec);
        EngineOptions o = options();
        o.modelPath = path;
        Engine engine(o);
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QNetworkAccessManager nam;
        const int image = 6;  // after Gemma's six control tokens
        QJsonObject body{{"prompt", "the operator"}, {"max_tokens", 3}, {"temperature", 0},
                         {"logit_bias", QJsonObject{{QString::number(image), 100}}}};
        auto text = [&](const QJsonObject& b) {
            const Reply r = send(nam, server.url() + "/completions", "POST", QJsonDocument(b).toJson(QJsonDocument::Compact));
            const QJsonObject o = obj(r.body);
            if (r.status != 200 || o["usage"].toObject()["completion_tokens"].toInt() != 3) qWarning("%s", r.body.constData());
            return o["choices"].toArray()[0].toObject()["text"].toString();
        };
        QCOMPARE(text(body), QString());
        body["skip_special_tokens"] = false;
        QCOMPARE(text(body), QStringLiteral("<start_of_image>").repeated(3));
        body["stream"] = true;
        body["skip_special_tokens"] = true;
        const Reply streamed = send(nam, server.url() + "/completions", "POST", QJsonDocument(body).toJson(QJsonDocument::Compact));
        QCOMPARE(streamed.status, 200);
        QVERIFY2(!streamed.body.contains("start_of_image"), streamed.body.constData());
    }

    void theModelPathIsNotAName() {
        Engine engine(options());
        ServerOptions so = serverOptions();
        so.modelId.clear();
        ApiServer server(engine, so);
        QVERIFY(server.start());
        QCOMPARE(server.modelId(), QStringLiteral("tiny-gemma3"));
        const QByteArray path = QUrl::toPercentEncoding(QString::fromStdString(model_));
        raw::Response r = raw::exchange(server.port(), raw::request("GET", "/v1/models/" + path));
        QCOMPARE(r.status, 404);  // as for any file that does not exist:
        const raw::Response other = raw::exchange(server.port(), raw::request("GET", "/v1/models/%2Fetc%2Fpasswd"));
        QCOMPARE(other.status, 404);
        QCOMPARE(raw::exchange(server.port(), raw::request("GET", "/v1/models/tiny-gemma3")).status, 200);
        QCOMPARE(raw::exchange(server.port(), raw::request("GET", "/v1/models/tiny-gemma3.gguf")).status, 200);
        QJsonObject body = obj(chatBody(2, false));
        body["model"] = QString::fromStdString(model_);
        r = raw::exchange(server.port(), raw::request("POST", "/v1/chat/completions",
                                                      QJsonDocument(body).toJson(QJsonDocument::Compact)));
        QCOMPARE(r.status, 404);
    }

    // stop() with one stream running and one request waiting behind it: the
    // stream ends with an error event, [DONE] and the last chunk; the
    // waiting request gets 503 with Retry-After.
    void stopEndsStreamsAndQueuedRequestsProperly() {
        EngineOptions o = options();
        o.maxRunningRequests = 1;
        Engine engine(o);
        ApiServer server(engine, serverOptions());
        QVERIFY(server.start());
        QJsonObject long_ = obj(chatBody(8000, true));
        long_["ignore_eos"] = true;
        QTcpSocket stream;
        QVERIFY(raw::connectTo(stream, server.port()));
        QVERIFY(raw::sendAll(stream, raw::request("POST", "/v1/chat/completions",
                                                  QJsonDocument(long_).toJson(QJsonDocument::Compact))));
        QByteArray streamed;
        QVERIFY(raw::readUntil(stream, streamed, [](const QByteArray& b) { return b.contains("\"content\":\""); }));
        QTcpSocket queued;
        QVERIFY(raw::connectTo(queued, server.port()));
        QVERIFY(raw::sendAll(queued, raw::request("POST", "/v1/chat/completions", chatBody(4, false))));
        QTRY_COMPARE_WITH_TIMEOUT(engine.cacheStatus().waiting, 1, 30000);

        server.stop();

        const raw::Response r = raw::readResponse(stream, streamed);
        QCOMPARE(r.status, 200);
        QVERIFY2(r.complete, "the stream had no last chunk");
        const QByteArrayList data = raw::sseData(r.body);
        QVERIFY(data.size() >= 3);
        QCOMPARE(data.last(), QByteArray("[DONE]"));
        const QJsonObject error = QJsonDocument::fromJson(data[data.size() - 2]).object()["error"].toObject();
        QCOMPARE(error["code"].toString(), QStringLiteral("shutting_down"));
        QVERIFY(raw::waitForClose(stream));

        QByteArray buffer;
        const raw::Response waiting = raw::readResponse(queued, buffer);
        QCOMPARE(waiting.status, 503);
        QVERIFY(waiting.header("retry-after").toInt() >= 1);
        QCOMPARE(obj(waiting.body)["error"].toObject()["code"].toString(), QStringLiteral("shutting_down"));
        QTRY_COMPARE_WITH_TIMEOUT(engine.cacheStatus().running + engine.cacheStatus().waiting, 0, 30000);
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
