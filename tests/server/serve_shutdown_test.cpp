// `weir-cli serve` as users run it, in a child process on a tiny synthetic
// Gemma 3, shut down with SIGTERM (and SIGINT) while one stream is running and
// one request waits behind it: the stream ends with an error event, "data:
// [DONE]" and the last chunk; the waiting request gets 503 with Retry-After;
// the process says it stopped and exits 0.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <csignal>

#include "tests/engine/scheduler/tiny_gemma3.h"
#include "tests/server/http_test_client.h"
#include "tests/server/raw_http_client.h"

namespace raw = weir::test::raw;
using weir::test::http::chatBody;
using weir::test::http::obj;

class ServeShutdownTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_;

    // Starts the server; returns its port, or 0.
    quint16 startServer(QProcess& p) {
        p.setProgram(qEnvironmentVariable("WEIR_BIN_DIR") + QStringLiteral("/weir-cli"));
        p.setArguments({QStringLiteral("serve"), QStringLiteral("-m"), model_, QStringLiteral("--port"), QStringLiteral("0"),
                        QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--max-running-requests"),
                        QStringLiteral("1"), QStringLiteral("--prefill-chunk"), QStringLiteral("64"),
                        QStringLiteral("--max-context"), QStringLiteral("8192"), QStringLiteral("--model-id"),
                        QStringLiteral("tiny")});
        p.setProcessChannelMode(QProcess::SeparateChannels);
        p.start();
        if (!p.waitForStarted(30000)) return 0;
        QByteArray out;
        while (!out.contains('\n')) {
            if (!p.waitForReadyRead(60000)) return 0;
            out += p.readAllStandardOutput();
        }
        // "listening on http://127.0.0.1:PORT/v1"
        const QByteArray url = out.left(out.indexOf('\n')).split(' ').last();
        return quint16(url.split(':').last().split('/').first().toUInt());
    }

    int waitingRequests(quint16 port) {
        const raw::Response r = raw::exchange(port, raw::request("GET", "/v1/cache/status"));
        return r.status == 200 ? obj(r.body)["waiting"].toInt() : -1;
    }

    void endsEverythingOn(int signo) {
        QProcess p;
        const quint16 port = startServer(p);
        QVERIFY2(port > 0, p.readAllStandardError().constData());

        QJsonObject long_ = obj(chatBody(8000, true, QStringLiteral("tiny")));
        long_["ignore_eos"] = true;
        QTcpSocket stream;
        QVERIFY(raw::connectTo(stream, port));
        QVERIFY(raw::sendAll(stream, raw::request("POST", "/v1/chat/completions",
                                                  QJsonDocument(long_).toJson(QJsonDocument::Compact))));
        QByteArray streamed;
        QVERIFY(raw::readUntil(stream, streamed, [](const QByteArray& b) { return b.contains("\"content\":\""); }));
        QTcpSocket queued;
        QVERIFY(raw::connectTo(queued, port));
        QVERIFY(raw::sendAll(queued, raw::request("POST", "/v1/chat/completions", chatBody(4, false, "tiny"))));
        QTRY_COMPARE_WITH_TIMEOUT(waitingRequests(port), 1, 30000);

        ::kill(pid_t(p.processId()), signo);

        const raw::Response r = raw::readResponse(stream, streamed);
        QCOMPARE(r.status, 200);
        QVERIFY2(r.complete, "the stream was cut without its last chunk");
        const QByteArrayList data = raw::sseData(r.body);
        QVERIFY(data.size() >= 3);
        QCOMPARE(data.last(), QByteArray("[DONE]"));
        const QJsonObject error = QJsonDocument::fromJson(data[data.size() - 2]).object()["error"].toObject();
        QCOMPARE(error["code"].toString(), QStringLiteral("shutting_down"));

        QByteArray buffer;
        const raw::Response waiting = raw::readResponse(queued, buffer);
        QCOMPARE(waiting.status, 503);
        QVERIFY(waiting.header("retry-after").toInt() >= 1);
        QCOMPARE(obj(waiting.body)["error"].toObject()["code"].toString(), QStringLiteral("shutting_down"));

        QVERIFY(p.waitForFinished(60000));
        const QByteArray log = p.readAllStandardError();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(log.contains("serve: stopped"), log.constData());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath(QStringLiteral("tiny-gemma3.gguf"));
        weir::test::writeTinyGemma3(model_.toStdString());
    }

    void sigtermEndsStreamsAndQueuedRequests() { endsEverythingOn(SIGTERM); }
    void sigintEndsStreamsAndQueuedRequests() { endsEverythingOn(SIGINT); }
};

QTEST_GUILESS_MAIN(ServeShutdownTest)
#include "serve_shutdown_test.moc"
