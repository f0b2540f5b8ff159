#pragma once
// The QML singleton `App`: the one door from QML to the app's C++ objects
// (chat, engine, pool status, settings) plus a few helpers views need.
// DesktopApp (or a test) fills it before any QML is loaded.
#include <QObject>
#include <QQmlEngine>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "monitor/PoolStatusModel.h"
#include "server/ApiEndpoint.h"
#include "settings/AppSettings.h"
#include "settings/InstalledModels.h"
#include "storage/StorageStatus.h"
#include "tools/ToolRegistry.h"

namespace weir::desktop {

class AppContext : public QObject {
    Q_OBJECT
    QML_NAMED_ELEMENT(App)
    QML_SINGLETON
    Q_PROPERTY(ChatController* chat READ chat CONSTANT)
    // The tools and MCP servers agent conversations may use (the Tools page).
    Q_PROPERTY(ToolRegistry* tools READ tools CONSTANT)
    Q_PROPERTY(EngineHost* engine READ engine CONSTANT)
    Q_PROPERTY(PoolStatusModel* pools READ pools CONSTANT)
    Q_PROPERTY(AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(ApiEndpoint* endpoint READ endpoint CONSTANT)
    Q_PROPERTY(StorageStatus* storage READ storage CONSTANT)
    Q_PROPERTY(QString highlighterName READ highlighterName CONSTANT)
    // An installed fixed-pitch family for code and numbers (theme/MonospaceFont.h).
    Q_PROPERTY(QString monospaceFamily READ monospaceFamily CONSTANT)
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QString qtVersion READ qtVersion CONSTANT)
    Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
    Q_PROPERTY(QString databasePath READ databasePath CONSTANT)
    // The log file being written (DATA/logs/weir.log; older ones beside it as weir.log.1 ...).
    Q_PROPERTY(QString logFilePath READ logFilePath CONSTANT)
    // The catalogue's models (settings/ModelCatalogue.h), each with where it was found.
    Q_PROPERTY(QVariantList bundledModels READ bundledModels CONSTANT)
    // Every installed model, summarised off the GUI thread (settings/InstalledModels.h).
    Q_PROPERTY(InstalledModels* installedModels READ installedModels CONSTANT)
    // Where the app looks for models, first to last.
    Q_PROPERTY(QStringList modelFolders READ modelFolders CONSTANT)
    // "dark", "light" or "" (follow the system palette); starts from $WEIR_THEME.
    Q_PROPERTY(QString themeOverride READ themeOverride WRITE setThemeOverride NOTIFY themeOverrideChanged)
    Q_PROPERTY(int interruptedAtStart READ interruptedAtStart CONSTANT)
    // The page the window opens on: $WEIR_START_PAGE (chat, monitor, settings,
    // model, about), else "chat". For measuring a page left alone (tests/bench).
    Q_PROPERTY(QString startPage READ startPage CONSTANT)

public:
    struct Parts {
        ChatController* chat = nullptr;
        ToolRegistry* tools = nullptr;
        EngineHost* engine = nullptr;
        PoolStatusModel* pools = nullptr;
        AppSettings* settings = nullptr;
        ApiEndpoint* endpoint = nullptr;
        StorageStatus* storage = nullptr;
        QString dataDir, databasePath, logFilePath;
        int interruptedAtStart = 0;
    };

    // The instance QML gets; set before loading QML, cleared on destruction.
    static void setInstance(AppContext* context);
    static AppContext* create(QQmlEngine*, QJSEngine*);

    explicit AppContext(const Parts& parts, QObject* parent = nullptr);
    ~AppContext() override;

    ChatController* chat() const { return parts_.chat; }
    ToolRegistry* tools() const { return parts_.tools; }
    EngineHost* engine() const { return parts_.engine; }
    PoolStatusModel* pools() const { return parts_.pools; }
    AppSettings* settings() const { return parts_.settings; }
    ApiEndpoint* endpoint() const { return parts_.endpoint; }
    StorageStatus* storage() const { return parts_.storage; }
    QString highlighterName() const;
    QString monospaceFamily() const;
    QString version() const;
    QString qtVersion() const;
    QString dataDir() const { return parts_.dataDir; }
    QString databasePath() const { return parts_.databasePath; }
    QString logFilePath() const { return parts_.logFilePath; }
    QVariantList bundledModels() const;
    QStringList modelFolders() const;
    InstalledModels* installedModels() const { return installedModels_; }
    QString themeOverride() const { return themeOverride_; }
    void setThemeOverride(const QString& theme);
    int interruptedAtStart() const { return parts_.interruptedAtStart; }
    QString startPage() const;

    // Loads a model with the saved engine settings and remembers it.
    Q_INVOKABLE void loadModel(const QString& path);
    // Takes a model that cannot load off the Model page: forgets it as a
    // recent model and, when it lies in one of the model folders (which are
    // scanned, so forgetting is not enough), moves the file to the trash.
    // Returns "" or why the file stays.
    Q_INVOKABLE QString removeModel(const QString& path);
    // Saves engine settings and reloads the current model with them; returns
    // "" then, or why the engine would refuse them (nothing saved).
    Q_INVOKABLE QString applyEngineSettings(const QVariantMap& values);
    Q_INVOKABLE QString urlToPath(const QUrl& url) const;
    Q_INVOKABLE QUrl pathToUrl(const QString& path) const;
    // Where a file dialog opens: `preferred` if that folder exists, else the
    // Documents folder if it exists, else the home folder (a dialog shown on
    // a missing folder lists the working directory under its name).
    Q_INVOKABLE QString dialogFolder(const QString& preferred = QString()) const;
    Q_INVOKABLE bool fileExists(const QString& path) const;
    Q_INVOKABLE QString formatBytes(double bytes) const;
    Q_INVOKABLE QString formatCount(double n) const;  // 268M, 1.2k
    Q_INVOKABLE QString formatNumber(double n) const; // 12,345

signals:
    void themeOverrideChanged();

private:
    Parts parts_;
    QString themeOverride_;
    InstalledModels* installedModels_ = nullptr;
    mutable QString monospaceFamily_;  // resolved on first use (needs the font database)
};

} // namespace weir::desktop
