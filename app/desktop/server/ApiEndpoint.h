#pragma once
// The app's switch for its OpenAI-compatible endpoint (QML: App.endpoint).
// Off by default; the settings persist. Binding anything but loopback takes
// an explicit `allowNetwork`, and the endpoint then reports a warning. The
// server itself is started and stopped by the engine host thread (EngineWorker)
// and serves the same engine as the app's conversations from its own thread;
// this object only holds the wishes and mirrors what the server reports.
#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include "engine_host/EndpointConfig.h"

namespace weir::desktop {

class AppSettings;
class EngineHost;

class ApiEndpoint : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ApiEndpoint is created by the app")
    Q_PROPERTY(bool enabled READ enabled WRITE setEnabled NOTIFY configChanged)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY configChanged)
    Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY configChanged)
    Q_PROPERTY(bool allowNetwork READ allowNetwork WRITE setAllowNetwork NOTIFY configChanged)
    // Web page origins allowed to call the endpoint from a browser, as the
    // user types them ("https://app.example, http://localhost:3000", "*").
    Q_PROPERTY(QString corsOrigins READ corsOrigins WRITE setCorsOrigins NOTIFY configChanged)
    // Why the last corsOrigins typed were not taken; empty when they were.
    Q_PROPERTY(QString corsError READ corsError NOTIFY configChanged)
    Q_PROPERTY(QString host READ host NOTIFY configChanged)
    Q_PROPERTY(bool available READ available NOTIFY stateChanged)
    Q_PROPERTY(bool listening READ listening NOTIFY stateChanged)
    Q_PROPERTY(QString url READ url NOTIFY stateChanged)
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
    Q_PROPERTY(bool waitingForModel READ waitingForModel NOTIFY stateChanged)
    Q_PROPERTY(QString warning READ warning NOTIFY stateChanged)
    Q_PROPERTY(int activeSessions READ activeSessions NOTIFY stateChanged)
    Q_PROPERTY(qint64 sessionsServed READ sessionsServed NOTIFY stateChanged)

public:
    ApiEndpoint(AppSettings* settings, EngineHost* engine, QObject* parent = nullptr);

    bool enabled() const { return config_.enabled; }
    void setEnabled(bool on);
    int port() const { return config_.port; }
    void setPort(int port);
    QString apiKey() const { return config_.apiKey; }
    void setApiKey(const QString& key);
    bool allowNetwork() const;
    void setAllowNetwork(bool allow);
    QString corsOrigins() const { return config_.corsOrigins.join(QStringLiteral(", ")); }
    void setCorsOrigins(const QString& text);
    QString corsError() const { return corsError_; }
    QString host() const { return config_.host; }

    bool available() const;
    bool listening() const;
    QString url() const;
    QString error() const;
    bool waitingForModel() const;
    QString warning() const;
    int activeSessions() const;
    qint64 sessionsServed() const;

    Q_INVOKABLE void copyUrl() const;

signals:
    void configChanged();
    void stateChanged();

private:
    void apply();

    AppSettings* settings_;
    EngineHost* engine_;
    EndpointConfig config_;
    QString corsError_;
};

} // namespace weir::desktop
