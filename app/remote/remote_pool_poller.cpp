#include "app/remote/remote_pool_poller.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkProxy>
#include <QNetworkReply>

#include "app/remote/environment_proxy.h"

namespace weir::remote {

RemotePoolPoller::RemotePoolPoller(const RemoteEndpoint& endpoint, const RemoteClientOptions& options, QObject* parent)
    : QObject(parent), endpoint_(endpoint), timeoutMs_(options.connectTimeoutMs) {
    qRegisterMetaType<weir::remote::RemotePoolStatus>();
    if (options.systemProxy) useEnvironmentProxy(nam_);
    else nam_.setProxy(QNetworkProxy::NoProxy);
    root_ = RemoteChatClient::normalizedBaseUrl(endpoint.baseUrl);
    QString path = root_.path();
    if (path.endsWith(QLatin1String("/v1"))) path.chop(3);
    root_.setPath(path);
    clock_.start();
    connect(&timer_, &QTimer::timeout, this, &RemotePoolPoller::pollOnce);
}

void RemotePoolPoller::start(int intervalMs) {
    timer_.start(intervalMs);
    pollOnce();
}

void RemotePoolPoller::stop() { timer_.stop(); }

void RemotePoolPoller::get(const QString& path, Done done) {
    QUrl u = root_;
    u.setPath(root_.path() + path);
    QNetworkRequest req(u);
    if (!endpoint_.apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + endpoint_.apiKey.toUtf8());
    req.setTransferTimeout(timeoutMs_);
    QNetworkReply* r = nam_.get(req);
    connect(r, &QNetworkReply::finished, this, [r, done = std::move(done)] {
        r->deleteLater();
        const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        done(status, r->readAll(), status == 0 ? r->errorString() : QString());
    });
}

void RemotePoolPoller::pollOnce() {
    if (busy_) return;
    busy_ = true;
    switch (kind_) {
    case Kind::Metrics: return tryMetrics();
    case Kind::Ollama: return tryOllama();
    default: return tryWeir();
    }
}

void RemotePoolPoller::tryWeir() {
    get(QStringLiteral("/v1/cache/status"), [this](int status, const QByteArray& body, const QString& netError) {
        if (status == 0) {
            RemotePoolStatus s;
            s.notes << QStringLiteral("cannot read the server's pools: %1").arg(netError);
            kind_ = Kind::Unknown;
            return finish(s);
        }
        const QJsonObject cache = QJsonDocument::fromJson(body).object();
        if (status != 200 || !cache.value(QStringLiteral("full")).isObject()) {
            kind_ = Kind::Unknown;
            return tryMetrics();
        }
        kind_ = Kind::Weir;
        get(QStringLiteral("/v1/stats"), [this, cache](int st, const QByteArray& b, const QString&) {
            finish(poolStatusFromWeir(cache, st == 200 ? QJsonDocument::fromJson(b).object() : QJsonObject()));
        });
    });
}

void RemotePoolPoller::tryMetrics() {
    get(QStringLiteral("/metrics"), [this](int status, const QByteArray& body, const QString& netError) {
        if (status == 0 && kind_ == Kind::Metrics) {
            RemotePoolStatus s;
            s.notes << QStringLiteral("cannot read the server's /metrics: %1").arg(netError);
            return finish(s);
        }
        if (status != 200) {
            if (kind_ == Kind::Metrics) kind_ = Kind::Unknown;   // it had them; look again next round
            return tryOllama();
        }
        const PromParseResult parsed = parsePrometheusText(body);
        if (!parsed.ok) {
            RemotePoolStatus s;
            s.notes << QStringLiteral("the server's /metrics page could not be read: %1").arg(parsed.error);
            return finish(s);
        }
        MetricsScrape now{parsed.text, clock_.elapsed()};
        RemotePoolStatus s = poolStatusFromMetrics(now, previous_ ? &*previous_ : nullptr);
        if (s.source == RemoteSource::Unknown) return tryOllama();
        kind_ = Kind::Metrics;
        previous_ = std::move(now);
        if (s.source != RemoteSource::LlamaCpp) return finish(s);
        get(QStringLiteral("/slots"), [this, s](int st, const QByteArray& b, const QString&) mutable {
            const QJsonDocument doc = QJsonDocument::fromJson(b);
            if (st == 200 && doc.isArray()) addLlamaCppSlots(s, doc.array());
            finish(s);
        });
    });
}

void RemotePoolPoller::tryOllama() {
    get(QStringLiteral("/api/ps"), [this](int status, const QByteArray& body, const QString&) {
        const QJsonObject ps = QJsonDocument::fromJson(body).object();
        if (status == 200 && ps.value(QStringLiteral("models")).isArray()) {
            kind_ = Kind::Ollama;
            return finish(poolStatusFromOllama(ps));
        }
        kind_ = Kind::Unknown;
        RemotePoolStatus s;
        s.notes << QStringLiteral("this server exposes none of /v1/cache/status (Weir), /metrics (vLLM, SGLang, llama.cpp "
                                  "server with --metrics) or /api/ps (Ollama): no pool gauges to show");
        finish(s);
    });
}

void RemotePoolPoller::finish(RemotePoolStatus s) {
    busy_ = false;
    emit statusRead(s);
}

} // namespace weir::remote

