// The remote engines in the whole window, on the fake engine and a fake
// OpenAI server: the settings page keeps what was typed when an address is
// refused, tests the connection, lists the server's models and adds the
// endpoint; the pool monitor shows it with gauges from its /metrics, polling
// only while the monitor is on screen; the chat header's chooser puts a
// conversation on it, whose reply comes from the server. Screenshots go to
// $WEIR_SCREENSHOT_DIR/fake/remote-*.png.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlProperty>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "AppDriver.h"
#include "chat/ChatController.h"
#include "DesktopApp.h"
#include "FakeEngineBackend.h"
#include "engine_host/EngineHost.h"
#include "remote/RemoteEnginesController.h"
#include "remote/RemotePoolModel.h"
#include "tests/remote/fake_openai_server.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

namespace {

QByteArray fixture(const char* name) {
    QFile f(QStringLiteral(WEIR_REMOTE_FIXTURES "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s missing", name);
    return f.readAll();
}

QList<QQuickItem*> allItems(QQuickItem* root) {
    QList<QQuickItem*> out{root};
    for (QQuickItem* child : root->childItems()) out += allItems(child);
    return out;
}

// Repeater rows are not QObject children of the window: search the item tree.
QQuickItem* findVisual(QQuickWindow* window, const QString& name) {
    for (QQuickItem* item : allItems(window->contentItem()))
        if (item->objectName() == name && item->isVisible()) return item;
    return nullptr;
}

} // namespace

class RemoteEnginesUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    FakeOpenAiServer server_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

    QQuickItem* item(const char* name) {
        QQuickItem* i = findVisual(window_, QString::fromLatin1(name));
        if (!i) qWarning("no visible item %s", name);
        return i;
    }
    void setText(const char* field, const QString& text) { QQmlProperty::write(item(field), QStringLiteral("text"), text); }
    QString text(const char* field) { return QQmlProperty::read(item(field), QStringLiteral("text")).toString(); }

private slots:
    void initTestCase() {
        shots_ = QDir(qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath())).filePath(QStringLiteral("fake"));
        server_.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK",
                R"({"object":"list","data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","max_model_len":16384},)"
                R"({"id":"Qwen/Qwen3-8B-AWQ","owned_by":"vllm","max_model_len":32768}]})");
        });
        const QByteArray metrics = fixture("vllm_v1.prom");
        server_.route("/metrics", [metrics](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK", metrics, {}, "text/plain; version=0.0.4");
        });
        FakeEngineConfig config;
        app_ = std::make_unique<DesktopApp>(FakeEngineBackend::factory(config));
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--model"), QStringLiteral("/models/fake.gguf"),
                             QStringLiteral("--data-dir"), dir_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1280, 860);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->state() == EngineHost::Ready, 30000);
    }

    void cleanupTestCase() {
        app_.reset();
    }

    void settingsPageAddsAnEndpoint() {
        RemoteEnginesController* remote = app_->remoteEngines();
        QVERIFY(remote);
        QVERIFY(clickItem(window_, findItem(window_, "navRemoteEngines")));
        QTRY_VERIFY(findItem(window_, "remoteEnginesPage")->isVisible());
        QVERIFY(item("remoteEmptyList"));
        QCOMPARE(text("remoteKeyStorage"), remote->keyStorage());
        QVERIFY(text("remoteKeyStorage").startsWith(QLatin1String("API keys are kept in ")));

        // A refused address: the error shows and nothing typed is lost.
        setText("remoteNameField", QStringLiteral("GPU box"));
        setText("remoteUrlField", QStringLiteral("ftp://gpu-box/v1"));
        setText("remoteKeyField", QStringLiteral("sk-local"));
        QVERIFY(clickItem(window_, item("remoteSaveButton")));
        QTRY_VERIFY(text("remoteFormError").contains(QLatin1String("not an http:// or https:// address")));
        QCOMPARE(text("remoteNameField"), QStringLiteral("GPU box"));
        QCOMPARE(text("remoteUrlField"), QStringLiteral("ftp://gpu-box/v1"));
        QCOMPARE(text("remoteKeyField"), QStringLiteral("sk-local"));
        QVERIFY(remote->names().isEmpty());

        // The right address: the test lists the server's models to choose from.
        setText("remoteUrlField", server_.baseUrl());
        QVERIFY(clickItem(window_, item("remoteTestButton")));
        QTRY_COMPARE_WITH_TIMEOUT(remote->testState(), QStringLiteral("ok"), 15000);
        QTRY_VERIFY(item("remoteModelBox"));
        QCOMPARE(QQmlProperty::read(item("remoteModelBox"), QStringLiteral("count")).toInt(), 2);
        QCOMPARE(server_.requests().last().headers.value("authorization"), QByteArray("Bearer sk-local"));
        QCOMPARE(text("remoteFormError"), QString());   // the refusal was about the old address
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-engines-test")).isEmpty());

        QVERIFY(clickItem(window_, item("remoteSaveButton")));
        QTRY_COMPARE(remote->names(), QStringList{QStringLiteral("GPU box")});
        const std::optional<RemoteTarget> t = remote->target(QStringLiteral("GPU box"));
        QVERIFY(t);
        QCOMPARE(t->model, QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(t->endpoint.apiKey, QStringLiteral("sk-local"));
        QTRY_VERIFY(item("remoteEndpointRow_0"));
        QCOMPARE(text("remoteNameField"), QString());   // saved: the form is empty again
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-engines")).isEmpty());
    }

    void monitorShowsTheRemoteEngine() {
        RemotePoolModel* pool = app_->remotePool();
        QVERIFY(clickItem(window_, findItem(window_, "navPoolMonitor")));
        QTRY_VERIFY(findItem(window_, "poolMonitorPage")->isVisible());
        QTRY_VERIFY(item("monitorEngineChooser"));
        QVERIFY(!pool->polling());
        // The chooser lists the local engine, then each remote one.
        QQuickItem* chooser = item("monitorEngineChooser");
        QCOMPARE(QQmlProperty::read(chooser, QStringLiteral("count")).toInt(), 2);
        QVERIFY(QMetaObject::invokeMethod(chooser, "activated", Q_ARG(int, 1)));
        QCOMPARE(pool->endpointName(), QStringLiteral("GPU box"));
        QTRY_VERIFY(item("remotePoolView"));
        QVERIFY(pool->active());
        QVERIFY(pool->polling());
        QTRY_VERIFY_WITH_TIMEOUT(pool->hasData() && pool->contextLength() == 16384, 15000);
        QCOMPARE(pool->source(), QStringLiteral("vLLM /metrics"));
        QTRY_VERIFY(item("remoteGauge_kvUsage"));
        QVERIFY(pool->sizingWarns());   // four at 16,384 tokens in a cache of 32,768
        QVERIFY(!text("remoteSizingLine").isEmpty());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-monitor")).isEmpty());

        // Another page: the monitor is hidden, so nothing is polled.
        QVERIFY(clickItem(window_, findItem(window_, "navRemoteEngines")));
        QTRY_VERIFY(!pool->polling());
        QVERIFY(!pool->active());
        QVERIFY(clickItem(window_, findItem(window_, "navPoolMonitor")));
        QTRY_VERIFY(pool->polling());
        pool->setEndpointName(QString());
        QTRY_VERIFY(findItem(window_, "clearCacheButton")->isVisible());
        QVERIFY(!pool->polling());
    }

    void chatHeaderPutsAConversationOnTheRemoteEngine() {
        server_.route("/v1/chat/completions", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"From the GPU box.\"}}]}\n\n",
                                              "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                                              "data: [DONE]\n\n"});
        });
        ChatController* chat = app_->chat();
        QVERIFY(clickItem(window_, findItem(window_, "newConversationButton")));
        QTRY_VERIFY(item("engineChooser"));
        const qint64 id = chat->currentId();
        QVERIFY(id > 0);
        // The local engine, then each remote one; the local engine by default.
        QQuickItem* chooser = item("engineChooser");
        QCOMPARE(QQmlProperty::read(chooser, QStringLiteral("count")).toInt(), 2);
        QCOMPARE(QQmlProperty::read(chooser, QStringLiteral("displayText")).toString(), QStringLiteral("Local engine"));
        QVERIFY(item("modelChip") && item("headerPoolGauge"));
        QVERIFY(QMetaObject::invokeMethod(chooser, "activated", Q_ARG(int, 1)));
        QCOMPARE(chat->currentEngine(), QStringLiteral("GPU box"));
        QTRY_COMPARE(QQmlProperty::read(chooser, QStringLiteral("displayText")).toString(), QStringLiteral("GPU box"));
        // The local model and pools say nothing about this conversation: not shown in its header.
        QVERIFY(!findVisual(window_, QStringLiteral("modelChip")));
        QVERIFY(!findVisual(window_, QStringLiteral("headerPoolGauge")));

        QSignalSpy ended(chat, &ChatController::replyEnded);
        QVERIFY(chat->send(QStringLiteral("Who writes this?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 15000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));
        QCOMPARE(chat->messages()->get(1).value("content").toString(), QStringLiteral("From the GPU box."));
        QCOMPARE(chat->messages()->get(1).value("modelName").toString(), QStringLiteral("Qwen/Qwen3-8B"));  // the reply header
        QCOMPARE(QJsonDocument::fromJson(server_.requests().last().body).object()["model"].toString(),
                 QStringLiteral("Qwen/Qwen3-8B"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-conversation")).isEmpty());

        // Back to the local engine.
        QVERIFY(QMetaObject::invokeMethod(chooser, "activated", Q_ARG(int, 0)));
        QCOMPARE(chat->currentEngine(), QString());
        QTRY_VERIFY(findVisual(window_, QStringLiteral("modelChip")) && findVisual(window_, QStringLiteral("headerPoolGauge")));
    }
};

QTEST_MAIN(RemoteEnginesUiTest)
#include "remote_engines_ui_test.moc"
