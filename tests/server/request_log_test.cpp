// The endpoint's access log: every answered request writes one line in the
// weir.server category with method, path, status, completion tokens and
// milliseconds, written when the answer is complete, streamed or whole; a
// client that leaves before its answer shows 499.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTemporaryDir>

#include "app/server/api_server.h"
#include "app/server/request_log.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "tests/server/http_test_client.h"
#include "tests/server/raw_http_client.h"
#include "weir/engine.h"

using namespace weir::test::http;

namespace {

// Lines of the weir.server category, from whichever thread logs them.
QMutex linesMutex;
QStringList serverLines;
QtMessageHandler previous = nullptr;

void capture(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (context.category && QByteArray(context.category) == "weir.server") {
        QMutexLocker lock(&linesMutex);
        serverLines << message;
    }
    if (previous) previous(type, context, message);
}

QStringList linesMatching(const QString& pattern) {
    QMutexLocker lock(&linesMutex);
    return serverLines.filter(QRegularExpression(pattern));
}

QByteArray exactTokensBody(int maxTokens, bool stream) {
    QJsonObject o = QJsonDocument::fromJson(chatBody(maxTokens, stream)).object();
    o.insert(QStringLiteral("ignore_eos"), true);  // exactly maxTokens tokens
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

} // namespace

class RequestLogTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny-gemma3.gguf").toStdString();
        weir::test::writeTinyGemma3(model_);
        previous = qInstallMessageHandler(capture);
    }
    void cleanupTestCase() { qInstallMessageHandler(previous); }
    void init() {
        QMutexLocker lock(&linesMutex);
        serverLines.clear();
    }

    void lineFormat() {
        weir::server::AnsweredRequest r{QByteArrayLiteral("POST"), QStringLiteral("/v1/completions"), 200, 16, 41.26};
        QCOMPARE(weir::server::requestLogLine(r), QStringLiteral("POST /v1/completions 200 16 tokens 41.3 ms"));
        QCOMPARE(weir::server::requestLogLine({}), QStringLiteral("- - 0 0 tokens 0.0 ms"));
    }

    void oneLinePerAnsweredRequest() {
        weir::EngineOptions eo;
        eo.modelPath = model_;
        eo.threads = 2;
        eo.maxContext = 2048;
        weir::Engine engine(eo);
        weir::server::ServerOptions so;
        so.port = 0;
        so.modelId = QStringLiteral("tiny");
        weir::server::ApiServer server(engine, so);
        QString error, warning;
        QVERIFY2(server.start(&error, &warning), qPrintable(error));
        const QString base = server.url();
        const QString root = base.chopped(3);  // without "/v1"

        QNetworkAccessManager nam;
        QCOMPARE(send(nam, root + "/health", "GET").status, 200);
        QCOMPARE(send(nam, base + "/chat/completions", "POST", exactTokensBody(5, false)).status, 200);
        QCOMPARE(send(nam, base + "/chat/completions", "POST", exactTokensBody(3, true)).status, 200);
        QCOMPARE(send(nam, base + "/no-such-route", "GET").status, 404);

        // Logged on the server's thread once each answer is complete.
        QTRY_COMPARE(linesMatching(QStringLiteral("^GET /health 200 0 tokens \\d+\\.\\d ms$")).size(), 1);
        QTRY_COMPARE(linesMatching(QStringLiteral("^POST /v1/chat/completions 200 5 tokens \\d+\\.\\d ms$")).size(), 1);
        QTRY_COMPARE(linesMatching(QStringLiteral("^POST /v1/chat/completions 200 3 tokens \\d+\\.\\d ms$")).size(), 1);
        QTRY_COMPARE(linesMatching(QStringLiteral("^GET /v1/no-such-route 404 0 tokens")).size(), 1);

        // A client that hangs up mid-stream: logged at once, as 499.
        QNetworkRequest req{QUrl(base + "/chat/completions")};
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        QNetworkReply* r = nam.post(req, exactTokensBody(1500, true));
        QEventLoop loop;
        connect(r, &QNetworkReply::readyRead, &loop, &QEventLoop::quit);
        connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        QVERIFY(!r->isFinished());
        r->abort();
        r->deleteLater();
        QTRY_COMPARE(linesMatching(QStringLiteral("^POST /v1/chat/completions 499 ")).size(), 1);
        QCOMPARE(linesMatching(QStringLiteral(".")).size(), 5);
        server.stop();
    }
};

QTEST_GUILESS_MAIN(RequestLogTest)
#include "request_log_test.moc"
