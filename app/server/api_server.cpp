#include "app/server/api_server.h"

#include <future>

#include <QHostAddress>
#include <QThread>

#include "app/server/openai_service.h"
#include "app/server/response_json.h"
#include "weir/engine.h"

namespace weir::server {

// The service lives on `thread`; this object, on its creator's thread, only
// hands it calls. The creator waits on the server's thread for start() and
// stop(), never the other way round.
struct ApiServer::Impl {
    explicit Impl(Engine& e) : engine(e) {}
    Engine& engine;
    QThread thread;
    OpenAiService* service = nullptr;
};

ApiServer::ApiServer(Engine& engine, ServerOptions options, QObject* parent)
    : QObject(parent), d_(std::make_unique<Impl>(engine)) {
    d_->service = new OpenAiService(engine, std::move(options));
    d_->thread.setObjectName(QStringLiteral("weir-http"));
    d_->service->moveToThread(&d_->thread);
    // Emitted from the server's thread: receivers elsewhere get them queued.
    connect(d_->service, &OpenAiService::sessionStarted, this, &ApiServer::sessionStarted, Qt::DirectConnection);
    connect(d_->service, &OpenAiService::sessionFinished, this, &ApiServer::sessionFinished, Qt::DirectConnection);
    connect(&d_->thread, &QThread::finished, d_->service, &QObject::deleteLater);
    d_->thread.start();
}

ApiServer::~ApiServer() {
    stop();
    d_->thread.quit();
    d_->thread.wait();  // the service is deleted as the thread finishes
}

bool ApiServer::start(QString* error, QString* warning) {
    if (isListening()) return true;
    bool ok = false;
    QString e, w;
    // Run on the service's thread and wait: the call (and what it captures)
    // travels through the service's CallInbox, the answer through the promise.
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    d_->service->post([&] {
        ok = d_->service->start(&e, &w);
        done.set_value();
    });
    finished.wait();
    if (error) *error = e;
    if (warning) *warning = w;
    if (ok) emit listeningChanged(true);
    return ok;
}

void ApiServer::stop() {
    const bool was = isListening();
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    d_->service->post([service = d_->service, &done] {
        service->stop();
        done.set_value();
    });
    finished.wait();
    if (was) emit listeningChanged(false);
}

bool ApiServer::isListening() const { return d_->service->isListening(); }
quint16 ApiServer::port() const { return d_->service->port(); }
QString ApiServer::modelId() const { return d_->service->model().id; }
const ServerOptions& ApiServer::options() const { return d_->service->options(); }
int ApiServer::activeRequests() const { return d_->service->activeRequests(); }
QJsonObject ApiServer::statsJson() const { return d_->service->statsJson(); }
QJsonObject ApiServer::cacheStatusJson() const {
    return weir::server::cacheStatusJson(d_->engine.cacheStatus(), d_->engine.options().maxRunningRequests);
}

QString ApiServer::url() const {
    QString host = options().host.trimmed();
    QHostAddress a;
    if (host.isEmpty() || (a.setAddress(host) && (a == QHostAddress::AnyIPv4 || a == QHostAddress::AnyIPv6 ||
                                                   a == QHostAddress::Any)))
        host = QStringLiteral("127.0.0.1");
    else if (a.protocol() == QAbstractSocket::IPv6Protocol)
        host = QLatin1Char('[') + host + QLatin1Char(']');
    const quint16 bound = port();
    return QStringLiteral("http://%1:%2/v1").arg(host).arg(bound ? bound : options().port);
}

bool ApiServer::isLoopbackHost(const QString& host) {
    const QString h = host.trimmed();
    if (h.isEmpty() || h.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0) return true;
    QHostAddress a;
    return a.setAddress(h) && a.isLoopback();
}

} // namespace weir::server
