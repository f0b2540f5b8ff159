// Qt Quick Test runner for the QML components (tests/app/qml/tst_*.qml). The
// QML sees the same `App` singleton as the real app, backed by a fresh
// database and the fake engine (already loaded).
#include <QQmlEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QTest>
#include <QtQuickTest>

#include "AppContext.h"
#include "DesktopApp.h"
#include "FakeEngineBackend.h"
#include "storage/Storage.h"

using namespace weir::desktop;

class Setup : public QObject {
    Q_OBJECT
public slots:
    void applicationAvailable() {
        QQuickStyle::setStyle(QStringLiteral("Fusion"));
        storage_ = std::make_unique<Storage>(dir_.path());
        if (!storage_->open()) qFatal("storage: %s", qPrintable(storage_->lastError()));
        settings_ = std::make_unique<AppSettings>(dir_.path(), QStringLiteral("/nonexistent/default.gguf"));
        testing::FakeEngineConfig config;
        config.tokenIntervalMs = 3;
        host_ = std::make_unique<EngineHost>(testing::FakeEngineBackend::factory(config));
        host_->setStatusInterval(50);
        pools_ = std::make_unique<PoolStatusModel>();
        connect(host_.get(), &EngineHost::statusUpdated, pools_.get(),
                qOverload<const weir::CacheStatus&>(&PoolStatusModel::addSnapshot));
        chat_ = std::make_unique<ChatController>(storage_.get(), host_.get());
        endpoint_ = std::make_unique<ApiEndpoint>(settings_.get(), host_.get());
        remote_ = std::make_unique<RemoteEnginesController>(dir_.path(), weir::remote::ApiKeyVault::Keyring::Never);
        remotePool_ = std::make_unique<RemotePoolModel>(remote_.get());
        AppContext::Parts parts;
        parts.chat = chat_.get();
        parts.engine = host_.get();
        parts.pools = pools_.get();
        parts.settings = settings_.get();
        parts.endpoint = endpoint_.get();
        parts.remote = remote_.get();
        parts.remotePool = remotePool_.get();
        parts.dataDir = dir_.path();
        parts.databasePath = storage_->databasePath();
        context_ = std::make_unique<AppContext>(parts);
        AppContext::setInstance(context_.get());
        registerQmlTypes();
        host_->load(QStringLiteral("fake.gguf"));
    }
    void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
    void cleanupTestCase() {
        context_.reset();
        endpoint_.reset();
        remotePool_.reset();
        remote_.reset();
        chat_.reset();
        pools_.reset();
        host_.reset();
        settings_.reset();
        storage_.reset();
    }

private:
    QTemporaryDir dir_;
    std::unique_ptr<Storage> storage_;
    std::unique_ptr<AppSettings> settings_;
    std::unique_ptr<EngineHost> host_;
    std::unique_ptr<PoolStatusModel> pools_;
    std::unique_ptr<ChatController> chat_;
    std::unique_ptr<ApiEndpoint> endpoint_;
    std::unique_ptr<RemoteEnginesController> remote_;
    std::unique_ptr<RemotePoolModel> remotePool_;
    std::unique_ptr<AppContext> context_;
};

QUICK_TEST_MAIN_WITH_SETUP(weir_qml_components, Setup)
#include "qml_components_test.moc"
