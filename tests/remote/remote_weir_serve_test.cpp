// The client and the pool status against a real remote engine: `weir-cli
// serve` on SmolLM2 135M in a child process, on a free loopback port, with an
// API key: the model list, a streamed answer with its usage, a wrong key, an
// unknown model, a prompt longer than the context, a cancel mid-stream that
// frees the server's pool, a server killed mid-reply (the partial kept), and
// the gauges read from /v1/cache/status and
// /v1/stats, directly and by the poller. Skipped when weir-cli or the model
// is not there.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QProcess>

#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_pool_poller.h"
#include "app/remote/remote_pool_status.h"

using namespace weir::remote;

namespace {

const QString kKey = QStringLiteral("weir-test-key");

struct Outcome {
    QString content;
    QStringList terminals;
    RemoteUsage usage;
    RemoteError error;
    QList<RemoteModel> models;
};

// Starts one request with `start` and runs until its terminal signal.
Outcome run(RemoteChatClient& c, const std::function<quint64()>& start, bool cancelOnFirstDelta = false) {
    Outcome o;
    quint64 id = 0;
    QList<QMetaObject::Connection> cs;
    cs << QObject::connect(&c, &RemoteChatClient::contentDelta, [&](quint64 i, const QString& t) {
        if (i != id) return;
        o.content += t;
        if (cancelOnFirstDelta) c.cancel(i);
    });
    cs << QObject::connect(&c, &RemoteChatClient::finished, [&](quint64 i, const QString&, const RemoteUsage& u) {
        if (i == id) o.terminals << QStringLiteral("finished"), o.usage = u;
    });
    cs << QObject::connect(&c, &RemoteChatClient::failed, [&](quint64 i, const RemoteError& e) {
        if (i == id) o.terminals << QStringLiteral("failed"), o.error = e;
    });
    cs << QObject::connect(&c, &RemoteChatClient::cancelled, [&](quint64 i) { if (i == id) o.terminals << QStringLiteral("cancelled"); });
    cs << QObject::connect(&c, &RemoteChatClient::modelsListed, [&](quint64 i, const QList<RemoteModel>& m) {
        if (i == id) o.terminals << QStringLiteral("models"), o.models = m;
    });
    id = start();
    QElapsedTimer t;
    t.start();
    while (o.terminals.isEmpty() && t.elapsed() < 120000) QTest::qWait(10);
    QTest::qWait(50);
    for (const auto& k : cs) QObject::disconnect(k);
    return o;
}

QJsonObject ask(const QString& text, int maxTokens) {
    return {{QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                                  {QStringLiteral("content"), text}}}},
            {QStringLiteral("max_tokens"), maxTokens},
            {QStringLiteral("temperature"), 0}};
}

QJsonObject getJson(const QString& url) {
    QNetworkAccessManager nam;
    nam.setProxy(QNetworkProxy::NoProxy);
    QNetworkRequest req{QUrl(url)};
    req.setRawHeader("Authorization", "Bearer " + kKey.toUtf8());
    QNetworkReply* r = nam.get(req);
    QSignalSpy done(r, &QNetworkReply::finished);
    done.wait(30000);
    const QJsonObject o = QJsonDocument::fromJson(r->readAll()).object();
    r->deleteLater();
    return o;
}

} // namespace

class RemoteWeirServeTest : public QObject {
    Q_OBJECT
    QProcess server_;
    QString base_;
    RemoteClientOptions options_;

    // Starts `weir-cli serve` in `p`; returns its base URL ("http://127.0.0.1:PORT/v1"), or "" with the reason in `why`.
    static QString startServer(QProcess& p, QString* why) {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + QStringLiteral("/weir-cli");
        const QString model = qEnvironmentVariable("WEIR_SOURCE_DIR") + QStringLiteral("/models/smollm2-135m-instruct-q4_1.gguf");
        p.setProgram(cli);
        p.setArguments({QStringLiteral("serve"), QStringLiteral("-m"), model, QStringLiteral("--port"), QStringLiteral("0"),
                        QStringLiteral("--api-key"), kKey, QStringLiteral("--model-id"), QStringLiteral("smollm2"),
                        QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--max-context"), QStringLiteral("512")});
        p.setProcessChannelMode(QProcess::SeparateChannels);
        p.start();
        if (!p.waitForStarted(30000)) {
            *why = QStringLiteral("weir-cli did not start");
            return {};
        }
        QByteArray out;
        while (!out.contains('\n')) {
            if (!p.waitForReadyRead(120000)) {
                *why = QString::fromUtf8(p.readAllStandardError());
                return {};
            }
            out += p.readAllStandardOutput();
        }
        // "listening on http://127.0.0.1:PORT/v1"
        const QString base = QString::fromUtf8(out.left(out.indexOf('\n')).split(' ').last().trimmed());
        if (!base.startsWith(QLatin1String("http://"))) *why = QString::fromUtf8(out);
        return base.startsWith(QLatin1String("http://")) ? base : QString();
    }

private slots:
    void initTestCase() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + QStringLiteral("/weir-cli");
        const QString model = qEnvironmentVariable("WEIR_SOURCE_DIR") + QStringLiteral("/models/smollm2-135m-instruct-q4_1.gguf");
        if (!QFileInfo(cli).isExecutable()) QSKIP("weir-cli is not built");
        if (!QFileInfo::exists(model)) QSKIP("models/smollm2-135m-instruct-q4_1.gguf is not there");
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
        QString why;
        base_ = startServer(server_, &why);
        QVERIFY2(!base_.isEmpty(), qPrintable(why));
        options_.connectTimeoutMs = 60000;
        options_.readTimeoutMs = 60000;
    }

    void cleanupTestCase() {
        if (server_.state() == QProcess::NotRunning) return;
        server_.terminate();
        if (!server_.waitForFinished(30000)) server_.kill();
    }

    void listsTheModel() {
        RemoteChatClient c({QUrl(base_), kKey}, options_);
        const Outcome o = run(c, [&] { return c.listModels(); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("models")});
        QCOMPARE(o.models.size(), 1);
        QCOMPARE(o.models[0].id, QStringLiteral("smollm2"));
        QCOMPARE(o.models[0].contextLength.value_or(-1), 512);  // --max-context, as max_model_len
    }

    void streamsAnAnswerWithItsUsage() {
        RemoteChatClient c({QUrl(base_), kKey}, options_);
        const Outcome o = run(c, [&] { return c.startChat(QStringLiteral("smollm2"), ask(QStringLiteral("Say hello."), 12)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("finished")});
        QVERIFY(!o.content.isEmpty());
        QVERIFY(o.usage.promptTokens.value_or(0) > 0);
        QVERIFY(o.usage.completionTokens.value_or(0) > 0);
        QVERIFY(o.usage.completionTokens.value_or(99) <= 12);
    }

    void wrongKey() {
        RemoteChatClient c({QUrl(base_), QStringLiteral("not-the-key")}, options_);
        const Outcome o = run(c, [&] { return c.startChat(QStringLiteral("smollm2"), ask(QStringLiteral("Hi"), 4)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::Unauthorized);
        QVERIFY2(o.error.message.contains(QLatin1String("refused the API key (HTTP 401)")), qPrintable(o.error.message));
    }

    void unknownModel() {
        RemoteChatClient c({QUrl(base_), kKey}, options_);
        const Outcome o = run(c, [&] { return c.startChat(QStringLiteral("llama-405b"), ask(QStringLiteral("Hi"), 4)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::ModelNotFound);
        QVERIFY2(o.error.message.contains(QStringLiteral("no model named “llama-405b”")), qPrintable(o.error.message));
    }

    void promptLongerThanTheContext() {
        RemoteChatClient c({QUrl(base_), kKey}, options_);
        const QString longText = QStringLiteral("The river runs past the old mill and on to the sea. ").repeated(80);
        const Outcome o = run(c, [&] { return c.startChat(QStringLiteral("smollm2"), ask(longText, 16)); });
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QCOMPARE(o.error.kind, RemoteErrorKind::ContextTooLong);
        QCOMPARE(o.error.contextLimit.value_or(-1), 512);
        QVERIFY(o.error.requestedTokens.value_or(0) > 512);
        QVERIFY2(o.error.message.contains(QLatin1String("holds 512 tokens")), qPrintable(o.error.message));
    }

    void cancelMidStreamFreesThePool() {
        RemoteChatClient c({QUrl(base_), kKey}, options_);
        QJsonObject body = ask(QStringLiteral("Tell me a long story about a river."), 400);
        body.insert(QStringLiteral("ignore_eos"), true);
        const Outcome o = run(c, [&] { return c.startChat(QStringLiteral("smollm2"), body); }, true);
        QCOMPARE(o.terminals, QStringList{QStringLiteral("cancelled")});
        QVERIFY(!o.content.isEmpty());
        // The server notices the closed connection and ends the request.
        QTRY_COMPARE_WITH_TIMEOUT(getJson(base_ + QStringLiteral("/cache/status")).value(QStringLiteral("running")).toInt(-1), 0, 60000);
        const RemotePoolStatus s = poolStatusFromWeir(getJson(base_ + QStringLiteral("/cache/status")), getJson(base_ + QStringLiteral("/stats")));
        QCOMPARE(s.source, RemoteSource::Weir);
        QCOMPARE(s.running.value_or(-1), 0);
        QCOMPARE(s.waiting.value_or(-1), 0);
        QVERIFY(s.kvCapacityTokens.value_or(0) > 0);
        QVERIFY(s.kvUsage.has_value());
        QVERIFY(s.prefixHitRate.has_value());     // /v1/stats has prompt tokens by now
        QVERIFY(s.tokensPerSecond.has_value());
    }

    void serverKilledMidReplyKeepsThePartial() {
        QProcess second;
        QString why;
        const QString base = startServer(second, &why);
        QVERIFY2(!base.isEmpty(), qPrintable(why));
        RemoteChatClient c({QUrl(base), kKey}, options_);
        QJsonObject body = ask(QStringLiteral("Tell me a long story about a river."), 400);
        body.insert(QStringLiteral("ignore_eos"), true);
        Outcome o;
        quint64 id = 0;
        connect(&c, &RemoteChatClient::contentDelta, &c, [&](quint64 i, const QString& t) {
            if (i != id) return;
            o.content += t;
            if (second.state() == QProcess::Running) second.kill();   // the server dies mid-reply
        });
        connect(&c, &RemoteChatClient::finished, &c, [&](quint64 i) { if (i == id) o.terminals << QStringLiteral("finished"); });
        connect(&c, &RemoteChatClient::failed, &c, [&](quint64 i, const RemoteError& e) {
            if (i == id) o.terminals << QStringLiteral("failed"), o.error = e;
        });
        id = c.startChat(QStringLiteral("smollm2"), body);
        QTRY_VERIFY_WITH_TIMEOUT(!o.terminals.isEmpty(), 60000);
        second.waitForFinished(30000);
        QCOMPARE(o.terminals, QStringList{QStringLiteral("failed")});
        QVERIFY(!o.content.isEmpty());
        QCOMPARE(o.error.kind, RemoteErrorKind::StreamCut);
        QVERIFY2(o.error.message.contains(QLatin1String("the text so far is kept")), qPrintable(o.error.message));
    }

    void pollerFindsWeir() {
        RemotePoolPoller p({QUrl(base_), kKey}, options_);
        QSignalSpy spy(&p, &RemotePoolPoller::statusRead);
        p.pollOnce();
        QVERIFY(spy.wait(60000));
        const RemotePoolStatus s = spy.first().first().value<RemotePoolStatus>();
        QCOMPARE(s.source, RemoteSource::Weir);
        QVERIFY(s.kvCapacityTokens.value_or(0) > 0);
        QCOMPARE(s.running.value_or(-1), 0);
        QCOMPARE(s.maxRunning.value_or(-1), 4);  // --max-running-requests' default
    }
};

QTEST_GUILESS_MAIN(RemoteWeirServeTest)
#include "remote_weir_serve_test.moc"
