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
// back out as JSON or server-sent events. It runs on a thread of its own
// (Weir's HTTP/1.1 layer, http_*.h), whatever thread creates it: the app's
// engine host thread and its Stop never wait behind a client. Requests are
// parsed, rendered and tokenized on a small worker pool, so /health answers at
// once while a large prompt is being read. Engine events reach the server's
// thread in batches, one wake-up per batch; the engine thread never waits on
// the server. A client that disconnects has its request cancelled at once
// (its pages go back to the pools).
//
// Listens on 127.0.0.1:8719 unless told otherwise; another interface is only
// used when ServerOptions::host names it, and start() then reports a warning.
// Without an API key it refuses what a web page could send it (see
// cross_site_guard.h).
#include <QObject>
#include <QString>
#include <memory>

#include <QJsonObject>

#include "app/server/server_options.h"

namespace weir {
class Engine;
}

namespace weir::server {

class ApiServer : public QObject {
    Q_OBJECT
public:
    // `engine` must outlive the server.
    explicit ApiServer(Engine& engine, ServerOptions options = {}, QObject* parent = nullptr);
    ~ApiServer() override;

    // Starts listening. False with a message (port in use, bad address).
    // `warning` (optional) receives a note when the address is not loopback.
    bool start(QString* error = nullptr, QString* warning = nullptr);
    // Stops accepting connections and ends every request in flight: a stream
    // that has begun gets an error event, "data: [DONE]" and its last chunk;
    // anything else a 503 with Retry-After. Returns once the answers are
    // written (or a couple of seconds passed) and the connections closed;
    // every sessionFinished has been emitted by then.
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

    // Signals are emitted on the server's own thread; connect with a
    // receiver on your thread to have them queued to it.
signals:
    void listeningChanged(bool listening);
    // An API request entered the engine; `client` is its label in
    // Engine::cacheStatus().requests (e.g. "api:12"), for the app's session list.
    void sessionStarted(quint64 requestId, const QString& client, const QString& endpoint);
    // It ended: "stop", "length", "tool_calls", "cancelled" or "error".
    void sessionFinished(quint64 requestId, const QString& client, const QString& outcome);

private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

} // namespace weir::server
