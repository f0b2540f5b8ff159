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

#include "engine_host/EndpointConfig.h"
#include "settings/ConversationPresets.h"
#include "weir/engine.h"

class QThread;

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
    // The sidebar folded away (Ctrl+B); on a narrow window it is a drawer instead.
    Q_PROPERTY(bool sidebarCollapsed READ sidebarCollapsed WRITE setSidebarCollapsed NOTIFY sidebarCollapsedChanged)
    // "system" (follow the platform), "light" or "dark".
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY themeChanged)
    // Scale of every font size in the UI (Ctrl+plus / Ctrl+minus / Ctrl+0), kZoomMin..kZoomMax.
    Q_PROPERTY(double zoom READ zoom WRITE setZoom NOTIFY zoomChanged)
    Q_PROPERTY(double zoomMin MEMBER kZoomMin CONSTANT)
    Q_PROPERTY(double zoomMax MEMBER kZoomMax CONSTANT)
    Q_PROPERTY(ConversationPresets* presets READ presets CONSTANT)
    Q_PROPERTY(int hardwareThreads READ hardwareThreads CONSTANT)
    // What Threads = 0 means: one thread per physical core (SMT siblings once).
    Q_PROPERTY(int physicalCores READ physicalCores CONSTANT)
    Q_PROPERTY(QString cpuFeatures READ cpuFeatures CONSTANT)
    // Which CPU kernels the engine runs here, in words (weir::cpuKernelsInUse).
    Q_PROPERTY(QString cpuKernels READ cpuKernels CONSTANT)
    // The engine's ranges (EngineLimits) for the settings page's fields:
    // threadsMax, maxRunningMax, prefillChunkMax, pageSizeMax, poolTokensMax,
    // retainGapMax, maxContextMax.
    Q_PROPERTY(QVariantMap engineLimits READ engineLimits CONSTANT)
    // What the Device setting offers: first "" (automatic: the first GPU,
    // else the CPU), then the CPU and each CUDA GPU, as maps {id, label,
    // name, gpu, totalBytes, freeBytes, detail}. Looked up off the GUI thread
    // (opening the CUDA module and driver can take a second): holds only the
    // automatic entry and the CPU until devicesChanged.
    Q_PROPERTY(QVariantList devices READ devices NOTIFY devicesChanged)
    // Why no GPU is offered ("" when one is, or while still looking).
    Q_PROPERTY(QString gpuProblem READ gpuProblem NOTIFY devicesChanged)

public:
    static constexpr double kZoomMin = 0.7;
    static constexpr double kZoomMax = 2.0;

    AppSettings(const QString& dataDir, const QString& defaultModel, QObject* parent = nullptr);
    ~AppSettings() override;

    // Engine settings as a map: threads, maxRunning, prefillChunk, pageSize,
    // fullPoolTokens, windowPoolTokens, kvDtype, retainGap, maxContext, device.
    QVariantMap engine() const;
    // Stores `values` over the current settings when the engine would accept
    // them (validateEngineOptions) and returns ""; otherwise stores nothing
    // and returns the problem, naming the option and the value.
    Q_INVOKABLE QString setEngine(const QVariantMap& values);
    Q_INVOKABLE QVariantMap engineDefaults() const;
    QVariantMap engineLimits() const;
    // The stored settings as engine options, unclamped: a value out of range
    // (a hand-edited settings.ini) reaches the engine, which refuses to load
    // with a message naming it, instead of being quietly changed here.
    EngineOptions engineOptions() const;

    // The HTTP endpoint: on/off, interface, port, API key (group "endpoint").
    EndpointConfig endpointConfig() const;
    void setEndpointConfig(const EndpointConfig& config);

    QStringList recentModels() const;
    QString defaultModel() const { return defaultModel_; }
    QString lastModel() const;
    Q_INVOKABLE void addRecentModel(const QString& path);
    Q_INVOKABLE void removeRecentModel(const QString& path);

    qint64 lastConversation() const;
    void setLastConversation(qint64 id);
    QRect windowGeometry() const;
    void setWindowGeometry(const QRect& r);
    bool windowMaximized() const;
    void setWindowMaximized(bool m);
    int sidebarWidth() const;
    void setSidebarWidth(int w);
    bool sidebarCollapsed() const;
    void setSidebarCollapsed(bool c);
    QString theme() const;
    // Anything but "light" or "dark" means "system".
    void setTheme(const QString& theme);
    double zoom() const;
    // Clamped to kZoomMin..kZoomMax and rounded to 5 %.
    void setZoom(double zoom);

    // Unsent text of a conversation's composer (group "drafts", by id; 0 is
    // the composer before any conversation exists). An empty text removes it.
    Q_INVOKABLE QString draft(qint64 conversationId) const;
    Q_INVOKABLE void setDraft(qint64 conversationId, const QString& text);

    // What conversations without a policy of their own do when the context is
    // full ("chat/contextPolicy"; ContextFit.h names the values; "" if never set).
    QString contextPolicy() const;
    void setContextPolicy(const QString& policy);

    int hardwareThreads() const;
    int physicalCores() const;
    QString cpuFeatures() const;
    QString cpuKernels() const;
    QVariantList devices() const { return devices_; }
    QString gpuProblem() const { return gpuProblem_; }
    Q_INVOKABLE void sync() { settings_.sync(); }
    // Presets for new conversations, kept in the same file (group "presets").
    ConversationPresets* presets() { return &presets_; }

signals:
    void engineChanged();
    void recentModelsChanged();
    void lastConversationChanged();
    void windowGeometryChanged();
    void sidebarWidthChanged();
    void sidebarCollapsedChanged();
    void themeChanged();
    void zoomChanged();
    void devicesChanged();

private:
    void lookUpDevices();

    static EngineOptions optionsFrom(const QVariantMap& engine);

    mutable QSettings settings_;
    QString defaultModel_;
    ConversationPresets presets_{settings_};
    QThread* lookup_ = nullptr;
    QVariantList devices_;
    QString gpuProblem_;
};

} // namespace weir::desktop
