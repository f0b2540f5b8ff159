#include "tools/ShellTool.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QJsonArray>
#include <QProcess>

namespace weir::desktop {

QString ShellTool::description() const {
    return QStringLiteral("Runs a shell command in the workspace folder and returns its output and exit code. "
                          "The user approves every run.");
}

QByteArray ShellTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"command": {"type": "string", "description": "a /bin/sh command line"}},
               "required": ["command"],
               "additionalProperties": false})";
}

ToolResult ShellTool::run(const QJsonObject& arguments) const {
    const QString command = arguments.value(u"command").toString();
    if (command.trimmed().isEmpty()) return {false, QStringLiteral("the command is empty")};
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    const QString root = folder_ ? folder_->root() : QString();
    p.setWorkingDirectory(root.isEmpty() ? QDir::homePath() : root);
    p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), command});
    if (!p.waitForStarted(5000)) return {false, QStringLiteral("the shell did not start: %1").arg(p.errorString())};
    QByteArray out;
    bool capped = false;
    QDeadlineTimer deadline(timeoutMs_);
    while (p.state() != QProcess::NotRunning && !deadline.hasExpired()) {
        p.waitForReadyRead(int(std::min<qint64>(200, std::max<qint64>(1, deadline.remainingTime()))));
        out += p.readAll();
        if (out.size() > outputLimit_) {
            capped = true;
            break;
        }
    }
    const bool timedOut = p.state() != QProcess::NotRunning && !capped;
    if (p.state() != QProcess::NotRunning) {
        p.kill();
        p.waitForFinished(2000);
    }
    out += p.readAll();
    QString text = QString::fromUtf8(out.left(outputLimit_));
    if (capped || out.size() > outputLimit_) text += QStringLiteral("\n[output cut at %1 bytes; the command was stopped]").arg(outputLimit_);
    if (timedOut) return {false, text + QStringLiteral("\n[timed out after %1 s and was killed]").arg(timeoutMs_ / 1000.0)};
    const int code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return {code == 0, text + QStringLiteral("\n[exit code %1]").arg(code)};
}

} // namespace weir::desktop
