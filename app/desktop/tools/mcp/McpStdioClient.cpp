#include "tools/mcp/McpStdioClient.h"

#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QStandardPaths>

namespace weir::desktop {

McpStdioClient::McpStdioClient(McpServerConfig config, QObject* parent) : McpClient(std::move(config), parent) {
    connect(&process_, &QProcess::readyReadStandardOutput, this, &McpStdioClient::onStdout);
    connect(&process_, &QProcess::readyReadStandardError, this, [this] { appendLog(process_.readAllStandardError()); });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) fail(tr("could not start %1: %2").arg(this->config().command, process_.errorString()));
    });
    connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        fail(status == QProcess::CrashExit ? tr("the server crashed") : tr("the server exited with code %1").arg(code));
    });
}

McpStdioClient::~McpStdioClient() {
    process_.disconnect(this);
    closeTransport();
}

bool McpStdioClient::openTransport(const QString& path) {
    buffer_.clear();
    const McpServerConfig& c = config();
    if (c.command.trimmed().isEmpty()) return fail(tr("no command is set")), false;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!path.isEmpty()) env.insert(QStringLiteral("PATH"), path);
    process_.setProcessEnvironment(env);
    // QProcess looks a bare name up in the app's own PATH: look it up in the login PATH.
    QString program = c.command;
    if (!program.contains(u'/')) {
        const QString found = QStandardPaths::findExecutable(program, path.split(u':', Qt::SkipEmptyParts));
        if (found.isEmpty()) return fail(tr("'%1' is not on the login PATH (%2)").arg(program, path)), false;
        program = found;
    }
    process_.start(program, c.arguments);
    return true;
}

void McpStdioClient::sendMessage(const QJsonObject&, const QByteArray& text) {
    if (process_.state() == QProcess::NotRunning && state_ != State::Starting) return;
    process_.write(text + '\n');  // compact JSON text has no newline in it
}

void McpStdioClient::closeTransport() {
    if (process_.state() == QProcess::NotRunning) return;
    process_.closeWriteChannel();
    process_.terminate();
    if (!process_.waitForFinished(1000)) process_.kill();
    process_.waitForFinished(1000);
}

void McpStdioClient::onStdout() {
    buffer_ += process_.readAllStandardOutput();
    qsizetype nl;
    while ((nl = buffer_.indexOf('\n')) >= 0) {
        const QByteArray line = buffer_.left(nl).trimmed();
        buffer_.remove(0, nl + 1);
        if (line.isEmpty()) continue;
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        // Not JSON-RPC (a server printing to stdout by mistake): keep it in the log.
        if (!doc.isObject()) appendLog("[stdout] " + line + '\n');
        else onMessage(doc.object(), line);
    }
}

} // namespace weir::desktop
