// The whole main window on the fake engine, as a user drives it: it loads,
// Ctrl+N opens conversations, typing + Enter sends, two conversations stream
// at once and are stored, the pool monitor and the engine settings (with a
// floor warning) open. Screenshots go to $WEIR_SCREENSHOT_DIR/fake/ so the
// UI can be looked at without a model; the real-model run is tests/e2e.
#include <QQmlApplicationEngine>
#include <QTemporaryDir>
#include <QTest>

#include "AppDriver.h"
#include "AppContext.h"
#include "DesktopApp.h"
#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine/EngineHost.h"
#include "monitor/PoolStatusModel.h"
#include "storage/Storage.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

class MainWindowTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

private slots:
    void initTestCase() {
        shots_ = QDir(qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath())).filePath(QStringLiteral("fake"));
        FakeEngineConfig config;
        config.tokenIntervalMs = 25;  // slow enough to see both conversations streaming
        app_ = std::make_unique<DesktopApp>(FakeEngineBackend::factory(config));
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--model"), QStringLiteral("/models/fake.gguf"),
                             QStringLiteral("--data-dir"), dir_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1360, 860);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->state() == EngineHost::Ready, 30000);
        app_->engineHost()->setStatusInterval(100);
    }

    void emptyWindowLooksRight() {
        QVERIFY(findItem(window_, "conversationList"));
        QVERIFY(findItem(window_, "composerInput"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("empty")).isEmpty());
    }

    void twoConversationsStreamAtOnce() {
        ChatController* chat = app_->chat();
        QObject scope;  // the lambdas below die with this test function
        QSet<qint64> streaming, ended;
        bool overlapped = false;
        connect(chat, &ChatController::replyTokens, &scope, [&](qint64 conv, int) {
            streaming.insert(conv);
            if (streaming.size() >= 2 && ended.isEmpty()) overlapped = true;
        });
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64 conv, qint64, const QString&) { ended.insert(conv); });

        const char* prompts[] = {"Write a Python function that doubles a number",
                                 "Explain what a sliding window layer is"};
        QList<qint64> ids;
        for (const char* prompt : prompts) {
            QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);  // Ctrl+N
            QTRY_VERIFY(chat->currentId() != 0 && !ids.contains(chat->currentId()));
            ids << chat->currentId();
            QQuickItem* input = findItem(window_, "composerInput");
            input->forceActiveFocus();
            typeText(window_, QString::fromLatin1(prompt));
            QTest::keyClick(window_, Qt::Key_Return);
            QTRY_VERIFY(chat->isGenerating(ids.last()));
        }
        QTRY_VERIFY_WITH_TIMEOUT(streaming.size() == 2, 30000);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat-streaming")).isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, 60000);
        QVERIFY(overlapped);
        for (qint64 id : ids) {
            const auto messages = app_->storage()->messages(id);
            QCOMPARE(messages.size(), 2);
            QCOMPARE(messages[1].state, MessageState::Complete);
            QVERIFY(!messages[1].content.isEmpty());
        }
        chat->select(ids.first());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat")).isEmpty());
    }

    void poolMonitorOpens() {
        QVERIFY(clickItem(window_, findItem(window_, "navPoolMonitor")));
        QTRY_VERIFY(findItem(window_, "poolMonitorPage")->isVisible());
        // Keep something running so the chart has a live shape.
        app_->chat()->sendTo(app_->chat()->newConversation(), QStringLiteral("Tell me a long story about rivers"));
        QVERIFY(findItem(window_, "poolMonitorPage")->isVisible());  // sending elsewhere keeps the page
        const int start = app_->pools()->revision();
        QTRY_VERIFY_WITH_TIMEOUT(app_->pools()->revision() >= start + 8, 30000);
        QVERIFY(app_->pools()->hasData());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("pool-monitor")).isEmpty());
    }

    void engineSettingsShowAFloorWarning() {
        QVERIFY(clickItem(window_, findItem(window_, "navEngineSettings")));
        QQuickItem* page = findItem(window_, "engineSettingsPage");
        QTRY_VERIFY(page->isVisible());
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("maxRunning")), Q_ARG(QVariant, 8));
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("windowPoolTokens")), Q_ARG(QVariant, 3000));
        QObject* advisor = page->findChild<QObject*>(QStringLiteral("sizingAdvisor"));
        QVERIFY(advisor);
        QTRY_VERIFY(advisor->property("windowBelowFloor").toBool());
        QTRY_VERIFY(findItem(window_, "useFloorButton")->isVisible());
        QVERIFY(!findItem(window_, "applyButton")->isEnabled());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("engine-settings")).isEmpty());
        // Taking the offered floor clears the warning.
        QVERIFY(clickItem(window_, findItem(window_, "useFloorButton")));
        QTRY_VERIFY(!advisor->property("windowBelowFloor").toBool());
        QVERIFY(findItem(window_, "applyButton")->isEnabled());
    }

    // Not asserted (no timed assertions): printed for the record.
    void frameTimesWhileFourStream() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QObject scope;
        int ended = 0;
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64, qint64, const QString&) { ++ended; });
        for (int i = 0; i < 4; ++i) QVERIFY(chat->sendTo(chat->newConversation(), QStringLiteral("stream number %1").arg(i)));
        FrameMeter meter(window_);  // from here on, only streaming happens
        QTRY_COMPARE_WITH_TIMEOUT(ended, 4, 60000);
        qInfo().noquote() << QStringLiteral("fake engine, 4 streams: ") + meter.summary();
    }

    void shortcuts() {
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QTest::keyClick(window_, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(findItem(window_, "searchField")->hasActiveFocus());
        QTest::keyClick(window_, Qt::Key_Comma, Qt::ControlModifier);
        QTRY_COMPARE(window_->property("page").toString(), QStringLiteral("settings"));
        QTest::keyClick(window_, Qt::Key_Comma, Qt::ControlModifier);
        QTRY_COMPARE(window_->property("page").toString(), QStringLiteral("chat"));

        // Esc stops the reply being written in the open conversation.
        ChatController* chat = app_->chat();
        QObject scope;
        QString endedAs;
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64, qint64, const QString& state) { endedAs = state; });
        QVERIFY(chat->sendTo(chat->newConversation(), QStringLiteral("a reply to stop")));
        QTRY_VERIFY(chat->currentGenerating());
        QTest::keyClick(window_, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(endedAs, QStringLiteral("cancelled"), 30000);
    }

    void modelAndAboutPages() {
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("model")));
        QTRY_VERIFY(findItem(window_, "modelPage")->isVisible());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("model")).isEmpty());
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("about")));
        QTRY_VERIFY(findItem(window_, "aboutPage")->isVisible());
        QQuickItem* highlighter = findItem(window_, "highlighterName");
        QVERIFY(highlighter->property("text").toString().contains(QStringLiteral("built-in")) ||
                highlighter->property("text").toString().contains(QStringLiteral("KF6")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("about")).isEmpty());
    }

    void darkPalette() {
        app_->chat()->select(app_->chat()->conversations()->idAt(app_->chat()->conversations()->count() - 1));
        QObject* context = app_->context();
        QVERIFY(context);
        context->setProperty("themeOverride", QStringLiteral("dark"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat-dark")).isEmpty());
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("monitor")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("pool-monitor-dark")).isEmpty());
        context->setProperty("themeOverride", QString());
    }

    void cleanupTestCase() {
        app_->chat()->stopAll();
        app_.reset();
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
