#pragma once
// llama.cpp's own server (`llama-server`, built by
// packaging/setup-llama-server.sh) as a child process, for the tests that run
// Weir's remote client and conversations against it: SmolLM2 135M on a
// loopback port, a small context, two slots, Jinja chat templates (tools),
// /metrics and /slots on. start() returns once /health answers 200.
//
// Where the binary is: $WEIR_LLAMA_SERVER (ctest sets it from the CMake cache
// variable of the same name), else <source>/.llama-server/bin/llama-server.
// Without it (or the model) a test's main() exits with kSkipExitCode, which
// ctest reports as skipped, and says how to get it.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>
#include <cstdio>

namespace weir::test {

constexpr int kSkipExitCode = 77;

inline QString sourceDir() {
    const QString dir = qEnvironmentVariable("WEIR_SOURCE_DIR");
    return dir.isEmpty() ? QStringLiteral(".") : dir;
}

inline QString llamaServerPath() {
    const QString set = qEnvironmentVariable("WEIR_LLAMA_SERVER");
    return set.isEmpty() ? sourceDir() + QStringLiteral("/.llama-server/bin/llama-server") : set;
}

inline QString smolLm2Path() { return sourceDir() + QStringLiteral("/models/smollm2-135m-instruct-q4_1.gguf"); }

// Why these tests cannot run on this machine; empty when they can.
inline QString llamaServerMissing() {
    if (!QFileInfo(llamaServerPath()).isExecutable())
        return QStringLiteral("llama.cpp's server is not built (%1): run packaging/setup-llama-server.sh "
                              "(or point WEIR_LLAMA_SERVER at a llama-server binary)")
            .arg(llamaServerPath());
    if (!QFileInfo::exists(smolLm2Path()))
        return QStringLiteral("%1 is not there: run packaging/setup.sh").arg(smolLm2Path());
    return {};
}

// For main(): prints why and returns kSkipExitCode, or returns 0 when the tests can run.
inline int skipWithoutLlamaServer() {
    const QString why = llamaServerMissing();
    if (why.isEmpty()) return 0;
    std::printf("SKIP: %s\n", qPrintable(why));
    return kSkipExitCode;
}

// A guard against a hung server or a stuck test, never a speed limit.
inline int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 60000 * (scale > 1 ? scale : 1);
}

class LlamaServer {
public:
    struct Options {
        QString apiKey;     // --api-key; none when empty
        quint16 port = 0;   // 0: any free port (the one it bound is read from its log)
        int contextTokens = 2048;
        int parallel = 2;   // -np: slots (requests decoded at once)
        bool unifiedKv = false;   // -kvu: one KV cache of contextTokens shared by the slots
    };

    ~LlamaServer() { stop(); }

    // Starts it and waits until /health answers 200; false with the reason (and its log) in `why`.
    bool start(const Options& options, QString* why) {
        options_ = options;
        log_.clear();
        port_ = 0;
        QStringList args = {QStringLiteral("-m"), smolLm2Path(),
                            QStringLiteral("--host"), QStringLiteral("127.0.0.1"),
                            QStringLiteral("--port"), QString::number(options.port),
                            QStringLiteral("-c"), QString::number(options.contextTokens),
                            QStringLiteral("-np"), QString::number(options.parallel),
                            QStringLiteral("-t"), QStringLiteral("2"),
                            QStringLiteral("--jinja"), QStringLiteral("--metrics"), QStringLiteral("--slots"),
                            // The model's own name, as /v1/models lists it.
                            QStringLiteral("--alias"), QStringLiteral("smollm2")};
        if (!options.apiKey.isEmpty()) args << QStringLiteral("--api-key") << options.apiKey;
        if (options.unifiedKv) args << QStringLiteral("-kvu");
        process_.setProgram(llamaServerPath());
        process_.setArguments(args);
        process_.setProcessChannelMode(QProcess::MergedChannels);
        process_.start();
        if (!process_.waitForStarted(patienceMs())) {
            *why = QStringLiteral("llama-server did not start: %1").arg(process_.errorString());
            return false;
        }
        // "... listening on http://127.0.0.1:PORT"
        static const QRegularExpression listening(QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"));
        QElapsedTimer clock;
        clock.start();
        while (port_ == 0) {
            if (process_.state() != QProcess::Running || clock.elapsed() > patienceMs()) {
                *why = QStringLiteral("llama-server did not start listening:\n%1").arg(log());
                return false;
            }
            process_.waitForReadyRead(200);
            log_ += process_.readAll();
            const QRegularExpressionMatch m = listening.match(QString::fromUtf8(log_));
            if (m.hasMatch()) port_ = quint16(m.captured(1).toUInt());
        }
        // The HTTP side is up before the model is loaded: /health says 503 until it is.
        while (health() != 200) {
            if (process_.state() != QProcess::Running || clock.elapsed() > patienceMs()) {
                *why = QStringLiteral("llama-server did not become healthy:\n%1").arg(log());
                return false;
            }
            QTest::qWait(50);
        }
        return true;
    }

    // The same server again, on the same port (after kill()).
    bool restart(QString* why) {
        Options o = options_;
        o.port = port_;
        return start(o, why);
    }

    // SIGKILL: the server dies at once, in the middle of whatever it does.
    void kill() {
        if (process_.state() == QProcess::NotRunning) return;
        process_.kill();
        process_.waitForFinished(patienceMs());
        log_ += process_.readAll();
    }

    void stop() {
        if (process_.state() == QProcess::NotRunning) return;
        process_.terminate();
        if (!process_.waitForFinished(patienceMs())) kill();
    }

    bool running() const { return process_.state() == QProcess::Running; }
    quint16 port() const { return port_; }
    QString root() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }
    QString baseUrl() const { return root() + QStringLiteral("/v1"); }
    QString log() {
        log_ += process_.readAll();
        return QString::fromUtf8(log_.right(4000));
    }

    // GET {root}{path} with the API key; the status (0: no answer) and the body.
    int get(const QString& path, QByteArray* body = nullptr) const {
        QNetworkAccessManager nam;
        nam.setProxy(QNetworkProxy::NoProxy);
        QNetworkRequest req{QUrl(root() + path)};
        if (!options_.apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + options_.apiKey.toUtf8());
        req.setTransferTimeout(patienceMs());
        QNetworkReply* r = nam.get(req);
        while (!r->isFinished()) QTest::qWait(10);
        const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (body) *body = r->readAll();
        r->deleteLater();
        return status;
    }
    int health() const { return get(QStringLiteral("/health")); }

    // GET /slots: one object per slot (is_processing, n_ctx, the last task's counts and prompt).
    QJsonArray slotList() const {
        QByteArray body;
        if (get(QStringLiteral("/slots"), &body) != 200) return {};
        return QJsonDocument::fromJson(body).array();
    }
    // A sample of GET /metrics (--metrics), e.g. "llamacpp:tokens_predicted_total"; -1 when absent.
    // This server adds a request's tokens to its counters when the request ends.
    double metric(const QString& name) const {
        QByteArray body;
        if (get(QStringLiteral("/metrics"), &body) != 200) return -1;
        for (const QByteArray& line : body.split('\n'))
            if (line.startsWith(name.toUtf8() + ' ')) return line.mid(name.size() + 1).trimmed().toDouble();
        return -1;
    }
    bool anySlotBusy() const {
        for (const QJsonValue& s : slotList())
            if (s[QStringLiteral("is_processing")].toBool()) return true;
        return false;
    }

private:
    Options options_;
    QProcess process_;
    QByteArray log_;
    quint16 port_ = 0;
};

} // namespace weir::test
