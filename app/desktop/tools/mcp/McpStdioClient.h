#pragma once
// The stdio transport of McpClient: the server is a child process speaking
// JSON-RPC, one message per line on stdin/stdout, started with the login
// PATH (the command is looked up there). Its stderr goes to the log view;
// a server that dies fails every call in flight.
#include <QProcess>

#include "tools/mcp/McpClient.h"

namespace weir::desktop {

class McpStdioClient final : public McpClient {
    Q_OBJECT
public:
    explicit McpStdioClient(McpServerConfig config, QObject* parent = nullptr);
    ~McpStdioClient() override;

protected:
    bool openTransport(const QString& path) override;
    void sendMessage(const QJsonObject& message, const QByteArray& text) override;
    void closeTransport() override;

private:
    void onStdout();
    QProcess process_;
    QByteArray buffer_;
};

} // namespace weir::desktop
