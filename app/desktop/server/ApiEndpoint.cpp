#include "server/ApiEndpoint.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QHostAddress>
#include <QRegularExpression>

#include "app/server/cors_origin.h"

#include "engine_host/EngineHost.h"
#include "settings/AppSettings.h"

namespace weir::desktop {
namespace {
const QString kLoopback = QStringLiteral("127.0.0.1");
const QString kEveryInterface = QStringLiteral("0.0.0.0");
} // namespace

ApiEndpoint::ApiEndpoint(AppSettings* settings, EngineHost* engine, QObject* parent)
    : QObject(parent), settings_(settings), engine_(engine), config_(settings->endpointConfig()) {
    connect(engine_, &EngineHost::endpointStateChanged, this, &ApiEndpoint::stateChanged);
    if (config_.enabled) engine_->setEndpoint(config_);  // starts once a model is loaded
}

void ApiEndpoint::apply() {
    settings_->setEndpointConfig(config_);
    engine_->setEndpoint(config_);
    emit configChanged();
}

void ApiEndpoint::setEnabled(bool on) {
    if (on == config_.enabled) return;
    config_.enabled = on;
    apply();
}

void ApiEndpoint::setPort(int port) {
    port = std::clamp(port, 0, 65535);
    if (port == config_.port) return;
    config_.port = port;
    apply();
}

void ApiEndpoint::setApiKey(const QString& key) {
    if (key == config_.apiKey) return;
    config_.apiKey = key;
    apply();
}

bool ApiEndpoint::allowNetwork() const {
    QHostAddress a;
    return a.setAddress(config_.host) ? !a.isLoopback() : config_.host != QLatin1String("localhost");
}

void ApiEndpoint::setAllowNetwork(bool allow) {
    if (allow == allowNetwork()) return;
    config_.host = allow ? kEveryInterface : kLoopback;
    apply();
}

void ApiEndpoint::setCorsOrigins(const QString& text) {
    QStringList origins;
    for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
        if (auto why = server::invalidCorsOrigin(part)) {
            // Kept as it was: a typo must not open or close the endpoint to pages.
            corsError_ = *why;
            emit configChanged();
            return;
        }
        origins.append(server::normalizedCorsOrigin(part));
    }
    origins.removeDuplicates();
    corsError_.clear();
    if (origins == config_.corsOrigins) {
        emit configChanged();  // the error, if any, is gone
        return;
    }
    config_.corsOrigins = origins;
    apply();
}

bool ApiEndpoint::available() const { return engine_->endpointState().available; }
bool ApiEndpoint::listening() const { return engine_->endpointState().listening; }
QString ApiEndpoint::url() const { return engine_->endpointState().url; }
QString ApiEndpoint::error() const { return config_.enabled ? engine_->endpointState().error : QString(); }
bool ApiEndpoint::waitingForModel() const { return config_.enabled && engine_->endpointState().waitingForModel; }
QString ApiEndpoint::warning() const { return engine_->endpointState().warning; }
int ApiEndpoint::activeSessions() const { return engine_->endpointState().activeSessions; }
qint64 ApiEndpoint::sessionsServed() const { return qint64(engine_->endpointState().sessionsServed); }

void ApiEndpoint::copyUrl() const {
    if (auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        app->clipboard()->setText(url());
}

} // namespace weir::desktop
