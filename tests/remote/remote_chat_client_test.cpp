// The streaming client against a fake OpenAI-compatible server on a loopback
// port: a stream split at awkward bytes (inside "data:", inside a UTF-8
// character, between CR and LF) with content, a tool call and the usage; 429
// with Retry-After, 503 with backoff, a Retry-After too long to wait; 401,
// 404 for a model, context too long (vLLM's and llama.cpp's bodies), 500; a
// refused port, a server that never answers, a stream that goes silent or is
// cut, an error event; cancel mid-stream and during a retry wait; GET
// /models; an answer that was not streamed. Each request ends in exactly one
// terminal signal.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>

#include "app/remote/remote_chat_client.h"
#include "tests/remote/fake_openai_server.h"

using namespace weir::remote;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

namespace {

struct ToolCallSeen {
    QString id, name, arguments;
};

// Everything one request produced.
struct Recorder {
    QString content, reasoning;
    QMap<int, ToolCallSeen> tools;
    QStringList terminals;   // "finished", "failed", "cancelled", "models"
    QString finishReason;
    RemoteUsage usage;
    RemoteError error;
    QList<int> retryWaits;
    QList<RemoteModel> models;

    void watch(RemoteChatClient& c, const quint64* id) {
        QObject::connect(&c, &RemoteChatClient::contentDelta, [this, id](quint64 i, const QString& t) { if (i == *id) content += t; });
        QObject::connect(&c, &RemoteChatClient::reasoningDelta, [this, id](quint64 i, const QString& t) { if (i == *id) reasoning += t; });
        QObject::connect(&c, &RemoteChatClient::toolCallDelta,
                         [this, id](quint64 i, int index, const QString& callId, const QString& name, const QString& args) {
                             if (i != *id) return;
                             ToolCallSeen& t = tools[index];
                             if (!callId.isEmpty()) t.id = callId;
                             if (!name.isEmpty()) t.name = name;
                             t.arguments += args;
                         });
        QObject::connect(&c, &RemoteChatClient::retrying, [this, id](quint64 i, int, int waitMs, const QString&) {
            if (i == *id) retryWaits << waitMs;
        });
        QObject::connect(&c, &RemoteChatClient::finished, [this, id](quint64 i, const QString& reason, const RemoteUsage& u) {
            if (i != *id) return;
            terminals << QStringLiteral("finished");
            finishReason = reason;
            usage = u;
        });
        QObject::connect(&c, &RemoteChatClient::failed, [this, id](quint64 i, const RemoteError& e) {
            if (i != *id) return;
            terminals << QStringLiteral("failed");
            error = e;
        });
        QObject::connect(&c, &RemoteChatClient::cancelled, [this, id](quint64 i) { if (i == *id) terminals << QStringLiteral("cancelled"); });
        QObject::connect(&c, &RemoteChatClient::modelsListed, [this, id](quint64 i, const QList<RemoteModel>& m) {
            if (i != *id) return;
            terminals << QStringLiteral("models");
            models = m;
        });
    }
};

QJsonObject chatBody(const QString& text = QStringLiteral("Hello")) {
    return {{QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                                  {QStringLiteral("content"), text}}}},
            {QStringLiteral("max_tokens"), 64}};
}

QByteArray delta(const QByteArray& content) {
    return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content +
           "\"},\"finish_reason\":null}]}\n\n";
}

RemoteClientOptions fast() {
    RemoteClientOptions o;
    o.connectTimeoutMs = 10000;
    o.readTimeoutMs = 10000;
    o.backoffMs = 20;
    o.systemProxy = false;
    return o;
}

FakeOpenAiServer::Answer answerWith(int status, QByteArray reason, QByteArray body, QByteArray headers = {},
                                    QByteArray type = "application/json") {
    return [=](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, status, reason, body, headers, type); };
}

FakeOpenAiServer::Answer shortStream(const QByteArray& text = "Hi") {
    return [=](QTcpSocket* s, const SeenRequest&) {
        FakeOpenAiServer::streamPieces(s, {delta(text),
                                           "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                                           "data: [DONE]\n\n"});
    };
}

} // namespace

class RemoteChatClientTest : public QObject {
    Q_OBJECT

    // Runs until the request's terminal signal, then a little longer to catch a second one.
    static void settle(Recorder& r, int timeoutMs = 15000) {
        QTRY_VERIFY_WITH_TIMEOUT(!r.terminals.isEmpty(), timeoutMs);
        QTest::qWait(50);
    }

private slots:
    void initTestCase() {
        // The client takes proxies from the environment; the loopback server must be reached directly.
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
    }

    void streamsContentToolCallsAndUsage() {
        FakeOpenAiServer server;
        // The pieces cut "data:" in two, a UTF-8 "é" (C3 A9) in two, and CR from LF.
        const QByteArray role = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n";
        const QByteArray caf = delta("Caf\xC3\xA9 ");
        const qsizetype mid = caf.indexOf("\xA9");
        server.script({[&](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {
                ": ping\n\n" + role.left(3), role.mid(3, role.size() - 4), role.right(1) + caf.left(mid),
                caf.mid(mid) + delta("au lait").left(10), delta("au lait").mid(10) + "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\r",
                "\n\r\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                "\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Paris\\\"}\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
                "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19,"
                "\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n",
                "data: [DO", "NE]\n\n"});
        }});
        RemoteChatClient client({QUrl(server.baseUrl()), QStringLiteral("sk-test")}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("qwen3"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.content, QStringLiteral("Café au lait"));
        QCOMPARE(r.reasoning, QStringLiteral("think"));
        QCOMPARE(r.tools.size(), 1);
        QCOMPARE(r.tools[0].id, QStringLiteral("call_1"));
        QCOMPARE(r.tools[0].name, QStringLiteral("get_weather"));
        QCOMPARE(r.tools[0].arguments, QStringLiteral("{\"city\":\"Paris\"}"));
        QCOMPARE(r.finishReason, QStringLiteral("tool_calls"));
        QCOMPARE(r.usage.promptTokens.value_or(-1), 12);
        QCOMPARE(r.usage.completionTokens.value_or(-1), 7);
        QCOMPARE(r.usage.cachedPromptTokens.value_or(-1), 4);
        QCOMPARE(client.activeRequests(), 0);

        QCOMPARE(server.requests().size(), 1);
        const SeenRequest& req = server.requests()[0];
        QCOMPARE(req.method, QByteArray("POST"));
        QCOMPARE(req.path, QByteArray("/v1/chat/completions"));
        QCOMPARE(req.headers.value("authorization"), QByteArray("Bearer sk-test"));
        QCOMPARE(req.headers.value("accept"), QByteArray("text/event-stream"));
        const QJsonObject body = QJsonDocument::fromJson(req.body).object();
        QCOMPARE(body.value(QStringLiteral("model")).toString(), QStringLiteral("qwen3"));
        QCOMPARE(body.value(QStringLiteral("stream")).toBool(), true);
        QCOMPARE(body.value(QStringLiteral("stream_options")).toObject().value(QStringLiteral("include_usage")).toBool(), true);
        QCOMPARE(body.value(QStringLiteral("max_tokens")).toInt(), 64);
        QCOMPARE(body.value(QStringLiteral("messages")).toArray().size(), 1);
    }

    void retriesAfter429HonouringRetryAfter() {
        FakeOpenAiServer server;
        server.script({answerWith(429, "Too Many Requests", "{\"error\":{\"message\":\"rate limited\"}}", "Retry-After: 1\r\n"),
                       shortStream("after the wait")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.retryWaits, QList<int>{1000});
        QCOMPARE(server.requests().size(), 2);
        QCOMPARE(server.requests()[1].body, server.requests()[0].body);
        QCOMPARE(r.content, QStringLiteral("after the wait"));
        QVERIFY(!server.requests()[0].headers.contains("authorization"));   // no key, no header
    }

    void retryAfterAsAnHttpDate() {
        FakeOpenAiServer server;
        // As HTTP writes dates: "Fri, 04 Dec 2026 21:51:00 GMT".
        const QByteArray when = QLocale::c()
                                    .toString(QDateTime::currentDateTimeUtc().addSecs(3), QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'"))
                                    .toLatin1();
        server.script({answerWith(503, "Service Unavailable", "{}", "Retry-After: " + when + "\r\n"), shortStream("later")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.retryWaits.size(), 1);
        // The date is two to three seconds away: the wait is the server's, not the 20 ms backoff.
        QVERIFY2(r.retryWaits[0] >= 1000 && r.retryWaits[0] <= 3000, qPrintable(QString::number(r.retryWaits[0])));
        QCOMPARE(server.requests().size(), 2);
    }

    void gives503UpAfterTheRetriesWithBackoff() {
        FakeOpenAiServer server;
        server.script({answerWith(503, "Service Unavailable", "{\"error\":{\"message\":\"engine is loading\"}}")});
        RemoteClientOptions o = fast();
        o.maxRetries = 2;
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, o);
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(server.requests().size(), 3);
        QCOMPARE(r.retryWaits, (QList<int>{20, 40}));   // doubles each time
        QCOMPARE(r.error.kind, RemoteErrorKind::Overloaded);
        QCOMPARE(r.error.httpStatus, 503);
        QVERIFY2(r.error.message.contains(QLatin1String("busy (HTTP 503)")), qPrintable(r.error.message));
        QVERIFY2(r.error.message.contains(QLatin1String("engine is loading")), qPrintable(r.error.message));
    }

    void doesNotWaitForARetryAfterTooLong() {
        FakeOpenAiServer server;
        server.script({answerWith(429, "Too Many Requests", "{\"error\":\"quota\"}", "Retry-After: 3600\r\n")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(server.requests().size(), 1);
        QCOMPARE(r.error.kind, RemoteErrorKind::Overloaded);
        QVERIFY2(r.error.message.contains(QLatin1String("asked to retry after 3600 s")), qPrintable(r.error.message));
        QVERIFY2(r.error.message.contains(QLatin1String("quota")), qPrintable(r.error.message));
    }

    void plainWordsForHttpErrors_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QStringList>("words");
        QTest::newRow("401") << 401 << QByteArray("{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\"}}")
                             << int(RemoteErrorKind::Unauthorized)
                             << QStringList{QStringLiteral("refused the API key (HTTP 401)"), QStringLiteral("Incorrect API key provided")};
        QTest::newRow("404 model (Weir)")
            << 404 << QByteArray("{\"error\":{\"message\":\"The model 'big-model' does not exist; this server serves 'smollm2'.\",\"code\":\"model_not_found\"}}")
            << int(RemoteErrorKind::ModelNotFound) << QStringList{QStringLiteral("no model named “big-model”"), QStringLiteral("serves 'smollm2'")};
        QTest::newRow("404 model (Ollama)") << 404 << QByteArray("{\"error\":\"model \\\"big-model\\\" not found, try pulling it first\"}")
                                            << int(RemoteErrorKind::ModelNotFound) << QStringList{QStringLiteral("no model named “big-model”")};
        QTest::newRow("404 path") << 404 << QByteArray("Not Found") << int(RemoteErrorKind::Http)
                                  << QStringList{QStringLiteral("no such endpoint"), QStringLiteral("base URL")};
        QTest::newRow("context (vLLM)")
            << 400
            << QByteArray("{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4936 in the messages, 64 in the completion). Please reduce the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}")
            << int(RemoteErrorKind::ContextTooLong)
            << QStringList{QStringLiteral("too long for “big-model”"), QStringLiteral("holds 4096 tokens"), QStringLiteral("needs 5000")};
        QTest::newRow("context (llama.cpp)")
            << 400
            << QByteArray("{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":9000,\"n_ctx\":8192}}")
            << int(RemoteErrorKind::ContextTooLong) << QStringList{QStringLiteral("holds 8192 tokens"), QStringLiteral("needs 9000")};
        QTest::newRow("context (N tokens) wording")
            << 400 << QByteArray("{\"error\":{\"message\":\"The input (5,000 tokens) is longer than the model's context length (4,096 tokens).\"}}")
            << int(RemoteErrorKind::ContextTooLong) << QStringList{QStringLiteral("holds 4096 tokens"), QStringLiteral("needs 5000")};
        QTest::newRow("500") << 500 << QByteArray("{\"detail\":\"CUDA out of memory\"}") << int(RemoteErrorKind::Http)
                             << QStringList{QStringLiteral("answered HTTP 500"), QStringLiteral("CUDA out of memory")};
        QTest::newRow("400 other") << 400 << QByteArray("{\"error\":{\"message\":\"temperature must be at most 2\"}}")
                                   << int(RemoteErrorKind::Http) << QStringList{QStringLiteral("HTTP 400"), QStringLiteral("temperature")};
    }
    void plainWordsForHttpErrors() {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(int, kind);
        QFETCH(QStringList, words);
        FakeOpenAiServer server;
        server.script({answerWith(status, "Error", body)});
        RemoteChatClient client({QUrl(server.baseUrl()), QStringLiteral("k")}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("big-model"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(int(r.error.kind), kind);
        QCOMPARE(r.error.httpStatus, status);
        QCOMPARE(server.requests().size(), 1);   // no retry
        QVERIFY2(r.error.message.contains(QStringLiteral("127.0.0.1:%1").arg(server.port())), qPrintable(r.error.message));
        for (const QString& w : words) QVERIFY2(r.error.message.contains(w), qPrintable(r.error.message));
    }

    void unreachablePort() {
        quint16 port = 0;
        {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            port = probe.serverPort();
        }   // closed again: nothing listens there now
        RemoteChatClient client({QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(r.error.kind, RemoteErrorKind::Unreachable);
        QVERIFY2(r.error.message.contains(QStringLiteral("Cannot reach 127.0.0.1:%1").arg(port)), qPrintable(r.error.message));
        QVERIFY2(r.error.message.contains(QLatin1String("refused")), qPrintable(r.error.message));
    }

    void serverThatNeverAnswersTimesOut() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket*, const SeenRequest&) {}});   // reads the request, says nothing
        RemoteClientOptions o = fast();
        o.readTimeoutMs = 300;
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, o);
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(r.error.kind, RemoteErrorKind::Timeout);
        QVERIFY2(r.error.message.contains(QLatin1String("took the request but did not answer within 0.3 s")),
                 qPrintable(r.error.message));
        QTRY_COMPARE(server.disconnects(), 1);   // the client closed the connection
    }

    // A server that holds its headers back while it works (weir serve reading
    // a long prompt, or writing a tool call it sends whole) is not a
    // connection that failed: past the connect timeout, the answer still comes.
    void aSlowFirstAnswerIsNotATimeout() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
            QTimer::singleShot(900, s, [s] {
                FakeOpenAiServer::streamPieces(s, {delta("Late"), "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                                                   "data: [DONE]\n\n"});
            });
        }});
        RemoteClientOptions o = fast();
        o.connectTimeoutMs = 300;
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, o);
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.content, QStringLiteral("Late"));
    }

    void streamThatGoesSilentTimesOutKeepingThePartial() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Hel")}, nullptr); }});
        RemoteClientOptions o = fast();
        o.readTimeoutMs = 300;
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, o);
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(r.content, QStringLiteral("Hel"));
        QCOMPARE(r.error.kind, RemoteErrorKind::Timeout);
        QVERIFY2(r.error.message.contains(QLatin1String("in the middle of the answer")), qPrintable(r.error.message));
    }

    void cutStreamKeepsThePartial() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {delta("Hel"), delta("lo")}, [](QTcpSocket* sock) { sock->disconnectFromHost(); });
        }});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(r.content, QStringLiteral("Hello"));
        QCOMPARE(r.error.kind, RemoteErrorKind::StreamCut);
        QVERIFY2(r.error.message.contains(QLatin1String("ended before the answer finished")), qPrintable(r.error.message));
    }

    void errorEventInTheStream() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {delta("Hel"), "data: {\"error\":{\"message\":\"the engine stopped\",\"code\":500}}\n\n",
                                               "data: [DONE]\n\n"});
        }});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(r.content, QStringLiteral("Hel"));
        QCOMPARE(r.error.httpStatus, 500);
        QVERIFY2(r.error.message.contains(QLatin1String("the engine stopped")), qPrintable(r.error.message));
    }

    void cancelMidStreamClosesTheConnection() {
        FakeOpenAiServer server;
        // One delta, then the stream stays open as a long generation would.
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Once upon")}, nullptr); }});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        connect(&client, &RemoteChatClient::contentDelta, &client, [&](quint64 i, const QString&) { client.cancel(i); });
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("cancelled")});
        QCOMPARE(r.content, QStringLiteral("Once upon"));
        QTRY_COMPARE(server.disconnects(), 1);
        client.cancel(id);   // already over: nothing more
        QTest::qWait(20);
        QCOMPARE(r.terminals.size(), 1);
    }

    void cancelDuringTheRetryWait() {
        FakeOpenAiServer server;
        server.script({answerWith(429, "Too Many Requests", "{}", "Retry-After: 1\r\n")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        connect(&client, &RemoteChatClient::retrying, &client, [&](quint64 i, int, int, const QString&) { client.cancel(i); });
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("cancelled")});
        QTest::qWait(1300);   // past the wait: no second request goes out
        QCOMPARE(server.requests().size(), 1);
        QCOMPARE(r.terminals.size(), 1);
    }

    void listsModels() {
        FakeOpenAiServer server;
        server.script({answerWith(200, "OK",
                                  "{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen3-8B\",\"object\":\"model\",\"owned_by\":\"vllm\",\"max_model_len\":32768}, {\"id\":\"smollm2\",\"object\":\"model\",\"owned_by\":\"llamacpp\",\"meta\":{\"n_ctx_train\":8192}}, {\"id\":\"plain\",\"object\":\"model\",\"owned_by\":\"weir\"}]}")});
        // A base URL without /v1 gets it.
        RemoteChatClient client({QUrl(QStringLiteral("http://127.0.0.1:%1/").arg(server.port())), QStringLiteral("k")}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.listModels();
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("models")});
        QCOMPARE(server.requests()[0].method, QByteArray("GET"));
        QCOMPARE(server.requests()[0].path, QByteArray("/v1/models"));
        QCOMPARE(r.models.size(), 3);
        QCOMPARE(r.models[0].id, QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(r.models[0].contextLength.value_or(-1), 32768);
        QCOMPARE(r.models[1].contextLength.value_or(-1), 8192);
        QVERIFY(!r.models[2].contextLength);
        QCOMPARE(r.models[2].ownedBy, QStringLiteral("weir"));
    }

    void answerThatWasNotStreamed() {
        FakeOpenAiServer server;
        server.script({answerWith(200, "OK",
                                  "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"All at once\"},\"finish_reason\":\"stop\"}], \"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.content, QStringLiteral("All at once"));
        QCOMPARE(r.finishReason, QStringLiteral("stop"));
        QCOMPARE(r.usage.completionTokens.value_or(-1), 3);
    }

    void streamWithoutItsContentType() {
        FakeOpenAiServer server;
        server.script({answerWith(200, "OK", delta("plain") + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
                                  {}, {})});   // no Content-Type at all
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.content, QStringLiteral("plain"));
    }

    void proxyFromTheEnvironment() {
        // The fake server plays the proxy: it gets the request with the absolute URL.
        FakeOpenAiServer proxy;
        proxy.script({shortStream("via the proxy")});
        qputenv("http_proxy", QStringLiteral("http://127.0.0.1:%1").arg(proxy.port()).toUtf8());
        RemoteClientOptions o = fast();
        o.systemProxy = true;
        RemoteChatClient client({QUrl(QStringLiteral("http://gpu-box.invalid:8000/v1")), {}}, o);
        quint64 id = 0;
        Recorder r;
        r.watch(client, &id);
        id = client.startChat(QStringLiteral("m"), chatBody());
        settle(r);
        qunsetenv("http_proxy");
        QCOMPARE(r.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(r.content, QStringLiteral("via the proxy"));
        QCOMPARE(proxy.requests().size(), 1);
        QCOMPARE(proxy.requests()[0].path, QByteArray("http://gpu-box.invalid:8000/v1/chat/completions"));
    }

    void severalRequestsAtOnceEachEndOnce() {
        FakeOpenAiServer server;
        server.script({shortStream("one")});
        RemoteChatClient client({QUrl(server.baseUrl()), {}}, fast());
        quint64 a = 0, b = 0, c = 0;
        Recorder ra, rb, rc;
        ra.watch(client, &a);
        rb.watch(client, &b);
        rc.watch(client, &c);
        a = client.startChat(QStringLiteral("m"), chatBody());
        b = client.startChat(QStringLiteral("m"), chatBody());
        c = client.startChat(QStringLiteral("m"), chatBody());
        QVERIFY(a != b && b != c && a != 0);
        client.cancel(b);
        settle(ra);
        settle(rc);
        QCOMPARE(ra.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(rb.terminals, QStringList{QStringLiteral("cancelled")});
        QCOMPARE(rc.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(ra.content, QStringLiteral("one"));
        QCOMPARE(rb.content, QString());
        QCOMPARE(client.activeRequests(), 0);
    }
};

QTEST_GUILESS_MAIN(RemoteChatClientTest)
#include "remote_chat_client_test.moc"
