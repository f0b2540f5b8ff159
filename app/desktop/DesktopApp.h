#pragma once
// The desktop app as an object: parses the command line, opens storage,
// creates the engine host, models and settings, and loads the QML window.
// main.cpp only constructs it with the real engine; the end-to-end test and
// UI tests construct the same thing (tests may pass a fake engine factory).
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>

#include "engine/EngineBackend.h"

class QQmlApplicationEngine;
class QQuickWindow;

namespace weir::desktop {

class ApiEndpoint;
class AppContext;
class AppSettings;
class ChatController;
class EngineHost;
class PoolStatusModel;
class Storage;
class StorageCheckpointer;

// Registers the Weir QML module's types (call once before loading QML).
void registerQmlTypes();

class DesktopApp : public QObject {
    Q_OBJECT
public:
    explicit DesktopApp(EngineFactory factory, QObject* parent = nullptr);
    ~DesktopApp() override;

    // Command line: [--model FILE] [--no-model] [--data-dir DIR]. Data lives
    // in --data-dir, else $WEIR_DATA_DIR, else the standard per-user data
    // folder. Without --model, the last model used or the default model is
    // loaded. Returns false (after printing why) if the app cannot start.
    bool start(const QStringList& arguments);

    QString dataDir() const { return dataDir_; }
    Storage* storage() const { return storage_.get(); }
    EngineHost* engineHost() const { return engine_; }
    ChatController* chat() const { return chat_; }
    PoolStatusModel* pools() const { return pools_; }
    AppSettings* settings() const { return settings_; }
    ApiEndpoint* endpoint() const { return endpoint_; }
    AppContext* context() const { return context_; }
    QQmlApplicationEngine* qmlEngine() const { return qml_.get(); }
    QQuickWindow* window() const;

private:
    void shutdown();

    EngineFactory factory_;
    QString dataDir_;
    std::unique_ptr<Storage> storage_;
    std::unique_ptr<StorageCheckpointer> checkpointer_;
    EngineHost* engine_ = nullptr;
    ChatController* chat_ = nullptr;
    PoolStatusModel* pools_ = nullptr;
    AppSettings* settings_ = nullptr;
    ApiEndpoint* endpoint_ = nullptr;
    AppContext* context_ = nullptr;
    std::unique_ptr<QQmlApplicationEngine> qml_;
    bool shutDown_ = false;
};

} // namespace weir::desktop
