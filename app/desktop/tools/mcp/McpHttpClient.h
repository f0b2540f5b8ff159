#pragma once
// The streamable HTTP transport of McpClient: every message is a POST of
// JSON-RPC to the server's URL, accepting application/json or
// text/event-stream; the answer's messages (a JSON body, or the `data:` of
// each server-sent event) are read when the reply ends. The Mcp-Session-Id
// the server gives at initialize is sent back on every later request, and
// the session is ended with DELETE when the client stops.
#include <QNetworkAccessManager>
#include <QSet>

#include "tools/mcp/McpClient.h"

class QNetworkReply;

namespace weir::desktop {

class McpHttpClient final : public McpClient {
    Q_OBJECT
public:
    explicit McpHttpClient(McpServerConfig config, QObject* parent = nullptr);
    ~McpHttpClient() override;

protected:
    bool openTransport(const QString& path) override;
    void sendMessage(const QJsonObject& message, const QByteArray& text) override;
    void closeTransport() override;

private:
    void onFinished(QNetworkReply* reply, bool expectsAnswer);

    QNetworkAccessManager net_;
    QUrl url_;
    QByteArray sessionId_;
    QSet<QNetworkReply*> inFlight_;
};

} // namespace weir::desktop
