// End-to-end, a user's first start: the real app offscreen with a fresh data
// folder, no model named and no $WEIR_MODEL. It must open the instruction-
// tuned chat model (SmolLM2 135M Instruct, installed by set-up) and answer a
// plain question; the Model page must list every installed model with what
// it is and switch to another with one click. Screenshots go to
// $WEIR_SCREENSHOT_DIR (build/screenshots/): first-run-chat.png, models.png.
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "AppContext.h"
#include "AppDriver.h"
#include "DesktopApp.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "settings/InstalledModels.h"
#include "storage/Storage.h"
#include "weir/model_file.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

class AppFirstRunE2eTest : public QObject {
    Q_OBJECT
    QTemporaryDir data_, xdg_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

    // The path the build's model folder gives a file of the catalogue.
    static QString buildModel(const QString& file) {
        return QFileInfo(QStringLiteral(WEIR_DEFAULT_MODEL)).absolutePath() + u'/' + file;
    }

    // Repeater delegates are not QObject children of the window: search the
    // visual item tree.
    static QQuickItem* findVisualItem(QQuickItem* root, const QString& name) {
        if (root->objectName() == name) return root;
        for (QQuickItem* child : root->childItems())
            if (QQuickItem* found = findVisualItem(child, name)) return found;
        return nullptr;
    }

    bool waitForModel() {
        EngineHost* engine = app_->engineHost();
        QTest::qWait(0);
        for (int i = 0; i < 3600 && engine->state() != EngineHost::Ready && engine->state() != EngineHost::Failed; ++i)
            QTest::qWait(50);
        return engine->state() == EngineHost::Ready;
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(buildModel(QStringLiteral(WEIR_CHAT_MODEL_FILE))))
            QSKIP("SKIPPED: the chat model is not installed (packaging/setup.sh installs it)");
        // A first start: nothing named, nothing remembered, no user model folder.
        qunsetenv("WEIR_MODEL");
        qputenv("XDG_DATA_HOME", xdg_.path().toUtf8());
        shots_ = qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath() + QStringLiteral("/weir-screenshots"));
        // As main.cpp does: a model switch checks the new file first.
        app_ = std::make_unique<DesktopApp>(realEngineFactory(), nullptr, &weir::checkModelFile);
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--data-dir"), data_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1200, 800);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QVERIFY2(waitForModel(), qPrintable(app_->engineHost()->errorString()));
    }

    void opensTheChatModel() {
        const QVariantMap info = app_->engineHost()->modelInfo();
        QCOMPARE(QFileInfo(app_->engineHost()->modelPath()).fileName(), QStringLiteral(WEIR_CHAT_MODEL_FILE));
        QCOMPARE(info.value("architecture").toString(), QStringLiteral("llama"));
        QCOMPARE(info.value("baseModel").toBool(), false);  // no "base model" notice in the chat view
        QCOMPARE(info.value("name").toString(), QStringLiteral("SmolLM2 135M Instruct"));  // the catalogue's name
    }

    void answersAPlainQuestion() {
        ChatController* chat = app_->chat();
        QObject scope;
        QString endedAs;
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64, qint64, const QString& state) { endedAs = state; });
        QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
        QTRY_VERIFY(chat->currentId() != 0);
        const qint64 id = chat->currentId();
        QVariantMap s = chat->currentSettings();
        s["temperature"] = 0.0;  // greedy: the same answer on every machine
        s["maxTokens"] = 48;
        chat->setSettings(s);
        findItem(window_, "composerInput")->forceActiveFocus();
        typeText(window_, QStringLiteral("Name three primary colors."));
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!endedAs.isEmpty(), 300000);
        QCOMPARE(endedAs, QStringLiteral("complete"));
        const auto messages = app_->storage()->messages(id);
        QCOMPARE(messages.size(), 2);
        qInfo().noquote() << "reply:" << messages[1].content;
        // Greedy SmolLM2 lists red, blue and yellow (llama.cpp gives the same
        // reply: tests/data/reference/smollm2_135m_greedy.json); a base model
        // would continue the line instead.
        for (const char* colour : {"red", "blue", "yellow"})
            QVERIFY2(messages[1].content.contains(QLatin1String(colour), Qt::CaseInsensitive), qPrintable(messages[1].content));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("first-run-chat")).isEmpty());
    }

    void modelPageListsInstalledModelsAndSwitchesInOneClick() {
        const QString gemmaFile = QFileInfo(QStringLiteral(WEIR_DEFAULT_MODEL)).fileName();
        if (!QFileInfo::exists(buildModel(gemmaFile))) QSKIP("SKIPPED: the default model is not installed");
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("model")));
        QTRY_VERIFY(findItem(window_, "modelPage")->isVisible());
        InstalledModels* installed = app_->context()->installedModels();
        QTRY_VERIFY_WITH_TIMEOUT(!installed->scanning() && installed->models().size() >= 2, 60000);
        QVariantMap gemma, smol;
        for (const QVariant& v : installed->models()) {
            const QVariantMap m = v.toMap();
            if (m["fileName"] == gemmaFile) gemma = m;
            if (m["fileName"] == QStringLiteral(WEIR_CHAT_MODEL_FILE)) smol = m;
        }
        QCOMPARE(gemma["architecture"].toString(), QStringLiteral("gemma3"));
        QVERIFY(gemma["slidingLayers"].toInt() > 0);
        QCOMPARE(gemma["baseModel"].toBool(), true);
        QCOMPARE(smol["architecture"].toString(), QStringLiteral("llama"));
        QCOMPARE(smol["slidingLayers"].toInt(), 0);
        QCOMPARE(smol["hasChatTemplate"].toBool(), true);
        QCOMPARE(smol["role"].toString(), QStringLiteral("chat"));

        QQuickItem* row = nullptr;
        QTRY_VERIFY((row = findVisualItem(window_->contentItem(), QStringLiteral("modelRow:") + gemmaFile)));
        QTRY_VERIFY(row->isVisible());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("models")).isEmpty());
        QVERIFY(clickItem(window_, row));  // one click
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->modelPath().endsWith(gemmaFile), 10000);
        QVERIFY2(waitForModel(), qPrintable(app_->engineHost()->errorString()));
        QCOMPARE(app_->engineHost()->modelInfo().value("architecture").toString(), QStringLiteral("gemma3"));
    }

    void cleanupTestCase() { app_.reset(); }
};

QTEST_MAIN(AppFirstRunE2eTest)
#include "app_first_run_e2e_test.moc"
