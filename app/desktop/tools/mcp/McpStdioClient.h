#pragma once
// A client of one MCP server over stdio: the server is a child process that
// speaks JSON-RPC 2.0, one message per line on stdin/stdout. start() runs
// initialize -> notifications/initialized -> tools/list and then the client is
// Ready with tools(); callTool() sends tools/call and answers through the
// callback. The server's stderr is kept (the last 64 KiB) for the log view.
// Everything runs on the thread the client lives on, without blocking it
// (QProcess signals); a server that dies fails every call in flight.
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QProcess>
#include <QTimer>
#include <functional>

#include "tools/Tool.h"
#include "tools/mcp/McpTypes.h"

namespace weir::desktop {

class McpStdioClient : public QObject {
    Q_OBJECT
public:
    enum class State { Stopped, Starting, Ready, Failed };
    using Callback = std::function<void(const ToolResult&)>;

    explicit McpStdioClient(McpServerConfig config, QObject* parent = nullptr);
    ~McpStdioClient() override;

    // `path` is the PATH the server is started with (the user's login PATH).
    void start(const QString& path);
    void stop();

    State state() const { return state_; }
    QString stateText() const;   // "ready, 3 tools", "failed: ..." for the UI
    QString error() const { return error_; }
    const QList<McpToolInfo>& tools() const { return tools_; }
    QString stderrLog() const { return QString::fromUtf8(stderr_); }
    const McpServerConfig& config() const { return config_; }

    // Calls a tool; `done` runs exactly once, on this object's thread. An
    // answer slower than `timeoutMs` fails the call.
    void callTool(const QString& name, const QJsonObject& arguments, Callback done, int timeoutMs = 60000);

signals:
    void stateChanged();
    void logChanged();

private:
    void send(const QJsonObject& message);
    qint64 request(const QString& method, const QJsonObject& params, std::function<void(const QJsonObject&)> onReply);
    void onStdout();
    void onMessage(const QJsonObject& message);
    void fail(const QString& why);
    void setState(State s);

    McpServerConfig config_;
    QProcess process_;
    State state_ = State::Stopped;
    QString error_;
    QByteArray buffer_, stderr_;
    QList<McpToolInfo> tools_;
    qint64 nextId_ = 1;
    // By JSON-RPC id: what to do with the answer (the full message: result or error).
    QHash<qint64, std::function<void(const QJsonObject&)>> pending_;
    QHash<qint64, QTimer*> deadlines_;
};

} // namespace weir::desktop
