#pragma once
// The app's own settings (engine settings, recent models, window geometry, the
// last conversation), kept in an INI file in the data folder so a test's
// WEIR_DATA_DIR isolates them too.
#include <QObject>
#include <QRect>
#include <QSettings>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include "engine/EndpointConfig.h"
#include "weir/engine.h"

namespace weir::desktop {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("AppSettings is created by the app")
    Q_PROPERTY(QVariantMap engine READ engine NOTIFY engineChanged)
    Q_PROPERTY(QStringList recentModels READ recentModels NOTIFY recentModelsChanged)
    Q_PROPERTY(QString defaultModel READ defaultModel CONSTANT)
    Q_PROPERTY(QString lastModel READ lastModel NOTIFY recentModelsChanged)
    Q_PROPERTY(qint64 lastConversation READ lastConversation WRITE setLastConversation NOTIFY lastConversationChanged)
    Q_PROPERTY(QRect windowGeometry READ windowGeometry WRITE setWindowGeometry NOTIFY windowGeometryChanged)
    Q_PROPERTY(bool windowMaximized READ windowMaximized WRITE setWindowMaximized NOTIFY windowGeometryChanged)
    Q_PROPERTY(int sidebarWidth READ sidebarWidth WRITE setSidebarWidth NOTIFY sidebarWidthChanged)
    Q_PROPERTY(int hardwareThreads READ hardwareThreads CONSTANT)
    Q_PROPERTY(QString cpuFeatures READ cpuFeatures CONSTANT)

public:
    AppSettings(const QString& dataDir, const QString& defaultModel, QObject* parent = nullptr);

    // Engine settings as a map: threads, maxRunning, prefillChunk, pageSize,
    // fullPoolTokens, windowPoolTokens, kvDtype, retainGap, maxContext, device.
    QVariantMap engine() const;
    Q_INVOKABLE void setEngine(const QVariantMap& values);
    Q_INVOKABLE QVariantMap engineDefaults() const;
    EngineOptions engineOptions() const;

    // The HTTP endpoint: on/off, interface, port, API key (group "endpoint").
    EndpointConfig endpointConfig() const;
    void setEndpointConfig(const EndpointConfig& config);

    QStringList recentModels() const;
    QString defaultModel() const { return defaultModel_; }
    QString lastModel() const;
    Q_INVOKABLE void addRecentModel(const QString& path);

    qint64 lastConversation() const;
    void setLastConversation(qint64 id);
    QRect windowGeometry() const;
    void setWindowGeometry(const QRect& r);
    bool windowMaximized() const;
    void setWindowMaximized(bool m);
    int sidebarWidth() const;
    void setSidebarWidth(int w);

    int hardwareThreads() const;
    QString cpuFeatures() const;
    Q_INVOKABLE void sync() { settings_.sync(); }

signals:
    void engineChanged();
    void recentModelsChanged();
    void lastConversationChanged();
    void windowGeometryChanged();
    void sidebarWidthChanged();

private:
    mutable QSettings settings_;
    QString defaultModel_;
};

} // namespace weir::desktop
