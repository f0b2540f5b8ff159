// End-to-end: the real app offscreen on the real default model. Creates two
// conversations with Ctrl+N, types a prompt into each and sends it with
// Enter; checks both replies stream at the same time and are stored; opens
// the pool monitor (live chart) and the engine settings with a floor warning;
// saves screenshots of each to $WEIR_SCREENSHOT_DIR (build/screenshots/).
// Turns on the OpenAI-compatible endpoint and streams a chat completion with
// the official `openai` client while two app conversations generate, on the
// same engine. Then measures the longest UI frame while 4 conversations
// stream (printed, not asserted: no timed assertions). Then the shell: each
// file dialog opens (Open GGUF, Import, Export as JSON) and a conversation
// goes out to a file and back in unchanged; a preset is saved from one
// conversation and starts another; the theme switch turns the whole window
// dark (dark.png) and a 600 px window shows the sidebar as a drawer (narrow.png).
// Last, versions and context: a reply stopped at Max tokens shows so and
// Continue writes on in the same message; Regenerate makes a second version and
// the switcher shows the first again (versions.png, continue.png); with the
// context cut to a few hundred tokens, old turns are dropped and a divider
// shows where (context.png).
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QStandardPaths>
#include <QTest>

#include "AppDriver.h"
#include "settings/AppSettings.h"
#include "DesktopApp.h"
#include "chat/ChatController.h"
#include "engine_host/ClientTags.h"
#include "engine_host/EngineHost.h"
#include "monitor/PoolStatusModel.h"
#include "server/ApiEndpoint.h"
#include "storage/Storage.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

namespace {

// A visible item in the window's item tree (popups and dialogs live in its
// overlay, delegates are not QObject children) for which `match` is true.
template <typename Match>
QQuickItem* findVisible(QQuickItem* root, const Match& match) {
    if (root->isVisible() && match(root)) return root;
    for (QQuickItem* child : root->childItems())
        if (QQuickItem* found = findVisible(child, match)) return found;
    return nullptr;
}

QQuickItem* findVisibleNamed(QQuickWindow* window, const QString& name) {
    return findVisible(window->contentItem(), [&](QQuickItem* i) { return i->objectName() == name; });
}

// The first visible item named `name` in the visual tree (list delegates included).
QQuickItem* findVisible(QQuickItem* root, const QString& name) {
    if (!root || !root->isVisible()) return nullptr;
    if (root->objectName() == name) return root;
    for (QQuickItem* child : root->childItems())
        if (QQuickItem* found = findVisible(child, name)) return found;
    return nullptr;
}

} // namespace

class AppE2eTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

    // Replies short enough for a CI box, long enough to overlap. Every
    // conversation gets the same system prompt, so they share a cached prefix.
    void limitReply(int maxTokens) {
        QVariantMap s = app_->chat()->currentSettings();
        s["systemPrompt"] = QStringLiteral(
            "You are the assistant inside Weir, a desktop app that runs language models locally. Answer clearly "
            "and briefly. Use Markdown: short paragraphs, lists where they help, and fenced code blocks with the "
            "language name for any code.");
        s["maxTokens"] = maxTokens;
        s["seed"] = 7;
        s["temperature"] = 0.7;
        app_->chat()->setSettings(s);
    }

private slots:
    void initTestCase() {
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (model.isEmpty() || !QFileInfo::exists(model))
            QSKIP("SKIPPED: the default model is missing (set WEIR_MODEL; packaging/setup.sh fetches it)");
        shots_ = qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath() + QStringLiteral("/weir-screenshots"));
        app_ = std::make_unique<DesktopApp>(realEngineFactory());
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--model"), model, QStringLiteral("--data-dir"),
                             dir_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1360, 860);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->state() != EngineHost::Loading, 180000);
        QVERIFY2(app_->engineHost()->state() == EngineHost::Ready, qPrintable(app_->engineHost()->errorString()));
        qInfo() << "model:" << app_->engineHost()->modelInfo().value("name").toString()
                << "window pool:" << app_->engineHost()->modelInfo().value("windowPoolTokens").toLongLong();
    }

    void twoConversationsStreamAtOnceAndAreStored() {
        ChatController* chat = app_->chat();
        QObject scope;  // the lambdas below die with this test function
        QSet<qint64> streaming, ended;
        bool overlapped = false;
        auto c1 = connect(chat, &ChatController::replyTokens, &scope, [&](qint64 conv, int) {
            streaming.insert(conv);
            if (streaming.size() >= 2 && ended.isEmpty()) overlapped = true;
        });
        auto c2 = connect(chat, &ChatController::replyEnded, &scope,
                          [&](qint64 conv, qint64, const QString&) { ended.insert(conv); });
        const char* prompts[] = {"Write a short Python function that checks whether a number is prime, with an example.",
                                 "Describe a river at dawn in a few sentences."};
        QList<qint64> ids;
        for (const char* prompt : prompts) {
            QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
            QTRY_VERIFY(chat->currentId() != 0 && !ids.contains(chat->currentId()));
            ids << chat->currentId();
            limitReply(120);
            findItem(window_, "composerInput")->forceActiveFocus();
            typeText(window_, QString::fromLatin1(prompt));
            QTest::keyClick(window_, Qt::Key_Return);
            QTRY_VERIFY(chat->isGenerating(ids.last()));
        }
        QTRY_VERIFY_WITH_TIMEOUT(streaming.size() == 2 || ended.size() == 2, 120000);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat-streaming")).isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, 300000);
        disconnect(c1);
        disconnect(c2);
        QVERIFY2(overlapped, "both replies must stream at the same time");
        for (qint64 id : ids) {
            const auto messages = app_->storage()->messages(id);
            QCOMPARE(messages.size(), 2);
            QCOMPARE(messages[0].role, QStringLiteral("user"));
            QCOMPARE(messages[1].state, MessageState::Complete);
            QVERIFY(!messages[1].content.trimmed().isEmpty());
            QVERIFY(messages[1].completionTokens > 0);
            // Speculative decoding (on by default): what it verified, as the engine reported it.
            QVERIFY(messages[1].draftTokens >= 0);
            QVERIFY(messages[1].acceptedDraftTokens <= messages[1].draftTokens);
            qInfo().noquote() << "reply" << id << messages[1].completionTokens << "tokens,"
                              << messages[1].tokensPerSecond << "tok/s," << messages[1].acceptedDraftTokens << "of"
                              << messages[1].draftTokens << "drafts kept";
        }
        // One screenshot per conversation: each shows its own finished reply.
        chat->select(ids.last());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat-second")).isEmpty());
        chat->select(ids.first());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat")).isEmpty());
    }

    void poolMonitorShowsLivePools() {
        ChatController* chat = app_->chat();
        QObject scope;
        int mostRunning = 0;
        connect(app_->engineHost(), &EngineHost::statusUpdated, &scope, [&](const weir::CacheStatus& s) {
            mostRunning = std::max(mostRunning, int(s.requests.size()));
        });
        const char* prompts[] = {"Tell me a story about a weir on a river.", "List five birds that live near rivers.",
                                 "How do fish swim upstream?"};
        QList<qint64> ids;
        for (const char* prompt : prompts) {
            ids << chat->newConversation();
            limitReply(400);  // long enough for a few seconds of chart on a fast machine
            QVERIFY(chat->sendTo(ids.last(), QString::fromLatin1(prompt)));
        }
        QVERIFY(clickItem(window_, findItem(window_, "navPoolMonitor")));
        QTRY_VERIFY(findItem(window_, "poolMonitorPage")->isVisible());
        // A few seconds of live updates (4 a second) with the three in the engine.
        const int start = app_->pools()->revision();
        QTRY_VERIFY_WITH_TIMEOUT(app_->pools()->revision() >= start + 10, 120000);
        QVERIFY2(mostRunning >= 2, qPrintable(QStringLiteral("at most %1 request(s) seen in the pools").arg(mostRunning)));
        QVERIFY(app_->pools()->hasData());
        qInfo() << "pool updates per second:" << app_->pools()->updatesPerSecond()
                << "prefix-hit tokens:" << app_->pools()->counters().value("prefixHitTokens").toULongLong();
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("pool-monitor")).isEmpty());
        for (qint64 id : ids) QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 300000);
    }

    void engineSettingsWithAFloorWarning() {
        QVERIFY(clickItem(window_, findItem(window_, "navEngineSettings")));
        QQuickItem* page = findItem(window_, "engineSettingsPage");
        QTRY_VERIFY(page->isVisible());
        QObject* advisor = page->findChild<QObject*>(QStringLiteral("sizingAdvisor"));
        QVERIFY(advisor);
        const qint64 floor = advisor->property("windowFloor").toLongLong();
        QVERIFY(floor > 0);
        // Ask for 8 running requests in a window pool half the size of the 4-request floor.
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("maxRunning")), Q_ARG(QVariant, 8));
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("windowPoolTokens")),
                                  Q_ARG(QVariant, floor / 2));
        QTRY_VERIFY(advisor->property("windowBelowFloor").toBool());
        QVERIFY(findItem(window_, "useFloorButton")->isVisible());
        QVERIFY(!findItem(window_, "applyButton")->isEnabled());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("engine-settings")).isEmpty());
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("maxRunning")), Q_ARG(QVariant, 4));
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("windowPoolTokens")), Q_ARG(QVariant, 0));
        QTRY_VERIFY(!advisor->property("windowBelowFloor").toBool());
    }

    void endpointStreamsWhileConversationsGenerate() {
        const QString python = qEnvironmentVariable("WEIR_PYTHON");
        if (python.isEmpty() || !QFileInfo::exists(python)) QSKIP("SKIPPED: no python with the openai client (WEIR_PYTHON)");
        ChatController* chat = app_->chat();
        ApiEndpoint* endpoint = app_->endpoint();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        endpoint->setPort(0);  // any free port
        endpoint->setEnabled(true);
        QTRY_VERIFY_WITH_TIMEOUT(endpoint->listening() || !endpoint->error().isEmpty(), 20000);
        QVERIFY2(endpoint->listening(), qPrintable(endpoint->error()));
        QVERIFY(endpoint->url().startsWith(QStringLiteral("http://127.0.0.1:")));
        QVERIFY(endpoint->warning().isEmpty());  // loopback: nothing to warn about

        // The app's own conversations first, then the API client while they stream.
        QObject scope;
        bool apiBesideApp = false, apiInPools = false;
        auto note = [&] {
            if (endpoint->activeSessions() > 0 && chat->generatingCount() > 0) apiBesideApp = true;
        };
        connect(endpoint, &ApiEndpoint::stateChanged, &scope, note);
        connect(chat, &ChatController::replyTokens, &scope, note);
        connect(app_->engineHost(), &EngineHost::statusUpdated, &scope, [&](const weir::CacheStatus& s) {
            bool api = false, conv = false;
            for (const auto& r : s.requests) {
                api = api || apiRequestOf(r.tag) != 0;
                conv = conv || conversationOf(r.tag) != 0;
            }
            if (api && conv) apiInPools = true;
        });
        QList<qint64> ids;
        for (const char* prompt : {"Write a haiku about a mill pond.", "Explain what a fish ladder is."}) {
            ids << chat->newConversation();
            limitReply(160);
            QVERIFY(chat->sendTo(ids.last(), QString::fromLatin1(prompt)));
        }
        QTRY_VERIFY_WITH_TIMEOUT(chat->currentActivity() == QStringLiteral("decode"), 120000);

        QProcess client;
        client.setProcessChannelMode(QProcess::SeparateChannels);
        const QString script = qEnvironmentVariable("WEIR_SOURCE_DIR") + QStringLiteral("/tests/e2e/openai_stream_client.py");
        client.start(python, {script, endpoint->url(), QStringLiteral("48")});
        QVERIFY(client.waitForStarted());
        // The popup with the URL, while the API request streams beside the app's.
        QVERIFY(clickItem(window_, findItem(window_, "endpointChip")));
        QTRY_VERIFY_WITH_TIMEOUT(endpoint->activeSessions() > 0 || client.state() == QProcess::NotRunning, 60000);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("endpoint")).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == QProcess::NotRunning, 400000);
        const QByteArray out = client.readAllStandardOutput();
        qInfo().noquote() << "openai client:" << out.trimmed();
        if (client.exitCode() == 77) QSKIP("SKIPPED: the openai package is not installed");
        QVERIFY2(client.exitCode() == 0, (out + client.readAllStandardError()).constData());
        const QJsonObject result = QJsonDocument::fromJson(out.trimmed().split('\n').last()).object();
        QVERIFY(result.value("chunks").toInt() >= 2);
        QVERIFY2(apiBesideApp, "the API request must stream while app conversations generate");
        QVERIFY2(apiInPools, "the API request must show in the pool status beside the conversations");
        QVERIFY(endpoint->sessionsServed() >= 1);
        QTRY_COMPARE_WITH_TIMEOUT(endpoint->activeSessions(), 0, 10000);
        for (qint64 id : ids) QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 300000);
        QObject* popup = findItem(window_, "endpointChip")->findChild<QObject*>(QStringLiteral("endpointPopup"));
        QVERIFY(popup && popup->property("opened").toBool());
        QTest::keyClick(window_, Qt::Key_Escape);  // closes the popup
        QTRY_VERIFY(!popup->property("visible").toBool());
        QTest::mouseMove(window_, QPoint(window_->width() / 2, window_->height() / 2));  // no tooltip left over
        endpoint->setEnabled(false);
        QTRY_VERIFY(!endpoint->listening());
    }

    void longestFrameWhileFourStream() {
        ChatController* chat = app_->chat();
        QObject scope;  // the lambdas below die with this test function
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QSet<qint64> ended, streaming;
        int maxConcurrent = 0;
        connect(chat, &ChatController::replyTokens, &scope, [&](qint64 conv, int) {
            streaming.insert(conv);
            maxConcurrent = std::max(maxConcurrent, chat->generatingCount());
        });
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64 conv, qint64, const QString&) { ended.insert(conv); });
        const char* prompts[] = {"Explain how a lock on a canal works.", "List ten uses of a river.",
                                 "Write a C++ function that reverses a string.", "What is continuous batching?"};
        for (const char* prompt : prompts) {
            const qint64 id = chat->newConversation();
            limitReply(120);
            QVERIFY(chat->sendTo(id, QString::fromLatin1(prompt)));
        }
        FrameMeter meter(window_);  // from here on, the four stream (the last one is on screen)
        QElapsedTimer clock;
        clock.start();
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 4, 400000);
        qInfo().noquote() << QStringLiteral("UI timing while 4 conversations streamed (%1 s, up to %2 generating at once): ")
                                     .arg(clock.elapsed() / 1000.0, 0, 'f', 1).arg(maxConcurrent) + meter.summary();
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("chat-four")).isEmpty());
    }

    // Each dialog opens (they crashed or did nothing before) and one round
    // trip: export a conversation as JSON, import the file, same content.
    void fileDialogsRoundTrip() {
        ChatController* chat = app_->chat();
        Storage* storage = app_->storage();
        qint64 source = 0;
        for (const ConversationRecord& c : storage->conversations())
            if (storage->messages(c.id).size() >= 2) { source = c.id; break; }
        QVERIFY(source);

        // Model -> Open GGUF file...: the dialog shows; cancelling keeps the model.
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("model")));
        QVERIFY(clickItem(window_, findItem(window_, "openModelButton")));
        QObject* openDialog = window_->findChild<QObject*>(QStringLiteral("openModelDialog"));
        QVERIFY(openDialog);
        QTRY_VERIFY(openDialog->property("visible").toBool());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dialog-open-gguf")).isEmpty());
        QMetaObject::invokeMethod(openDialog, "reject");
        QTRY_VERIFY(!openDialog->property("visible").toBool());
        QCOMPARE(app_->engineHost()->state(), EngineHost::Ready);

        // Export as JSON...
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QQuickItem* sidebar = findItem(window_, "sidebar");
        QMetaObject::invokeMethod(sidebar, "exportConversation", Q_ARG(QVariant, double(source)), Q_ARG(QVariant, QStringLiteral("json")));
        QObject* exportDialog = window_->findChild<QObject*>(QStringLiteral("exportDialog"));
        QVERIFY(exportDialog);
        QTRY_VERIFY(exportDialog->property("visible").toBool());
        QCOMPARE(exportDialog->property("acceptLabel").toString(), QStringLiteral("Export"));
        QVERIFY(exportDialog->property("selectedFile").toUrl().fileName().endsWith(QStringLiteral(".json")));
        // The first export is offered in Documents (home without one), not in
        // the working directory.
        const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        QCOMPARE(exportDialog->property("currentFolder").toUrl().toLocalFile(),
                 QFileInfo(documents).isDir() ? documents : QDir::homePath());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dialog-export")).isEmpty());
        // As a user would: go to the folder, type the name, press Enter, Export.
        const QString file = dir_.filePath(QStringLiteral("round-trip.json"));
        exportDialog->setProperty("currentFolder", QUrl::fromLocalFile(dir_.path()));
        QQuickItem* name = nullptr;
        QTRY_VERIFY((name = findVisibleNamed(window_, QStringLiteral("fileNameTextField"))));
        qInfo().noquote() << "export dialog: file name field" << name->property("text").toString() << "selected"
                          << exportDialog->property("selectedFile").toUrl().toString();
        name->forceActiveFocus();
        QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);
        typeText(window_, QStringLiteral("round-trip.json"));
        QTest::keyClick(window_, Qt::Key_Return);
        if (exportDialog->property("visible").toBool()) QMetaObject::invokeMethod(exportDialog, "accept");
        QTRY_VERIFY2(QFileInfo::exists(file), qPrintable(exportDialog->property("selectedFile").toUrl().toString()));
        QTRY_VERIFY(!exportDialog->property("visible").toBool());

        // Import a conversation: the file comes back as a new conversation.
        QObject* importDialog = window_->findChild<QObject*>(QStringLiteral("importDialog"));
        QVERIFY(importDialog);
        QMetaObject::invokeMethod(importDialog, "start");  // what the sidebar's import button does
        QTRY_VERIFY(importDialog->property("visible").toBool());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dialog-import")).isEmpty());
        const int before = storage->conversations().size();
        importDialog->setProperty("currentFolder", QUrl::fromLocalFile(dir_.path()));
        QQuickItem* entry = nullptr;
        QTRY_VERIFY((entry = findVisible(window_->contentItem(), [](QQuickItem* i) {
                         return i->objectName().startsWith(QLatin1String("fileDialogDelegate"))
                             && i->property("fileName").toString() == QLatin1String("round-trip.json");
                     })));
        QVERIFY(clickItem(window_, entry));
        QTRY_COMPARE(importDialog->property("selectedFile").toUrl(), QUrl::fromLocalFile(file));
        QMetaObject::invokeMethod(importDialog, "accept");
        QTRY_COMPARE(storage->conversations().size(), before + 1);
        const qint64 copy = chat->currentId();
        QVERIFY(copy != source);
        const auto original = storage->conversation(source), imported = storage->conversation(copy);
        QCOMPARE(imported->title, original->title);
        QCOMPARE(imported->settings.systemPrompt, original->settings.systemPrompt);
        QCOMPARE(imported->settings.minP, original->settings.minP);
        QCOMPARE(imported->settings.repeatPenalty, original->settings.repeatPenalty);
        const auto a = storage->messages(source), b = storage->messages(copy);
        QCOMPARE(b.size(), a.size());
        for (int i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].role, a[i].role);
            QCOMPARE(b[i].content, a[i].content);
            QCOMPARE(b[i].completionTokens, a[i].completionTokens);
        }
    }

    // A preset made from one conversation's settings starts another.
    void presetFromOneConversationStartsAnother() {
        ChatController* chat = app_->chat();
        AppSettings* settings = app_->settings();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        chat->newConversation();
        limitReply(64);
        QVariantMap s = chat->currentSettings();
        s["minP"] = 0.1;
        s["repeatPenalty"] = 1.2;
        s["temperature"] = 0.3;
        chat->setSettings(s);
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
        QQuickItem* name = findItem(window_, "presetNameField");
        QTRY_VERIFY(name->isVisible());
        name->forceActiveFocus();
        typeText(window_, QStringLiteral("Brief helper"));
        QVERIFY(clickItem(window_, findItem(window_, "savePresetButton")));
        QTRY_VERIFY(settings->presets()->contains(QStringLiteral("Brief helper")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("presets")).isEmpty());
        QCOMPARE(settings->presets()->preset(QStringLiteral("Brief helper")).value("repeatPenalty").toDouble(), 1.2);

        // The sidebar's preset menu: a new conversation with those settings
        // (the first has a title now, so it is not reused as an empty one).
        const qint64 first = chat->currentId();
        chat->rename(first, QStringLiteral("Preset source"));
        QVERIFY(clickItem(window_, findItem(window_, "newFromPresetButton")));
        QObject* menu = findItem(window_, "sidebar")->findChild<QObject*>(QStringLiteral("presetMenu"));
        QVERIFY(menu);
        QTRY_VERIFY(menu->property("opened").toBool());
        QQuickItem* item = nullptr;
        QTRY_VERIFY((item = findVisible(window_->contentItem(), [](QQuickItem* i) {
                         return QByteArray(i->metaObject()->className()).contains("MenuItem")
                             && i->property("text").toString() == QLatin1String("Brief helper");
                     })));
        QVERIFY(QMetaObject::invokeMethod(item, "triggered"));  // what a click on it emits
        QMetaObject::invokeMethod(menu, "close");              // and the click closes the menu
        QTRY_VERIFY(chat->currentId() != first);
        const QVariantMap got = chat->currentSettings();
        QCOMPARE(got.value("systemPrompt"), s.value("systemPrompt"));
        QCOMPARE(got.value("minP").toDouble(), 0.1);
        QCOMPARE(got.value("repeatPenalty").toDouble(), 1.2);
        QCOMPARE(got.value("temperature").toDouble(), 0.3);
        // The preset's sampling reaches a real reply.
        QVERIFY(chat->send(QStringLiteral("Say hello.")));
        QTRY_VERIFY_WITH_TIMEOUT(!chat->currentGenerating(), 300000);
        const auto messages = app_->storage()->messages(chat->currentId());
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[1].state, MessageState::Complete);
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));  // closes the panel again
        QTRY_VERIFY(!findItem(window_, "presetNameField")->isVisible());
    }

    // The theme switch in Settings turns the whole window dark, fields and
    // all; at 600 px the sidebar is a drawer.
    void darkThemeAndNarrowWindow() {
        AppSettings* settings = app_->settings();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("settings")));
        QQuickItem* combo = findItem(window_, "themeCombo");
        QTRY_VERIFY(combo->isVisible());
        combo->forceActiveFocus();
        while (settings->theme() != QStringLiteral("dark")) {  // system -> light -> dark, as arrow keys do
            const QString was = settings->theme();
            QTest::keyClick(window_, Qt::Key_Down);
            QTRY_VERIFY(settings->theme() != was);
        }
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dark-settings")).isEmpty());
        app_->chat()->select(app_->chat()->conversations()->idAt(app_->chat()->conversations()->count() - 1));
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dark")).isEmpty());

        settings->setTheme(QStringLiteral("light"));
        window_->resize(600, 820);
        QTRY_COMPARE(window_->width(), 600);
        QTRY_VERIFY(findItem(window_, "sidebarRail")->isVisible());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("narrow")).isEmpty());
        QVERIFY(clickItem(window_, findItem(window_, "showSidebarButton")));
        QObject* drawer = window_->findChild<QObject*>(QStringLiteral("sidebarDrawer"));
        QTRY_VERIFY(drawer->property("opened").toBool());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("narrow-drawer")).isEmpty());
        QTest::keyClick(window_, Qt::Key_Escape);
        QTRY_VERIFY(!drawer->property("visible").toBool());
        window_->resize(1360, 860);
        settings->setTheme(QStringLiteral("system"));
    }

    void versionsAndContinue() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        const qint64 id = chat->newConversation();
        chat->setSettings({{"systemPrompt", QString()}, {"maxTokens", 6}, {"seed", 7}, {"temperature", 0.7}});
        QVERIFY(chat->sendTo(id, QStringLiteral("Name three rivers of Europe and say one thing about each.")));
        QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 120000);
        const MessageRecord partial = app_->storage()->messages(id).last();
        QCOMPARE(partial.role, QStringLiteral("assistant"));
        if (partial.finishReason != u"length") QSKIP("SKIPPED: the model ended its reply within 6 tokens");
        QQuickItem* root = window_->contentItem();
        QTRY_VERIFY(findVisible(root, QStringLiteral("tokenLimitNotice")));
        QTest::mouseMove(window_, QPoint(window_->width() / 2, window_->height() / 2));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("continue")).isEmpty());

        QVERIFY(clickItem(window_, findVisible(root, QStringLiteral("continueButton"))));
        QTRY_VERIFY(chat->isGenerating(id));
        QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 120000);
        const MessageRecord continued = app_->storage()->messages(id).last();
        QCOMPARE(continued.id, partial.id);
        QVERIFY(continued.content.startsWith(partial.content));
        QVERIFY(continued.content.size() > partial.content.size());
        QVERIFY(continued.completionTokens > partial.completionTokens);
        qInfo().noquote() << "continued:" << partial.content << "->" << continued.content;

        // Regenerate: a second version; the switcher goes back to the first.
        QVERIFY(clickItem(window_, findVisible(root, QStringLiteral("regenerateButton"))));
        QTRY_VERIFY(chat->isGenerating(id));
        QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 120000);
        QCOMPARE(app_->storage()->messages(id).last().versionCount, 2);
        QTRY_VERIFY(findVisible(root, QStringLiteral("versionSwitcher")));
        QCOMPARE(findVisible(root, QStringLiteral("versionLabel"))->property("text").toString(), QStringLiteral("2/2"));
        QVERIFY(clickItem(window_, findVisible(root, QStringLiteral("previousVersionButton"))));
        QTRY_COMPARE(findVisible(root, QStringLiteral("versionLabel"))->property("text").toString(), QStringLiteral("1/2"));
        QCOMPARE(app_->storage()->messages(id).last().id, partial.id);
        QTest::mouseMove(window_, QPoint(window_->width() / 2, window_->height() - 200));  // no hover left on the switcher
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("versions")).isEmpty());

        // Delete the shown version (its branch with it), then Undo from the notice.
        QVERIFY(clickItem(window_, findVisible(root, QStringLiteral("deleteReplyButton"))));
        QTRY_COMPARE(app_->storage()->messages(id).last().versionCount, 1);
        QVERIFY(!app_->storage()->message(partial.id));
        QTRY_VERIFY(findVisible(root, QStringLiteral("undoButton")));
        QVERIFY(clickItem(window_, findVisible(root, QStringLiteral("undoButton"))));
        QTRY_VERIFY(app_->storage()->message(partial.id));
        QCOMPARE(app_->storage()->messages(id).last().id, partial.id);
        QCOMPARE(app_->storage()->messages(id).last().versionCount, 2);
    }

    void contextThatRunsOut() {
        // The same model with its context cut to 192 tokens: a few turns fill it.
        EngineHost* host = app_->engineHost();
        weir::EngineOptions options = host->engineOptions();
        options.maxContext = 192;
        host->setEngineOptions(options);
        host->load(host->modelPath());
        QTRY_VERIFY_WITH_TIMEOUT(host->state() == EngineHost::Ready && host->modelInfo().value("contextTokens").toInt() == 192,
                                 180000);
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        const qint64 id = chat->newConversation();
        chat->setSettings({{"systemPrompt", QStringLiteral("You are brief.")}, {"maxTokens", 16}, {"seed", 7},
                           {"contextPolicy", QStringLiteral("dropOldest")}});
        QCOMPARE(chat->contextTokens(), 192);
        const char* questions[] = {"What is a weir, and why do rivers have them in old mill towns?",
                                   "How does a fish ladder help salmon get past a weir on their way upstream?",
                                   "What is the difference between a weir and a dam, in a few words?",
                                   "Which is older, the water wheel or the windmill, and where were they first used?",
                                   "Name a famous weir on the river Thames and say what it is for."};
        for (const char* q : questions) {
            QVERIFY(chat->sendTo(id, QString::fromLatin1(q)));
            QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 120000);
            const MessageRecord reply = app_->storage()->messages(id).last();
            QVERIFY2(reply.state == MessageState::Complete, qPrintable(reply.error));
            QVERIFY(chat->contextUsed() <= 192);
            if (chat->messages()->contextStart() != 0) break;
        }
        QVERIFY2(chat->messages()->contextStart() != 0, "the oldest turns must have been dropped");
        QQuickItem* divider = nullptr;
        QTRY_VERIFY((divider = findVisible(window_->contentItem(), QStringLiteral("contextDivider"))));
        const QString usage = findItem(window_, "contextUsage")->property("text").toString();
        qInfo().noquote() << "context:" << usage;
        QVERIFY(usage.contains(QStringLiteral("192")));
        // The policy in the conversation settings, beside the divider.
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
        QQuickItem* policy = nullptr;
        QTRY_VERIFY((policy = findVisible(window_->contentItem(), QStringLiteral("contextPolicyBox"))));
        QCOMPARE(policy->property("currentIndex").toInt(), 2);  // drop the oldest turns
        QTest::mouseMove(window_, QPoint(window_->width() / 3, window_->height() / 2));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("context")).isEmpty());
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
    }

    void cleanupTestCase() {
        if (!app_) return;
        app_->chat()->stopAll();
        app_.reset();
    }
};

QTEST_MAIN(AppE2eTest)
#include "app_e2e_test.moc"
