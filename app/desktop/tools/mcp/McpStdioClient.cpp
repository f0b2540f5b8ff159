#include "tools/mcp/McpStdioClient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QStandardPaths>

namespace weir::desktop {
namespace {

constexpr qsizetype kStderrKept = 64 * 1024;
constexpr int kStartTimeoutMs = 60000;  // npx may download the server first

// The text of a tools/call result: its text content blocks, one per line.
QString resultText(const QJsonObject& result) {
    QStringList parts;
    for (const QJsonValue& c : result.value(u"content").toArray()) {
        const QJsonObject block = c.toObject();
        if (block.value(u"type").toString() == u"text") parts << block.value(u"text").toString();
        else parts << QStringLiteral("[%1 content]").arg(block.value(u"type").toString());
    }
    if (parts.isEmpty() && result.contains(u"structuredContent"))
        parts << QString::fromUtf8(QJsonDocument(result.value(u"structuredContent").toObject()).toJson(QJsonDocument::Compact));
    return parts.join(u'\n');
}

} // namespace

McpStdioClient::McpStdioClient(McpServerConfig config, QObject* parent)
    : QObject(parent), config_(std::move(config)) {
    connect(&process_, &QProcess::readyReadStandardOutput, this, &McpStdioClient::onStdout);
    connect(&process_, &QProcess::readyReadStandardError, this, [this] {
        stderr_ += process_.readAllStandardError();
        if (stderr_.size() > kStderrKept) stderr_ = stderr_.right(kStderrKept);
        emit logChanged();
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            fail(tr("could not start %1: %2").arg(config_.command, process_.errorString()));
    });
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        if (state_ == State::Stopped) return;
        fail(status == QProcess::CrashExit ? tr("the server crashed") : tr("the server exited with code %1").arg(code));
    });
}

McpStdioClient::~McpStdioClient() { stop(); }

QString McpStdioClient::stateText() const {
    switch (state_) {
    case State::Stopped: return tr("off");
    case State::Starting: return tr("starting");
    case State::Ready: return tools_.size() == 1 ? tr("ready, 1 tool") : tr("ready, %1 tools").arg(tools_.size());
    case State::Failed: return tr("failed: %1").arg(error_);
    }
    return {};
}

void McpStdioClient::setState(State s) {
    if (s == state_) return;
    state_ = s;
    emit stateChanged();
}

void McpStdioClient::start(const QString& path) {
    if (state_ == State::Starting || state_ == State::Ready) return;
    error_.clear();
    tools_.clear();
    buffer_.clear();
    if (config_.command.trimmed().isEmpty()) return fail(tr("no command is set"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!path.isEmpty()) env.insert(QStringLiteral("PATH"), path);
    process_.setProcessEnvironment(env);
    // QProcess looks the program up in the parent's PATH; look it up in the login PATH.
    QString program = config_.command;
    if (!program.contains(u'/')) {
        const QString found = QStandardPaths::findExecutable(program, path.split(u':', Qt::SkipEmptyParts));
        if (found.isEmpty()) return fail(tr("'%1' is not on the login PATH (%2)").arg(program, path));
        program = found;
    }
    setState(State::Starting);
    process_.start(program, config_.arguments);
    QJsonObject params{{"protocolVersion", "2025-06-18"},
                       {"capabilities", QJsonObject{}},
                       {"clientInfo", QJsonObject{{"name", "weir"}, {"version", WEIR_VERSION}}}};
    request(QStringLiteral("initialize"), params, [this](const QJsonObject& reply) {
        if (reply.contains(u"error")) return fail(tr("initialize refused: %1").arg(reply.value(u"error").toObject().value(u"message").toString()));
        send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
        request(QStringLiteral("tools/list"), {}, [this](const QJsonObject& list) {
            if (list.contains(u"error")) return fail(tr("tools/list refused: %1").arg(list.value(u"error").toObject().value(u"message").toString()));
            tools_.clear();
            for (const QJsonValue& t : list.value(u"result").toObject().value(u"tools").toArray()) {
                const QJsonObject o = t.toObject();
                tools_.append({o.value(u"name").toString(), o.value(u"description").toString(), o.value(u"inputSchema").toObject()});
            }
            setState(State::Ready);
        });
    });
}

void McpStdioClient::stop() {
    const bool wasRunning = process_.state() != QProcess::NotRunning;
    setState(State::Stopped);
    if (wasRunning) {
        process_.closeWriteChannel();
        process_.terminate();
        if (!process_.waitForFinished(1000)) process_.kill();
        process_.waitForFinished(1000);
    }
    auto pending = std::exchange(pending_, {});
    qDeleteAll(std::exchange(deadlines_, {}));
    for (auto& done : pending)
        done({{"error", QJsonObject{{"message", tr("the server was stopped")}}}});
}

void McpStdioClient::fail(const QString& why) {
    error_ = why;
    if (process_.state() != QProcess::NotRunning) process_.kill();
    auto pending = std::exchange(pending_, {});
    qDeleteAll(std::exchange(deadlines_, {}));
    setState(State::Failed);
    for (auto& done : pending) done({{"error", QJsonObject{{"message", why}}}});
}

void McpStdioClient::send(const QJsonObject& message) {
    process_.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
}

qint64 McpStdioClient::request(const QString& method, const QJsonObject& params,
                               std::function<void(const QJsonObject&)> onReply) {
    const qint64 id = nextId_++;
    pending_.insert(id, std::move(onReply));
    auto* timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, id, method] {
        deadlines_.take(id)->deleteLater();
        auto done = pending_.take(id);
        if (!done) return;
        if (state_ == State::Starting) return fail(tr("no answer to %1 in time").arg(method));
        done({{"error", QJsonObject{{"message", tr("no answer to %1 in time").arg(method)}}}});
    });
    timer->start(method == u"tools/call" ? 60000 : kStartTimeoutMs);
    deadlines_.insert(id, timer);
    QJsonObject message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.isEmpty()) message.insert(QStringLiteral("params"), params);
    send(message);
    return id;
}

void McpStdioClient::callTool(const QString& name, const QJsonObject& arguments, Callback done, int timeoutMs) {
    if (state_ != State::Ready) {
        done({false, tr("the MCP server %1 is not running (%2)").arg(config_.name, stateText())});
        return;
    }
    const qint64 id = request(QStringLiteral("tools/call"), {{"name", name}, {"arguments", arguments}},
                              [done](const QJsonObject& reply) {
                                  if (reply.contains(u"error")) {
                                      done({false, reply.value(u"error").toObject().value(u"message").toString()});
                                      return;
                                  }
                                  const QJsonObject result = reply.value(u"result").toObject();
                                  done({!result.value(u"isError").toBool(), resultText(result)});
                              });
    if (QTimer* t = deadlines_.value(id)) t->start(timeoutMs);
}

void McpStdioClient::onStdout() {
    buffer_ += process_.readAllStandardOutput();
    qsizetype nl;
    while ((nl = buffer_.indexOf('\n')) >= 0) {
        const QByteArray line = buffer_.left(nl).trimmed();
        buffer_.remove(0, nl + 1);
        if (line.isEmpty()) continue;
        QJsonParseError e;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &e);
        if (!doc.isObject()) {
            // Not JSON-RPC (a server printing to stdout by mistake): keep it in the log.
            stderr_ += "[stdout] " + line + '\n';
            emit logChanged();
            continue;
        }
        onMessage(doc.object());
    }
}

void McpStdioClient::onMessage(const QJsonObject& message) {
    if (message.contains(u"method")) {
        // A request from the server (ping, roots/list...): answer what we can.
        if (!message.contains(u"id")) return;  // a notification
        const QString method = message.value(u"method").toString();
        if (method == u"ping") send({{"jsonrpc", "2.0"}, {"id", message.value(u"id")}, {"result", QJsonObject{}}});
        else
            send({{"jsonrpc", "2.0"}, {"id", message.value(u"id")},
                  {"error", QJsonObject{{"code", -32601}, {"message", "method not supported by Weir"}}}});
        return;
    }
    const qint64 id = message.value(u"id").toInteger(-1);
    if (QTimer* t = deadlines_.take(id)) t->deleteLater();
    auto done = pending_.take(id);
    if (done) done(message);
}

} // namespace weir::desktop
