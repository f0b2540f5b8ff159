#pragma once
// A client of one MCP server, whatever carries its JSON-RPC 2.0 messages
// (McpStdioClient: a child process; McpHttpClient: streamable HTTP). start()
// runs initialize -> notifications/initialized -> tools/list and then the
// client is Ready with tools(); callTool() sends tools/call and answers
// through the callback, exactly once, on this object's thread. Nothing here
// blocks: a transport delivers messages as they arrive.
// Messages cross the transports as text as well as parsed: a QJsonObject
// sorts its keys, and a tool's schema must reach the model, and its call's
// arguments the server, in the order they were written.
#include <QByteArrayView>
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

    // `argumentsText`: the text `arguments` was read from (the model's), whose
    // key order the server gets; empty: QJsonObject's order.
    void callTool(const QString& name, const QJsonObject& arguments, QByteArrayView argumentsText, Callback done,
                  int timeoutMs = 60000);

signals:
    void stateChanged();
    void logChanged();

protected:
    // The transport: open it (false with fail() called when it cannot), send
    // one message (`text` is what goes out, `message` the same parsed, for the
    // transport's own choices), close it.
    virtual bool openTransport(const QString& path) = 0;
    virtual void sendMessage(const QJsonObject& message, const QByteArray& text) = 0;
    virtual void closeTransport() = 0;
    // What the transport received (one message, and the text it was read
    // from), and what it has to say for the log view.
    void onMessage(const QJsonObject& message, QByteArrayView text);
    void appendLog(const QByteArray& text);
    // Ends every call in flight with `why`; the client is Failed.
    void fail(const QString& why);
    State state_ = State::Stopped;

private:
    // A reply, and the text it was read from (empty for one made here: a timeout, a stop).
    using ReplyHandler = std::function<void(const QJsonObject& reply, QByteArrayView text)>;
    // `paramsText`: the text whose key order `params` goes out in (empty: QJsonObject's).
    qint64 request(const QString& method, const QJsonObject& params, ReplyHandler onReply, QByteArrayView paramsText = {});
    void send(const QJsonObject& message, QByteArrayView paramsText = {});
    void onToolsListed(const QJsonObject& list, QByteArrayView text);
    void setState(State s);

    McpServerConfig config_;
    QString error_;
    QByteArray log_;
    QList<McpToolInfo> tools_;
    qint64 nextId_ = 1;
    QHash<qint64, ReplyHandler> pending_;  // by JSON-RPC id
    QHash<qint64, QTimer*> deadlines_;
};

} // namespace weir::desktop
