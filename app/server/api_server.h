#pragma once
// Weir's OpenAI-compatible HTTP endpoint: serves one weir::Engine, shared
// with whatever else uses it (the app's conversations run alongside).
//
//   GET  /health                  {"status": "ok"} (no key needed)
//   GET  /v1/models               the one model
//   POST /v1/chat/completions     chat, streaming (SSE), tools
//   POST /v1/completions          plain text completion
//   GET  /v1/cache/status         Engine::cacheStatus() as JSON
//   POST /v1/cache/clear          Engine::clearPrefixCache()
//   GET  /v1/stats                throughput, latency, pools, queue
//
// The server only translates: JSON in, GenerateRequest to the engine, events
// back out as JSON or server-sent events. Engine events arrive on the engine
// thread and are passed to this object's thread with queued invocations; the
// engine thread never waits on the server. A client that disconnects has its
// request cancelled at once (its pages go back to the pools).
//
// Listens on 127.0.0.1:8719 unless told otherwise; another interface is only
// used when ServerOptions::host names it, and start() then reports a warning.
#include <QObject>
#include <QString>
#include <memory>

#include <QJsonObject>

namespace weir {
class Engine;
}

namespace weir::server {

inline constexpr quint16 kDefaultPort = 8719;

struct ServerOptions {
    QString host = QStringLiteral("127.0.0.1");  // "0.0.0.0" / "::" / an address: every or one interface
    quint16 port = kDefaultPort;                  // 0: any free port (see ApiServer::port())
    QString apiKey;                               // non-empty: every /v1 request needs "Authorization: Bearer KEY"
    qint64 maxBodyBytes = 8 * 1024 * 1024;        // larger bodies get 413
    QString modelId;                              // empty: the model file's name without ".gguf"
    qint64 defaultMaxTokens = 0;                  // chat without max_tokens: 0 = until the context ends
    int retryAfterSeconds = 2;                    // Retry-After of a 503 (queue full)
};

class ApiServer : public QObject {
    Q_OBJECT
public:
    // `engine` must outlive the server.
    explicit ApiServer(Engine& engine, ServerOptions options = {}, QObject* parent = nullptr);
    ~ApiServer() override;

    // Starts listening. False with a message (port in use, bad address).
    // `warning` (optional) receives a note when the address is not loopback.
    bool start(QString* error = nullptr, QString* warning = nullptr);
    // Stops listening and cancels every request in flight.
    void stop();
    bool isListening() const;

    QString url() const;        // base URL for clients, e.g. "http://127.0.0.1:8719/v1"
    quint16 port() const;       // the bound port (useful with port 0)
    QString modelId() const;
    const ServerOptions& options() const;
    int activeRequests() const;

    QJsonObject statsJson() const;        // GET /v1/stats
    QJsonObject cacheStatusJson() const;  // GET /v1/cache/status

    // True for 127.0.0.0/8, ::1 and "localhost".
    static bool isLoopbackHost(const QString& host);

signals:
    void listeningChanged(bool listening);
    // An API request entered the engine; `client` is its label in
    // Engine::cacheStatus().requests (e.g. "api:12"), for the app's session list.
    void sessionStarted(quint64 requestId, const QString& client, const QString& endpoint);
    // It ended: "stop", "length", "tool_calls", "cancelled" or "error".
    void sessionFinished(quint64 requestId, const QString& client, const QString& outcome);

public:
    struct Impl;

private:
    std::unique_ptr<Impl> d_;
};

} // namespace weir::server
