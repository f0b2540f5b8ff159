#pragma once
// Reads a remote engine's pool status, once or on a timer, from whatever the
// server exposes, tried in this order: Weir's GET /v1/cache/status (with
// /v1/stats), a Prometheus GET /metrics (vLLM, SGLang, llama.cpp's server;
// with llama.cpp's GET /slots), Ollama's GET /api/ps. The kind found is
// remembered, so later rounds ask only for what that server has; rates come
// from the difference to the previous /metrics reading. A server that
// exposes none of them gives a status with source Unknown and a note that
// says so; an unreachable one, a note with the reason.
#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QObject>
#include <QTimer>
#include <functional>
#include <optional>

#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_pool_status.h"

namespace weir::remote {

class RemotePoolPoller : public QObject {
    Q_OBJECT
public:
    // Uses the options' connectTimeoutMs per request and their proxy choice.
    explicit RemotePoolPoller(const RemoteEndpoint& endpoint, const RemoteClientOptions& options = {},
                              QObject* parent = nullptr);

    // One round now (ignored while one runs); ends in statusRead.
    void pollOnce();
    void start(int intervalMs);
    void stop();

    // The server's root: the base URL without its trailing /v1.
    QUrl serverRoot() const { return root_; }

signals:
    void statusRead(const weir::remote::RemotePoolStatus& status);

private:
    enum class Kind { Unknown, Weir, Metrics, Ollama };
    using Done = std::function<void(int status, const QByteArray& body, const QString& networkError)>;
    void get(const QString& path, Done done);
    void tryWeir();
    void tryMetrics();
    void tryOllama();
    void finish(RemotePoolStatus s);

    RemoteEndpoint endpoint_;
    QUrl root_;
    int timeoutMs_;
    QNetworkAccessManager nam_;
    QTimer timer_;
    QElapsedTimer clock_;
    bool busy_ = false;
    Kind kind_ = Kind::Unknown;
    std::optional<MetricsScrape> previous_;
};

} // namespace weir::remote

Q_DECLARE_METATYPE(weir::remote::RemotePoolStatus)
