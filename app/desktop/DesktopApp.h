#pragma once
// The desktop app as an object: parses the command line, opens storage,
// creates the engine host, models and settings, and loads the QML window.
// main.cpp only constructs it with the real engine; the end-to-end test and
// UI tests construct the same thing (tests may pass a fake engine factory).
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <string>

#include "engine_host/EngineBackend.h"

class QQmlApplicationEngine;
class QQuickWindow;

namespace weir::logging {
class RotatingLogFile;
}

namespace weir::desktop {

struct CommandLineOptions;

class ApiEndpoint;
class AppContext;
class AppSettings;
class ChatController;
class ToolRegistry;
class EngineHost;
class PoolStatusModel;
class RemoteEnginesController;
class RemotePoolModel;
class Storage;
class StorageCheckpointer;
class StorageStatus;

// Registers the Weir QML module's types (call once before loading QML).
void registerQmlTypes();

class DesktopApp : public QObject {
    Q_OBJECT
public:
    // fileCheck: run on a model file before it replaces the one in use
    // (EngineHost::setFileCheck); none in tests with a fake engine.
    explicit DesktopApp(EngineFactory factory, QObject* parent = nullptr,
                        std::function<void(const std::string&)> fileCheck = {});
    ~DesktopApp() override;

    // Command line (CommandLine.h): [--model] FILE, --no-model, --data-dir
    // DIR, --quit-after SECONDS. Data (and logs/weir.log) live in --data-dir,
    // else $WEIR_DATA_DIR, else $XDG_DATA_HOME/weir. Without a model named,
    // the last model used or the default model is loaded. A database that
    // cannot be opened for writing does not stop the app: it opens
    // read-only, or on a temporary database, with a banner. Returns false
    // (after printing why) if the app cannot start.
    bool start(const QStringList& arguments);

    QString dataDir() const { return dataDir_; }
    Storage* storage() const { return storage_.get(); }
    StorageStatus* storageStatus() const { return storageStatus_; }
    EngineHost* engineHost() const { return engine_; }
    ChatController* chat() const { return chat_; }
    ToolRegistry* tools() const { return tools_; }
    PoolStatusModel* pools() const { return pools_; }
    RemoteEnginesController* remoteEngines() const { return remote_; }
    RemotePoolModel* remotePool() const { return remotePool_; }
    AppSettings* settings() const { return settings_; }
    ApiEndpoint* endpoint() const { return endpoint_; }
    AppContext* context() const { return context_; }
    QQmlApplicationEngine* qmlEngine() const { return qml_.get(); }
    QQuickWindow* window() const;

private:
    // The steps of start(), in order.
    void chooseDataDir(const CommandLineOptions& options);
    void openLogFile();
    bool openDatabase();
    void createParts();
    bool loadWindow();
    void startModel(const CommandLineOptions& options);
    void shutdown();
    // Opens the database read-write, else read-only, else a temporary one,
    // and says which in storageStatus_. False only if none of them opens.
    bool openStorage();
    // The banner's "Restore backup": the newest sound copy replaces the damaged file.
    void restoreBackup();

    EngineFactory factory_;
    std::function<void(const std::string&)> fileCheck_;
    QString dataDir_;
    std::unique_ptr<logging::RotatingLogFile> logFile_;
    std::unique_ptr<Storage> storage_;
    std::unique_ptr<StorageCheckpointer> checkpointer_;
    StorageStatus* storageStatus_ = nullptr;
    EngineHost* engine_ = nullptr;
    ChatController* chat_ = nullptr;
    ToolRegistry* tools_ = nullptr;
    PoolStatusModel* pools_ = nullptr;
    RemoteEnginesController* remote_ = nullptr;
    RemotePoolModel* remotePool_ = nullptr;
    AppSettings* settings_ = nullptr;
    ApiEndpoint* endpoint_ = nullptr;
    AppContext* context_ = nullptr;
    std::unique_ptr<QQmlApplicationEngine> qml_;
    bool shutDown_ = false;
};

} // namespace weir::desktop
