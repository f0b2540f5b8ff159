// The remote client and the pool poller against llama.cpp's own server
// (llama-server on SmolLM2 135M, tests/remote/llama_server_process.h): a
// streamed answer whose deltas, joined in order, are the answer the server
// gives unstreamed, with the same usage; a cancel mid-stream that ends the
// request once and stops the server generating; structured output under a
// JSON schema; a refused key; an
// unreachable port and host; and the pool gauges read from /metrics and
// /slots, with slots that share one cache (-kvu) not counted twice. Skipped (exit 77) when llama-server or the model is not there.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QTcpServer>
#include <cmath>

#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_pool_poller.h"
#include "app/remote/remote_pool_status.h"
#include "tests/remote/closed_port.h"
#include "tests/remote/llama_server_process.h"

using namespace weir::remote;
using weir::test::LlamaServer;
using weir::test::patienceMs;

using weir::test::closedPort;

namespace {

const QString kKey = QStringLiteral("llama-test-key");
const QString kModel = QStringLiteral("smollm2");

struct Outcome {
    QStringList deltas;
    QString content;
    QStringList terminals;
    QString finishReason;
    RemoteUsage usage;
    RemoteError error;
};

// Starts one request with `start` and runs until its terminal signal;
// `onDelta` sees each content delta as it comes (and may cancel).
Outcome run(RemoteChatClient& c, const std::function<quint64()>& start,
            const std::function<void(quint64, const Outcome&)>& onDelta = {}) {
    Outcome o;
    quint64 id = 0;
    QList<QMetaObject::Connection> cs;
    cs << QObject::connect(&c, &RemoteChatClient::contentDelta, [&](quint64 i, const QString& t) {
        if (i != id) return;
        o.deltas << t;
        o.content += t;
        if (onDelta) onDelta(i, o);
    });
    cs << QObject::connect(&c, &RemoteChatClient::finished, [&](quint64 i, const QString& reason, const RemoteUsage& u) {
        if (i == id) o.terminals << QStringLiteral("finished"), o.finishReason = reason, o.usage = u;
    });
    cs << QObject::connect(&c, &RemoteChatClient::failed, [&](quint64 i, const RemoteError& e) {
        if (i == id) o.terminals << QStringLiteral("failed"), o.error = e;
    });
    cs << QObject::connect(&c, &RemoteChatClient::cancelled, [&](quint64 i) { if (i == id) o.terminals << QStringLiteral("cancelled"); });
    id = start();
    QElapsedTimer t;
    t.start();
    while (o.terminals.isEmpty() && t.elapsed() < patienceMs()) QTest::qWait(10);
    QTest::qWait(50);   // a second terminal signal would come by now
    for (const auto& k : cs) QObject::disconnect(k);
    return o;
}

QJsonObject ask(const QString& text, int maxTokens) {
    return {{QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                                  {QStringLiteral("content"), text}}}},
            {QStringLiteral("max_tokens"), maxTokens},
            {QStringLiteral("temperature"), 0}};
}

// The same request, not streamed, through a plain POST: the server's own answer.
QJsonObject unstreamed(const LlamaServer& server, QJsonObject body) {
    body.insert(QStringLiteral("model"), kModel);
    body.insert(QStringLiteral("stream"), false);
    QNetworkAccessManager nam;
    nam.setProxy(QNetworkProxy::NoProxy);
    QNetworkRequest req{QUrl(server.baseUrl() + QStringLiteral("/chat/completions"))};
    req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    req.setRawHeader("Authorization", "Bearer " + kKey.toUtf8());
    QNetworkReply* r = nam.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
    QElapsedTimer t;
    t.start();
    while (!r->isFinished() && t.elapsed() < patienceMs()) QTest::qWait(10);
    const QJsonObject o = QJsonDocument::fromJson(r->readAll()).object();
    r->deleteLater();
    return o;
}

} // namespace

class LlamaServerClientTest : public QObject {
    Q_OBJECT
    LlamaServer server_;
    RemoteClientOptions options_;

    RemoteEndpoint endpoint(const QString& key = kKey) const { return {QUrl(server_.baseUrl()), key}; }

private slots:
    void initTestCase() {
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
        QString why;
        QVERIFY2(server_.start({kKey}, &why), qPrintable(why));
        options_.connectTimeoutMs = patienceMs();
        options_.readTimeoutMs = patienceMs();
        options_.maxRetries = 0;
    }

    void cleanupTestCase() { server_.stop(); }

    // The deltas, joined in the order they came, are the answer llama-server
    // writes when it is not asked to stream (greedy, no cached prompt, so both
    // runs compute the same), and the usage is its usage.
    void deltasJoinedAreTheWholeAnswer() {
        QJsonObject body = ask(QStringLiteral("Name three colours of the rainbow."), 24);
        body.insert(QStringLiteral("cache_prompt"), false);
        RemoteChatClient c(endpoint(), options_);
        const Outcome o = run(c, [&] { return c.startChat(kModel, body); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("finished")});
        QVERIFY(o.deltas.size() > 1);

        const QJsonObject whole = unstreamed(server_, body);
        const QJsonObject choice = whole[QStringLiteral("choices")][0].toObject();
        QCOMPARE(o.content, choice[QStringLiteral("message")][QStringLiteral("content")].toString());
        QCOMPARE(o.finishReason, choice[QStringLiteral("finish_reason")].toString());
        const QJsonObject usage = whole[QStringLiteral("usage")].toObject();
        QVERIFY(o.usage.promptTokens.has_value());
        QCOMPARE(*o.usage.promptTokens, usage[QStringLiteral("prompt_tokens")].toInteger());
        QCOMPARE(o.usage.completionTokens.value_or(-1), usage[QStringLiteral("completion_tokens")].toInteger());
        QVERIFY(*o.usage.completionTokens <= 24);
    }

    // Cancel at the third delta: one terminal signal, the text so far kept,
    // and llama-server sees the closed connection and stops generating long
    // before the 400 tokens it was asked for.
    void cancelMidStreamEndsOnceAndFreesTheSlot() {
        QJsonObject body = ask(QStringLiteral("Tell me a long story about a river."), 400);
        body.insert(QStringLiteral("ignore_eos"), true);
        const QString predicted = QStringLiteral("llamacpp:tokens_predicted_total");
        const double before = server_.metric(predicted);
        RemoteChatClient c(endpoint(), options_);
        const Outcome o = run(c, [&] { return c.startChat(kModel, body); }, [&](quint64 id, const Outcome& so) {
            if (so.deltas.size() == 3) c.cancel(id);
        });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("cancelled")});
        QCOMPARE(o.deltas.size(), 3);
        QCOMPARE(c.activeRequests(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!server_.anySlotBusy(), patienceMs());
        // The request ended at the server with what it had generated by then.
        QTRY_VERIFY_WITH_TIMEOUT(server_.metric(predicted) > before, patienceMs());
        const double generated = server_.metric(predicted) - before;
        QVERIFY2(generated >= 3 && generated < 400, qPrintable(QString::number(generated)));
    }

    // response_format json_schema, as the client passes it through: the
    // answer parses and has exactly the schema's fields and types.
    void structuredOutputMatchesTheSchema() {
        const QJsonObject schema = QJsonDocument::fromJson(R"({"type":"object",
            "properties":{"name":{"type":"string","maxLength":24},"age":{"type":"integer","minimum":0,"maximum":150}},
            "required":["name","age"],"additionalProperties":false})").object();
        QJsonObject body = ask(QStringLiteral("Invent a person. Answer in JSON."), 64);
        body.insert(QStringLiteral("response_format"),
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("json_schema")},
                                {QStringLiteral("json_schema"), QJsonObject{{QStringLiteral("name"), QStringLiteral("person")},
                                                                            {QStringLiteral("strict"), true},
                                                                            {QStringLiteral("schema"), schema}}}});
        RemoteChatClient c(endpoint(), options_);
        const Outcome o = run(c, [&] { return c.startChat(kModel, body); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("finished")});
        QCOMPARE(o.finishReason, QStringLiteral("stop"));
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(o.content.toUtf8(), &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError && doc.isObject(), qPrintable(o.content));
        const QJsonObject person = doc.object();
        QCOMPARE(person.keys(), (QStringList{QStringLiteral("age"), QStringLiteral("name")}));
        QVERIFY(person[QStringLiteral("name")].isString());
        QVERIFY(person[QStringLiteral("name")].toString().size() <= 24);
        const double age = person[QStringLiteral("age")].toDouble(-1);
        QVERIFY2(age >= 0 && age <= 150 && age == std::floor(age), qPrintable(o.content));
    }

    void aWrongKeyIsRefusedInPlainWords() {
        RemoteChatClient c(endpoint(QStringLiteral("not-the-key")), options_);
        const Outcome o = run(c, [&] { return c.startChat(kModel, ask(QStringLiteral("Hi"), 4)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::Unauthorized);
        QCOMPARE(o.error.httpStatus, 401);
        QVERIFY2(o.error.message.startsWith(QStringLiteral("127.0.0.1:%1 refused the API key (HTTP 401)").arg(server_.port())),
                 qPrintable(o.error.message));
        QVERIFY2(o.error.message.contains(QLatin1String("Invalid API Key")), qPrintable(o.error.message));
    }

    void anUnreachablePortOrHostFailsInPlainWords() {
        const quint16 port = closedPort();
        RemoteChatClient refused({QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)), kKey}, options_);
        Outcome o = run(refused, [&] { return refused.startChat(kModel, ask(QStringLiteral("Hi"), 4)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::Unreachable);
        QCOMPARE(o.error.message, QStringLiteral("Cannot reach 127.0.0.1:%1: the connection was refused (is the server "
                                                 "running, on that port?).").arg(port));
        // .invalid never resolves (RFC 2606).
        RemoteChatClient nowhere({QUrl(QStringLiteral("http://llama-box.invalid:8080/v1")), kKey}, options_);
        o = run(nowhere, [&] { return nowhere.startChat(kModel, ask(QStringLiteral("Hi"), 4)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::Unreachable);
        QVERIFY2(o.error.message.startsWith(QStringLiteral("Cannot reach llama-box.invalid:8080")), qPrintable(o.error.message));
    }

    // The poller finds llama.cpp's /metrics and /slots and reads real gauges:
    // while a reply is written, one running, none waiting, two slots and the
    // KV cache they hold (from /slots: this server's /metrics has no KV
    // gauge); after it ended, the tokens/s over the two readings (this server
    // counts a request's tokens when it ends) and the cached share of prompts.
    void thePollerReadsTheGauges() {
        QJsonObject body = ask(QStringLiteral("Tell me a long story about a river."), 1500);
        body.insert(QStringLiteral("ignore_eos"), true);
        RemoteChatClient c(endpoint(), options_);
        int deltas = 0;
        connect(&c, &RemoteChatClient::contentDelta, &c, [&] { ++deltas; });
        const quint64 id = c.startChat(kModel, body);
        QTRY_VERIFY_WITH_TIMEOUT(deltas > 0, patienceMs());

        RemotePoolPoller p(endpoint(), options_);
        QSignalSpy spy(&p, &RemotePoolPoller::statusRead);
        p.pollOnce();
        QVERIFY(spy.wait(patienceMs()));
        const RemotePoolStatus during = spy.last().first().value<RemotePoolStatus>();
        QCOMPARE(during.source, RemoteSource::LlamaCpp);
        QCOMPARE(remoteSourceName(during.source), QStringLiteral("llama.cpp server /metrics"));
        QCOMPARE(during.running.value_or(-1), 1);
        QCOMPARE(during.waiting.value_or(-1), 0);
        QCOMPARE(during.maxRunning.value_or(-1), 2);
        // -c 2048 split over two slots: 1,024 each. Whether they share one
        // cache is not said, so neither its size nor its use is claimed.
        QCOMPARE(during.slotContextTokens.value_or(-1), 1024);
        QVERIFY(!during.kvCapacityTokens);
        QVERIFY(!during.kvUsage);
        QVERIFY(!during.sourceOf.contains(QStringLiteral("running")));   // /metrics has it

        c.cancel(id);
        QTRY_VERIFY_WITH_TIMEOUT(!server_.anySlotBusy(), patienceMs());
        p.pollOnce();
        QVERIFY(spy.wait(patienceMs()));
        const RemotePoolStatus after = spy.last().first().value<RemotePoolStatus>();
        QCOMPARE(after.running.value_or(-1), 0);
        QVERIFY2(after.tokensPerSecond.value_or(0) > 0, qPrintable(after.notes.join(QStringLiteral("; "))));
        QVERIFY2(after.prefixHitRate.has_value(), qPrintable(after.notes.join(QStringLiteral("; "))));
        for (const QString& n : after.notes) QVERIFY2(!n.contains(QLatin1String("not exposed")), qPrintable(n));
    }

    // Two slots sharing one cache of 2,048 tokens (-kvu): each reports all of
    // it, and the cache is not counted twice.
    void slotsSharingOneCacheAreNotCountedTwice() {
        LlamaServer shared;
        QString why;
        LlamaServer::Options o;
        o.apiKey = kKey;
        o.unifiedKv = true;
        QVERIFY2(shared.start(o, &why), qPrintable(why));
        for (const QJsonValue& slot : shared.slotList()) QCOMPARE(slot[QStringLiteral("n_ctx")].toInt(), 2048);
        RemotePoolPoller p({QUrl(shared.baseUrl()), kKey}, options_);
        QSignalSpy spy(&p, &RemotePoolPoller::statusRead);
        p.pollOnce();
        QVERIFY(spy.wait(patienceMs()));
        const RemotePoolStatus s = spy.last().first().value<RemotePoolStatus>();
        QCOMPARE(s.maxRunning.value_or(-1), 2);
        QCOMPARE(s.slotContextTokens.value_or(-1), 2048);
        QVERIFY2(!s.kvCapacityTokens, qPrintable(QString::number(s.kvCapacityTokens.value_or(-1))));
        const QString note = QStringLiteral("KV cache usage: llama.cpp's server does not say whether its 2 slots share one "
                                            "cache of 2048 tokens");
        bool said = false;
        for (const QString& n : s.notes) said |= n.startsWith(note);
        QVERIFY2(said, qPrintable(s.notes.join(QStringLiteral("; "))));
    }
};

int main(int argc, char** argv) {
    if (const int skip = weir::test::skipWithoutLlamaServer()) return skip;
    QCoreApplication app(argc, argv);
    LlamaServerClientTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "llama_server_client_test.moc"
