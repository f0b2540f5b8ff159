#pragma once
// The QML singleton `App`: the one door from QML to the app's C++ objects
// (chat, engine, pool status, settings) plus a few helpers views need.
// DesktopApp (or a test) fills it before any QML is loaded.
#include <QObject>
#include <QQmlEngine>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "chat/ChatController.h"
#include "engine/EngineHost.h"
#include "monitor/PoolStatusModel.h"
#include "server/ApiEndpoint.h"
#include "settings/AppSettings.h"

namespace weir::desktop {

class AppContext : public QObject {
    Q_OBJECT
    QML_NAMED_ELEMENT(App)
    QML_SINGLETON
    Q_PROPERTY(ChatController* chat READ chat CONSTANT)
    Q_PROPERTY(EngineHost* engine READ engine CONSTANT)
    Q_PROPERTY(PoolStatusModel* pools READ pools CONSTANT)
    Q_PROPERTY(AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(ApiEndpoint* endpoint READ endpoint CONSTANT)
    Q_PROPERTY(QString highlighterName READ highlighterName CONSTANT)
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QString qtVersion READ qtVersion CONSTANT)
    Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
    Q_PROPERTY(QString databasePath READ databasePath CONSTANT)
    // "dark", "light" or "" (follow the system palette); starts from $WEIR_THEME.
    Q_PROPERTY(QString themeOverride READ themeOverride WRITE setThemeOverride NOTIFY themeOverrideChanged)
    Q_PROPERTY(int interruptedAtStart READ interruptedAtStart CONSTANT)

public:
    struct Parts {
        ChatController* chat = nullptr;
        EngineHost* engine = nullptr;
        PoolStatusModel* pools = nullptr;
        AppSettings* settings = nullptr;
        ApiEndpoint* endpoint = nullptr;
        QString dataDir, databasePath;
        int interruptedAtStart = 0;
    };

    // The instance QML gets; set before loading QML, cleared on destruction.
    static void setInstance(AppContext* context);
    static AppContext* create(QQmlEngine*, QJSEngine*);

    explicit AppContext(const Parts& parts, QObject* parent = nullptr);
    ~AppContext() override;

    ChatController* chat() const { return parts_.chat; }
    EngineHost* engine() const { return parts_.engine; }
    PoolStatusModel* pools() const { return parts_.pools; }
    AppSettings* settings() const { return parts_.settings; }
    ApiEndpoint* endpoint() const { return parts_.endpoint; }
    QString highlighterName() const;
    QString version() const;
    QString qtVersion() const;
    QString dataDir() const { return parts_.dataDir; }
    QString databasePath() const { return parts_.databasePath; }
    QString themeOverride() const { return themeOverride_; }
    void setThemeOverride(const QString& theme);
    int interruptedAtStart() const { return parts_.interruptedAtStart; }

    // Loads a model with the saved engine settings and remembers it.
    Q_INVOKABLE void loadModel(const QString& path);
    // Saves engine settings and reloads the current model with them; returns
    // "" then, or why the engine would refuse them (nothing saved).
    Q_INVOKABLE QString applyEngineSettings(const QVariantMap& values);
    Q_INVOKABLE QString urlToPath(const QUrl& url) const;
    Q_INVOKABLE QUrl pathToUrl(const QString& path) const;
    Q_INVOKABLE bool fileExists(const QString& path) const;
    Q_INVOKABLE QString formatBytes(double bytes) const;
    Q_INVOKABLE QString formatCount(double n) const;  // 268M, 1.2k
    Q_INVOKABLE QString formatNumber(double n) const; // 12,345

signals:
    void themeOverrideChanged();

private:
    Parts parts_;
    QString themeOverride_;
};

} // namespace weir::desktop
