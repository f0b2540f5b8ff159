#pragma once
// A client of one MCP server, whatever carries its JSON-RPC 2.0 messages
// (McpStdioClient: a child process; McpHttpClient: streamable HTTP). start()
// runs initialize -> notifications/initialized -> tools/list and then the
// client is Ready with tools(); callTool() sends tools/call and answers
// through the callback, exactly once, on this object's thread. Nothing here
// blocks: a transport delivers messages as they arrive.
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QTimer>
#include <functional>

#include "tools/Tool.h"
#include "tools/mcp/McpTypes.h"

namespace weir::desktop {

class McpClient : public QObject {
    Q_OBJECT
public:
    enum class State { Stopped, Starting, Ready, Failed };
    using Callback = std::function<void(const ToolResult&)>;

    explicit McpClient(McpServerConfig config, QObject* parent = nullptr);
    ~McpClient() override;

    // `path`: the PATH a stdio server starts with (the user's login PATH).
    void start(const QString& path);
    void stop();

    State state() const { return state_; }
    QString stateText() const;  // "ready, 3 tools", "failed: ..." for the UI
    QString error() const { return error_; }
    const QList<McpToolInfo>& tools() const { return tools_; }
    QString log() const { return QString::fromUtf8(log_); }
    const McpServerConfig& config() const { return config_; }

    void callTool(const QString& name, const QJsonObject& arguments, Callback done, int timeoutMs = 60000);

signals:
    void stateChanged();
    void logChanged();

protected:
    // The transport: open it (false with fail() called when it cannot), send
    // one message, close it.
    virtual bool openTransport(const QString& path) = 0;
    virtual void sendMessage(const QJsonObject& message) = 0;
    virtual void closeTransport() = 0;
    // What the transport received, and what it has to say for the log view.
    void onMessage(const QJsonObject& message);
    void appendLog(const QByteArray& text);
    // Ends every call in flight with `why`; the client is Failed.
    void fail(const QString& why);
    State state_ = State::Stopped;

private:
    qint64 request(const QString& method, const QJsonObject& params, std::function<void(const QJsonObject&)> onReply);
    void setState(State s);

    McpServerConfig config_;
    QString error_;
    QByteArray log_;
    QList<McpToolInfo> tools_;
    qint64 nextId_ = 1;
    QHash<qint64, std::function<void(const QJsonObject&)>> pending_;  // by JSON-RPC id
    QHash<qint64, QTimer*> deadlines_;
};

} // namespace weir::desktop
