// The whole main window on the fake engine, as a user drives it: it loads,
// Ctrl+N opens conversations, typing + Enter sends, two conversations stream
// at once and are stored, the pool monitor and the engine settings (with a
// floor warning) open. Screenshots go to $WEIR_SCREENSHOT_DIR/fake/ so the
// UI can be looked at without a model; the real-model run is tests/e2e.
#include <QAccessible>
#include <QFile>
#include <QFontInfo>
#include <QKeySequence>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQmlProperty>
#include <QQuickTextDocument>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include "AppDriver.h"
#include "AppContext.h"
#include "DesktopApp.h"
#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "monitor/PoolStatusModel.h"
#include "settings/AppSettings.h"
#include "storage/Storage.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

namespace {

// A reply with every block kind the chat draws: headings, a table, a quote,
// code spans, a code block with a line far wider than the window, and lines
// broken with single newlines.
const char* kMarkdownReply =
    "## Results\n"
    "Here are the numbers,\none per line as written.\n\n"
    "| Model | Size | Speed |\n|---|---:|---:|\n| gemma-3-270m | 253 MB | 120 tok/s |\n| smollm2-135m | 92 MB | 210 tok/s |\n\n"
    "> A quoted remark,\n> over two lines.\n\n"
    "Call `make_pair(a, b)` or run `weir-cli bench`.\n\n"
    "```python\n"
    "def answer(x):\n"
    "    return [x * 2 for x in range(100)]  # a comment that goes on and on, far past the right edge of any window,"
    " and then some more, because a line of code is never wrapped\n"
    "```\n"
    "- first\n- second\n";

QList<QQuickItem*> allItems(QQuickItem* root) {
    QList<QQuickItem*> out{root};
    for (QQuickItem* child : root->childItems()) out += allItems(child);
    return out;
}

// Delegates (list rows, loaded parts) are not QObject children of the
// window, so they are found in the item tree.
QQuickItem* findVisual(QQuickWindow* window, const char* name, bool mustBeVisible = true) {
    for (QQuickItem* item : allItems(window->contentItem()))
        if (item->objectName() == QLatin1String(name) && (!mustBeVisible || item->isVisible())) return item;
    return nullptr;
}

QString describe(QQuickItem* item) {
    QStringList chain;
    for (QQuickItem* it = item; it && chain.size() < 4; it = it->parentItem()) {
        const QString name = it->objectName();
        chain << (name.isEmpty() ? QString::fromLatin1(it->metaObject()->className()) : name);
    }
    return chain.join(QStringLiteral(" < "));
}

// The entry of an open Qt Quick file dialog that lists `fileName`.
QQuickItem* dialogEntry(QQuickWindow* window, const QString& fileName) {
    for (QQuickItem* item : allItems(window->contentItem()))
        if (item->isVisible() && item->objectName().startsWith(QLatin1String("fileDialogDelegate"))
            && item->property("fileName").toString() == fileName)
            return item;
    return nullptr;
}

// A visible button of an open dialog, by its label.
QQuickItem* dialogButton(QQuickWindow* window, const QString& label) {
    for (QQuickItem* item : allItems(window->contentItem()))
        if (item->isVisible() && item->inherits("QQuickAbstractButton") && item->property("text").toString() == label)
            return item;
    return nullptr;
}

QPoint centreOf(QQuickItem* item) { return item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint(); }

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;
    std::shared_ptr<FakeEngineConfig::Script> script_ = std::make_shared<FakeEngineConfig::Script>();

private slots:
    void initTestCase() {
        shots_ = QDir(qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath())).filePath(QStringLiteral("fake"));
        FakeEngineConfig config;
        config.tokenIntervalMs = 25;  // slow enough to see both conversations streaming
        config.script = script_;      // empty: the fake's default reply
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

        // Before: Apply reloaded at once and ended the running replies without a word.
        ChatController* chat = app_->chat();
        const qint64 conv = chat->newConversation();
        QVERIFY(chat->sendTo(conv, QStringLiteral("Tell me a long story about rivers")));
        QTRY_VERIFY(app_->engineHost()->activeRequests() > 0);
        QVERIFY(clickItem(window_, findItem(window_, "applyButton")));
        QObject* confirm = page->findChild<QObject*>(QStringLiteral("applyConfirmDialog"));  // a Popup, not an item
        QVERIFY(confirm);
        QTRY_VERIFY(confirm->property("opened").toBool());
        QVERIFY(findItem(window_, "applyConfirmText")->property("text").toString().contains(QStringLiteral("still being written")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("engine-settings-confirm")).isEmpty());
        QVERIFY(clickItem(window_, findItem(window_, "applyConfirmCancel")));
        QTRY_VERIFY(!confirm->property("visible").toBool());
        QCOMPARE(app_->engineHost()->state(), EngineHost::Ready);  // nothing reloaded
        QVERIFY(app_->engineHost()->activeRequests() > 0);          // the reply goes on
        chat->stopConversation(conv);
        QTRY_COMPARE(app_->engineHost()->activeRequests(), 0);
    }

    // The Device setting lists the CPU (and each GPU where there is one), and
    // pools that do not fit the chosen device's free memory are refused
    // before Apply, with the numbers and the largest full pool that fits.
    void engineSettingsDeviceAndMemory() {
        QVERIFY(clickItem(window_, findItem(window_, "navEngineSettings")));
        QQuickItem* page = findItem(window_, "engineSettingsPage");
        QTRY_VERIFY(page->isVisible());
        QQuickItem* box = findItem(window_, "deviceBox");
        QVERIFY(box && box->isEnabled());
        AppSettings* settings = app_->settings();
        QTRY_VERIFY(settings->devices().size() >= 2);
        QStringList ids;
        for (const QVariant& d : settings->devices()) ids << d.toMap().value("id").toString();
        QCOMPARE(ids.front(), QString());  // automatic first
        QVERIFY(ids.contains(QStringLiteral("cpu")));
        QObject* advisor = page->findChild<QObject*>(QStringLiteral("sizingAdvisor"));
        QVERIFY(advisor);
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("device")), Q_ARG(QVariant, QStringLiteral("cpu")));
        QTRY_VERIFY(advisor->property("deviceFreeBytes").toLongLong() > 0);
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("fullPoolTokens")), Q_ARG(QVariant, qint64(1) << 29));
        QTRY_VERIFY(!advisor->property("memoryProblem").toString().isEmpty());
        QVERIFY2(advisor->property("refusal").toString().contains(QStringLiteral("do not fit")),
                 qPrintable(advisor->property("refusal").toString()));
        QVERIFY(!findItem(window_, "applyButton")->isEnabled());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("engine-settings-memory")).isEmpty());
        // Taking the offered size clears the problem.
        const qint64 fitting = advisor->property("largestFittingFullPool").toLongLong();
        QVERIFY(fitting > 0);
        QVERIFY(clickItem(window_, findItem(window_, "useFittingPoolButton")));
        QTRY_VERIFY(advisor->property("memoryProblem").toString().isEmpty());
        QCOMPARE(advisor->property("effectiveFullTokens").toLongLong(), fitting);
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("fullPoolTokens")), Q_ARG(QVariant, 0));
        QMetaObject::invokeMethod(page, "setDraft", Q_ARG(QVariant, QStringLiteral("device")), Q_ARG(QVariant, QString()));
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
        // Which kernels the engine runs on this CPU, in words (AMX tiles where it has them).
        const QString kernels = app_->settings()->cpuKernels();
        QVERIFY(!kernels.isEmpty());
        QVERIFY2(findItem(window_, "cpuLine")->property("text").toString().contains(kernels), qPrintable(kernels));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("about")).isEmpty());

        // Issue 26: the theme line said "from the system palette" for a theme
        // chosen in the settings; Import showed an upload arrow.
        QQuickItem* theme = findItem(window_, "aboutTheme");
        QVERIFY(theme);
        app_->settings()->setTheme(QStringLiteral("dark"));
        QTRY_COMPARE(theme->property("text").toString(), QStringLiteral("dark (chosen in the settings)"));
        app_->settings()->setTheme(QStringLiteral("system"));
        QTRY_VERIFY(theme->property("text").toString().endsWith(QStringLiteral("(from the system palette)")));
        QCOMPARE(findItem(window_, "importButton")->property("iconName").toString(), QStringLiteral("import"));
    }

    void markdownRepliesLookRight() {
        Storage* storage = app_->storage();
        const qint64 id = storage->createConversation(QStringLiteral("Markdown"));
        MessageRecord user;
        user.conversationId = id;
        user.role = QStringLiteral("user");
        user.content = QStringLiteral("Show me the table");
        QVERIFY(storage->appendMessage(user));
        MessageRecord reply = user;
        reply.role = QStringLiteral("assistant");
        reply.content = QString::fromUtf8(kMarkdownReply);
        QVERIFY(storage->appendMessage(reply));
        app_->chat()->reload();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        app_->chat()->select(id);
        QTRY_VERIFY(findVisual(window_, "quoteBar"));

        // Code: the block's text and the code spans resolve to fixed-pitch faces.
        QQuickItem* codeBody = nullptr;
        QTRY_VERIFY((codeBody = findVisual(window_, "codeBody")));
        const QFont codeFont = codeBody->property("font").value<QFont>();
        QVERIFY2(QFontInfo(codeFont).fixedPitch(), qPrintable(codeFont.family()));
        QQuickItem* scroller = findVisual(window_, "codeScroller");
        QVERIFY(scroller->property("contentWidth").toReal() > scroller->width());  // scrolls, not wraps
        QCOMPARE(codeBody->property("lineCount").toInt(), 2);

        bool sawCodeSpan = false, sawTable = false;
        QList<QObject*> stylers;
        for (QQuickItem* item : allItems(window_->contentItem()))
            stylers += item->findChildren<QObject*>(QStringLiteral("markdownStyler"), Qt::FindDirectChildrenOnly);
        QVERIFY(stylers.size() >= 2);   // the reply's text parts and the quote's
        for (QObject* styler : stylers) {
            auto* quickDocument = styler->parent()->property("textDocument").value<QQuickTextDocument*>();
            QVERIFY(quickDocument);
            QTextDocument* document = quickDocument->textDocument();
            for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
                for (auto it = block.begin(); !it.atEnd(); ++it)
                    if (it.fragment().text() == QStringLiteral("make_pair(a, b)")) {
                        sawCodeSpan = true;
                        QVERIFY(QFontInfo(it.fragment().charFormat().font()).fixedPitch());
                    }
            for (QTextFrame* frame : document->rootFrame()->childFrames())
                if (auto* table = qobject_cast<QTextTable*>(frame)) {
                    sawTable = true;
                    QCOMPARE(table->format().border(), 1.0);
                    QCOMPARE(table->format().cellSpacing(), -1.0);  // neighbouring cells share one 1 px line
                }
            if (document->toPlainText().contains(QStringLiteral("Here are the numbers,")))
                QVERIFY(document->toPlainText().contains(QStringLiteral("numbers,\none per line")));
        }
        QVERIFY(sawCodeSpan);
        QVERIFY(sawTable);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("markdown")).isEmpty());
    }

    // Issue 26: zoom scaled menus, the user's bubble and code, but not the
    // reply's text (its HTML carried the application font's size).
    void zoomScalesReplyText() {
        QTRY_VERIFY(findVisual(window_, "quoteBar"));  // the Markdown conversation of the test before
        auto replyTextPx = [&] {
            for (QQuickItem* item : allItems(window_->contentItem())) {
                if (!item->isVisible() || !item->findChild<QObject*>(QStringLiteral("markdownStyler"), Qt::FindDirectChildrenOnly)) continue;
                QTextDocument* document = item->property("textDocument").value<QQuickTextDocument*>()->textDocument();
                for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
                    for (auto it = block.begin(); !it.atEnd(); ++it)
                        if (it.fragment().text().startsWith(QStringLiteral("Here are the numbers")))
                            return QFontInfo(it.fragment().charFormat().font()).pixelSize();
            }
            return 0;
        };
        auto userTextPx = [&] {
            for (QQuickItem* item : allItems(window_->contentItem()))
                if (item->isVisible() && item->property("text").toString() == QStringLiteral("Show me the table"))
                    return QFontInfo(item->property("font").value<QFont>()).pixelSize();
            return 0;
        };
        const int replyBefore = replyTextPx(), userBefore = userTextPx();
        QVERIFY(replyBefore > 0 && userBefore > 0);
        QCOMPARE(replyBefore, userBefore);  // one body size for both sides
        app_->settings()->setZoom(1.5);
        QTRY_VERIFY(userTextPx() > userBefore);
        QTRY_COMPARE(replyTextPx(), userTextPx());
        QVERIFY2(replyTextPx() >= int(replyBefore * 1.4), qPrintable(QString::number(replyTextPx())));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("markdown-zoom-150")).isEmpty());
        app_->settings()->setZoom(1.0);
        QTRY_COMPARE(replyTextPx(), replyBefore);
    }

    // A reply that quotes its own code: the fake drafts from earlier words
    // (as prompt lookup does), and the stats line says how many it kept, with
    // a tooltip that explains them. A reply without drafts shows none.
    // Issue 26: at 600 px the reply's text and code ran past the right edge
    // (the figures line, which could not shrink, widened the whole column).
    void narrowWindowKeepsRepliesInside() {
        Storage* storage = app_->storage();
        const qint64 id = storage->createConversation(QStringLiteral("Narrow"));
        MessageRecord user;
        user.conversationId = id;
        user.role = QStringLiteral("user");
        user.content = QStringLiteral("Show me the code");
        QVERIFY(storage->appendMessage(user));
        MessageRecord reply = user;
        reply.role = QStringLiteral("assistant");
        reply.content = QString::fromUtf8(kMarkdownReply);
        reply.promptTokens = 162;
        reply.cachedTokens = 96;
        reply.completionTokens = 412;
        reply.tokensPerSecond = 250;
        reply.timeToFirstTokenMs = 40;
        reply.draftTokens = 120;
        reply.acceptedDraftTokens = 80;
        QVERIFY(storage->appendMessage(reply));
        app_->chat()->reload();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        app_->chat()->select(id);
        window_->resize(600, 800);
        QTRY_COMPARE(window_->width(), 600);
        auto wide = qScopeGuard([this] { window_->resize(1360, 860); });  // also when a check fails
        QTRY_VERIFY(findVisual(window_, "codeScroller") && findVisual(window_, "replyStats"));
        QTest::qWait(50);  // let the layouts settle
        const qreal edge = window_->width() + 0.5;
        QStringList outside;
        auto check = [&](QQuickItem* item, const QString& what) {
            const qreal right = item->mapToScene(QPointF(item->width(), 0)).x();
            if (right > edge) outside << QStringLiteral("%1 ends at %2").arg(what).arg(right);
        };
        for (const char* name : {"codeScroller", "copyCodeButton", "replyStats", "draftsLabel", "replyFooter"}) {
            QQuickItem* item = findVisual(window_, name);
            QVERIFY2(item, name);
            check(item, QString::fromLatin1(name));
        }
        for (QQuickItem* item : allItems(window_->contentItem()))
            if (item->isVisible() && item->findChild<QObject*>(QStringLiteral("markdownStyler"), Qt::FindDirectChildrenOnly))
                check(item, QStringLiteral("reply text"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("narrow-reply")).isEmpty());
        QVERIFY2(outside.isEmpty(), qPrintable(outside.join(QStringLiteral("; "))));
        // The code scrolls sideways inside the column rather than wrapping.
        QQuickItem* scroller = findVisual(window_, "codeScroller");
        QVERIFY(scroller->property("contentWidth").toReal() > scroller->width());
        wide.dismiss();
        window_->resize(1360, 860);
        QTRY_COMPARE(window_->width(), 1360);
    }

    void speculativeDraftsShowInTheStatsLine() {
        ChatController* chat = app_->chat();
        {
            std::lock_guard lock(script_->mutex);
            script_->replies.push_back(
                "Here is the function with the bug fixed:\n\n```python\ndef total(items):\n    result = 0\n"
                "    for item in items:\n        result += item.price * item.count\n    return result\n```\n\n"
                "The loop reads as before: for item in items: result += item.price * item.count, once per item.");
        }
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        const qint64 id = chat->newConversation();
        QSignalSpy ended(chat, &ChatController::replyEnded);
        QVERIFY(chat->send(QStringLiteral("Fix the total function")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        const MessageRecord reply = app_->storage()->messages(id).at(1);
        QVERIFY(reply.draftTokens > 0);
        QVERIFY(reply.acceptedDraftTokens > 0);

        QQuickItem* label = nullptr;
        QTRY_VERIFY((label = findVisual(window_, "draftsLabel")));
        const QString expected = QStringLiteral("drafts %1/%2 kept (%3%)")
                                     .arg(reply.acceptedDraftTokens).arg(reply.draftTokens)
                                     .arg(qRound(100.0 * reply.acceptedDraftTokens / reply.draftTokens));
        QTRY_VERIFY2(label->property("text").toString().endsWith(expected), qPrintable(label->property("text").toString()));

        // Hovering it explains what the numbers are.
        const QPointF centre = label->mapToScene(QPointF(label->width() / 2, label->height() / 2));
        QTest::mouseMove(window_, centre.toPoint());
        QObject* tip = label->findChild<QObject*>(QStringLiteral("draftsTip"));
        QVERIFY(tip);
        QTRY_VERIFY(tip->property("opened").toBool());
        QVERIFY(tip->property("text").toString().startsWith(QStringLiteral("Speculative decoding:")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("speculative-drafts")).isEmpty());
        QTest::mouseMove(window_, QPoint(5, 5));

        // A stored reply from before drafts were kept (0) shows no count.
        MessageRecord old = reply;
        old.id = 0;
        old.parentId = 0;
        old.draftTokens = old.acceptedDraftTokens = 0;
        const qint64 oldConversation = app_->storage()->createConversation(QStringLiteral("Before drafts"));
        old.conversationId = oldConversation;
        QVERIFY(app_->storage()->appendMessage(old));
        chat->reload();
        chat->select(oldConversation);
        QTRY_VERIFY(findVisual(window_, "regenerateButton"));
        QVERIFY(!findVisual(window_, "draftsLabel"));
    }

    // A reply is labelled with the model that wrote it, not the one loaded
    // now; one stored before replies named their model says "Assistant".
    void aReplyIsLabelledWithItsModel() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        auto conversationWith = [&](const QString& title, const QString& model) {
            const qint64 conv = app_->storage()->createConversation(title);
            MessageRecord m;
            m.conversationId = conv;
            m.role = QStringLiteral("user");
            m.content = QStringLiteral("Hello");
            if (!app_->storage()->appendMessage(m)) return qint64(0);
            m.role = QStringLiteral("assistant");
            m.content = QStringLiteral("Hi there.");
            m.model = model;
            return app_->storage()->appendMessage(m) ? conv : qint64(0);
        };
        auto label = [&] {
            QQuickItem* item = findVisual(window_, "replyModelName");
            return item ? item->property("text").toString() : QString();
        };
        const qint64 other = conversationWith(QStringLiteral("Written by SmolLM2"), QStringLiteral("SmolLM2 135M Instruct"));
        const qint64 old = conversationWith(QStringLiteral("Before replies named their model"), QString());
        QVERIFY(other && old);
        QCOMPARE(app_->engineHost()->modelInfo().value(QStringLiteral("name")).toString(), QStringLiteral("Fake Gemma"));
        chat->reload();
        chat->select(other);
        QTRY_COMPARE(label(), QStringLiteral("SmolLM2 135M Instruct"));
        chat->select(old);
        QTRY_COMPARE(label(), QStringLiteral("Assistant"));
    }

    // Unsent text stays with its conversation: another conversation opens
    // with its own (empty) composer, Enter there sends nothing, and the text
    // is back when the first one opens again, also from the settings file.
    void draftsStayWithTheirConversation() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        const qint64 a = chat->newConversation();
        QQuickItem* input = findItem(window_, "composerInput");
        input->forceActiveFocus();
        typeText(window_, QStringLiteral("draft for a"));
        const int conversations = chat->conversations()->count();

        QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);  // a has a draft: a new one
        QTRY_VERIFY(chat->currentId() != a);
        const qint64 b = chat->currentId();
        QCOMPARE(chat->conversations()->count(), conversations + 1);
        QCOMPARE(input->property("text").toString(), QString());
        input->forceActiveFocus();
        QTest::keyClick(window_, Qt::Key_Return);
        QVERIFY(!chat->isGenerating(b));
        QVERIFY(app_->storage()->messages(a).isEmpty());
        QVERIFY(app_->storage()->messages(b).isEmpty());

        QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);  // b is empty: reused
        QCOMPARE(chat->currentId(), b);
        QCOMPARE(chat->conversations()->count(), conversations + 1);

        chat->select(a);
        QCOMPARE(input->property("text").toString(), QStringLiteral("draft for a"));
        app_->settings()->sync();
        AppSettings reread(app_->dataDir(), QString());
        QCOMPARE(reread.draft(a), QStringLiteral("draft for a"));
        QVERIFY(reread.draft(b).isEmpty());

        // Sending clears the draft.
        chat->select(a);
        input->forceActiveFocus();
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_VERIFY(!app_->storage()->messages(a).isEmpty());
        QCOMPARE(input->property("text").toString(), QString());
        QVERIFY(app_->settings()->draft(a).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(a), 30000);
    }

    // The system prompt is saved as it is typed: switching conversation right
    // after typing keeps it, with no click elsewhere. Esc in the box does not
    // stop the reply being written.
    void systemPromptIsSavedAsTyped() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        const qint64 a = chat->newConversation();
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
        QQuickItem* prompt = findItem(window_, "systemPromptInput");
        QTRY_VERIFY(prompt->isVisible());
        prompt->forceActiveFocus();
        typeText(window_, QStringLiteral("Be brief."));
        QVERIFY(prompt->hasActiveFocus());
        chat->select(chat->conversations()->idAt(0) == a ? chat->conversations()->idAt(1) : chat->conversations()->idAt(0));
        QCOMPARE(app_->storage()->conversation(a)->settings.systemPrompt, QStringLiteral("Be brief."));
        chat->select(a);
        QCOMPARE(prompt->property("text").toString(), QStringLiteral("Be brief."));

        // Typed and left alone, focus still in the box: saved all the same.
        prompt->forceActiveFocus();
        typeText(window_, QStringLiteral(" Really."));
        QTRY_COMPARE(app_->storage()->conversation(a)->settings.systemPrompt, QStringLiteral("Be brief. Really."));
        QVERIFY(prompt->hasActiveFocus());

        QObject scope;
        QString endedAs;
        connect(chat, &ChatController::replyEnded, &scope, [&](qint64, qint64, const QString& state) { endedAs = state; });
        QVERIFY(chat->send(QStringLiteral("a reply Esc must not stop")));
        QVERIFY(chat->currentGenerating());
        prompt->forceActiveFocus();
        QTest::keyClick(window_, Qt::Key_Escape);
        QVERIFY(!prompt->hasActiveFocus());  // Esc leaves the box
        QTRY_VERIFY_WITH_TIMEOUT(!endedAs.isEmpty(), 30000);
        QCOMPARE(endedAs, QStringLiteral("complete"));
        QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));  // close the panel
    }

    void keyboardUse() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        // Tab leaves the composer, Shift+Tab comes back; no tab is typed.
        QQuickItem* input = findItem(window_, "composerInput");
        input->forceActiveFocus();
        typeText(window_, QStringLiteral("abc"));
        QTest::keyClick(window_, Qt::Key_Tab);
        QVERIFY(!input->hasActiveFocus());
        QCOMPARE(input->property("text").toString(), QStringLiteral("abc"));
        QTest::keyClick(window_, Qt::Key_Backtab, Qt::ShiftModifier);
        QVERIFY(input->hasActiveFocus());
        input->setProperty("text", QString());

        // Ctrl+Enter submits an edit.
        qint64 id = 0;
        for (int row = 0; row < chat->conversations()->count() && !id; ++row)
            if (app_->storage()->messages(chat->conversations()->idAt(row)).size() == 2) id = chat->conversations()->idAt(row);
        QVERIFY(id);
        chat->select(id);
        QQuickItem* edit = nullptr;
        QTRY_VERIFY((edit = findVisual(window_, "editButton")));
        QVERIFY(clickItem(window_, edit));
        QQuickItem* area = nullptr;
        QTRY_VERIFY((area = findVisual(window_, "editArea")));
        QVERIFY(area->hasActiveFocus());
        area->setProperty("text", QStringLiteral("edited with the keyboard"));
        QTest::keyClick(window_, Qt::Key_Return, Qt::ControlModifier);
        QTRY_COMPARE(app_->storage()->messages(id).first().content, QStringLiteral("edited with the keyboard"));
        QTRY_VERIFY_WITH_TIMEOUT(!chat->isGenerating(id), 30000);
    }

    // Issue 26: Ctrl+Q was bound twice (StandardKey.Quit is Ctrl+Q on Linux
    // desktops) and so did nothing there. No shortcut may list a platform's
    // StandardKey beside spelled-out keys, nor share a key with another.
    void everyShortcutKeyIsBoundOnce() {
        QStringList problems;
        QHash<QString, QString> owner;
        for (QObject* o : window_->findChildren<QObject*>()) {
            if (qstrcmp(o->metaObject()->className(), "QQuickShortcut") != 0) continue;
            QVariantList sequences = o->property("sequences").toList();
            const QVariant single = o->property("sequence");
            if (sequences.isEmpty() && single.isValid()) sequences << single;
            bool standard = false, spelled = false;
            for (const QVariant& v : sequences) {
                if (v.typeId() == QMetaType::QString) spelled = true;
                else standard = true;
            }
            const QString name = o->objectName().isEmpty() ? sequences.value(0).toString() : o->objectName();
            if (standard && spelled) problems << name + QStringLiteral(": a StandardKey beside spelled-out keys");
            QStringList keys;  // this shortcut's keys, as this platform resolves them
            for (const QVariant& v : sequences) {
                if (v.typeId() == QMetaType::QString) keys << QKeySequence(v.toString()).toString(QKeySequence::PortableText);
                else
                    for (const QKeySequence& k : QKeySequence::keyBindings(QKeySequence::StandardKey(v.toInt())))
                        keys << k.toString(QKeySequence::PortableText);
            }
            for (const QString& key : keys) {
                if (owner.contains(key) || keys.count(key) > 1) problems << key + QStringLiteral(" is bound twice (") + name + u')';
                owner.insert(key, name);
            }
            // Offscreen, StandardKey.Quit resolves to no key (its keyboard
            // scheme is Windows'), so the old [StandardKey.Quit, "Ctrl+Q"]
            // read back as one key here: check that Ctrl+Q is declared alone.
            if (keys.contains(QStringLiteral("Ctrl+Q")) && o->property("sequence").toString() != QStringLiteral("Ctrl+Q"))
                problems << QStringLiteral("Ctrl+Q is not declared as the quit shortcut's one key");
        }
        QVERIFY(owner.contains(QStringLiteral("Ctrl+Q")));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
    }

    // Issue 26: Tab reaches every conversation row and the Model, Tools and
    // About pages; Return opens a focused row, page or chip; search results
    // are rows like the others.
    void keyboardReachesRowsPagesAndChips() {
        ChatController* chat = app_->chat();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QVERIFY(chat->conversations()->count() >= 3);
        QQuickItem* search = findItem(window_, "searchField");
        search->forceActiveFocus();
        QStringList chain;
        QList<QQuickItem*> rows, seen;
        for (int i = 0; i < 120; ++i) {  // once round the window
            QTest::keyClick(window_, Qt::Key_Tab);
            QQuickItem* focused = window_->activeFocusItem();
            if (!focused || seen.contains(focused)) break;
            seen << focused;
            chain << describe(focused);
            if (focused->objectName() == QLatin1String("conversationRow")) rows << focused;
        }
        const QString where = chain.join(QStringLiteral("\n  "));
        for (const char* page : {"navModel", "navTools", "navAbout", "navPoolMonitor", "modelChip", "endpointChip"})
            QVERIFY2(chain.join(u'|').contains(QString::fromLatin1(page)), qPrintable(QString::fromLatin1(page) + QStringLiteral(" not reached:\n  ") + where));
        QVERIFY2(rows.size() >= 3, qPrintable(QStringLiteral("conversation rows reached: %1\n  ").arg(rows.size()) + where));

        // Return on a row that is not the open conversation opens it.
        const qint64 open = chat->currentId();
        QQuickItem* other = nullptr;
        for (QQuickItem* row : rows)
            if (qint64(row->property("conversationId").toReal()) != open) other = row;
        QVERIFY(other);
        other->forceActiveFocus(Qt::TabFocusReason);
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_COMPARE(chat->currentId(), qint64(other->property("conversationId").toReal()));

        // Return on a page and on a chip.
        findItem(window_, "navAbout")->forceActiveFocus(Qt::TabFocusReason);
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_COMPARE(window_->property("page").toString(), QStringLiteral("about"));
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QQuickItem* modelChip = nullptr;
        QTRY_VERIFY((modelChip = findVisual(window_, "modelChip")));
        modelChip->forceActiveFocus(Qt::TabFocusReason);
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_COMPARE(window_->property("page").toString(), QStringLiteral("model"));
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QTRY_VERIFY(findItem(window_, "composerInput")->hasActiveFocus());  // the chat page focuses it, later

        // A search: Tab from the field goes to the results; Return opens one.
        QTest::qWait(100);  // the chat page's deferred focus on the composer
        search->forceActiveFocus();
        const int all = chat->conversations()->count();
        typeText(window_, QStringLiteral("Markdown"));
        QVERIFY2(search->hasActiveFocus(), qPrintable(describe(window_->activeFocusItem())));
        QTRY_VERIFY(chat->conversations()->count() >= 1 && chat->conversations()->count() < all);
        QVERIFY(search->hasActiveFocus());
        QTest::keyClick(window_, Qt::Key_Tab);
        QQuickItem* result = window_->activeFocusItem();
        QVERIFY2(result && result->objectName() == QLatin1String("conversationRow"), qPrintable(result ? describe(result) : QStringLiteral("nothing")));
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_COMPARE(chat->currentId(), qint64(result->property("conversationId").toReal()));
        search->forceActiveFocus();
        QTest::keyClick(window_, Qt::Key_Escape);
        QTRY_COMPARE(chat->conversations()->count(), all);
    }

    // Every control a screen reader can reach says what it is, on every page.
    void everyControlHasAnAccessibleName() {
        QAccessible::setActive(true);  // controls name themselves from their text only then
        QStringList unnamed;
        const QList<QAccessible::Role> controls{QAccessible::Button, QAccessible::CheckBox, QAccessible::RadioButton,
                                                QAccessible::EditableText, QAccessible::Slider, QAccessible::SpinBox,
                                                QAccessible::ComboBox, QAccessible::PageTab, QAccessible::Link};
        app_->chat()->select(app_->chat()->conversations()->idAt(0));
        for (const char* page : {"chat", "monitor", "settings", "model", "about", "tools"}) {
            QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QString::fromLatin1(page)));
            QTest::qWait(50);
            if (QByteArray(page) == "chat") QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
            for (QQuickItem* item : allItems(window_->contentItem())) {
                if (!item->isVisible() || !item->isEnabled()) continue;
                QAccessibleInterface* iface = QAccessible::queryAccessibleInterface(item);
                if (!iface || !controls.contains(iface->role())) continue;
                if (iface->role() == QAccessible::EditableText && item->property("readOnly").toBool()) continue;
                // Qt gives a password field no name (it would often be its text): its
                // Accessible.description says what it is.
                const bool password = iface->state().passwordEdit;
                const QString label = password ? QQmlProperty(item, QStringLiteral("Accessible.description"), qmlContext(item)).read().toString()
                                               : iface->text(QAccessible::Name);
                if (label.trimmed().isEmpty())
                    unnamed << QStringLiteral("%1: %2").arg(QString::fromLatin1(page), describe(item));
            }
            if (QByteArray(page) == "chat") QVERIFY(clickItem(window_, findItem(window_, "conversationSettingsButton")));
        }
        unnamed.removeDuplicates();
        QVERIFY2(unnamed.isEmpty(), qPrintable(QStringLiteral("controls without Accessible.name:\n  ") + unnamed.join(QStringLiteral("\n  "))));
    }

    // The theme switch themes the controls Fusion draws (not only our own
    // rectangles), zoom scales the text and says so, Ctrl+B folds the sidebar,
    // and at 600 px the sidebar is a drawer over the page.
    void themeZoomAndNarrowLayout() {
        AppSettings* settings = app_->settings();
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("settings")));
        QQuickItem* threads = findItem(window_, "threadsField");  // a plain Fusion SpinBox
        QTRY_VERIFY(threads && threads->isVisible());
        auto fieldLightness = [&] {
            const QImage shot = window_->grabWindow();
            const QPointF p = threads->mapToScene(QPointF(threads->width() * 0.5, threads->height() * 0.25));
            return QColor(shot.pixel(int(p.x() * shot.devicePixelRatio()), int(p.y() * shot.devicePixelRatio()))).lightnessF();
        };
        settings->setTheme(QStringLiteral("light"));
        QTRY_VERIFY2(fieldLightness() > 0.8, "a light theme has light text fields");
        QQuickItem* combo = findItem(window_, "themeCombo");
        QVERIFY(combo);
        QCOMPARE(combo->property("currentIndex").toInt(), 1);
        settings->setTheme(QStringLiteral("dark"));
        QTRY_VERIFY2(fieldLightness() < 0.3, "form fields must not stay white in the dark theme");
        QCOMPARE(combo->property("currentIndex").toInt(), 2);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("settings-dark")).isEmpty());

        // Zoom: Ctrl+= / Ctrl+- / Ctrl+0, kept in the settings, shown in a toast.
        QQuickItem* title = findItem(window_, "chatTitle");
        const qreal before = title->property("font").value<QFont>().pixelSize();
        QTest::keyClick(window_, Qt::Key_Equal, Qt::ControlModifier);
        QTRY_COMPARE(settings->zoom(), 1.1);
        QVERIFY(findItem(window_, "toast")->property("message").toString().contains(QStringLiteral("110%")));
        QVERIFY(title->property("font").value<QFont>().pixelSize() > before);
        QTest::keyClick(window_, Qt::Key_Minus, Qt::ControlModifier);
        QTest::keyClick(window_, Qt::Key_Minus, Qt::ControlModifier);
        QTRY_COMPARE(settings->zoom(), 0.9);
        QVERIFY(title->property("font").value<QFont>().pixelSize() < before);
        QTest::keyClick(window_, Qt::Key_0, Qt::ControlModifier);
        QTRY_COMPARE(settings->zoom(), 1.0);
        QCOMPARE(title->property("font").value<QFont>().pixelSize(), before);

        // Ctrl+B folds the sidebar into a rail and back.
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
        QQuickItem* search = findItem(window_, "searchField");
        QVERIFY(search->isVisible());
        QTest::keyClick(window_, Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(settings->sidebarCollapsed());
        QTRY_VERIFY(!search->isVisible());
        QVERIFY(findItem(window_, "sidebarRail")->isVisible());
        QVERIFY(clickItem(window_, findItem(window_, "showSidebarButton")));
        QTRY_VERIFY(!settings->sidebarCollapsed());
        QTRY_VERIFY(search->isVisible());

        // 600 px: the window allows it, the sidebar becomes a drawer.
        QVERIFY(window_->minimumWidth() <= 600);
        window_->resize(600, 800);
        QTRY_COMPARE(window_->width(), 600);
        QTRY_VERIFY(findItem(window_, "sidebarRail")->isVisible());
        QTRY_VERIFY(!search->isVisible());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("narrow")).isEmpty());
        QObject* drawer = window_->findChild<QObject*>(QStringLiteral("sidebarDrawer"));
        QVERIFY(drawer);
        QTest::keyClick(window_, Qt::Key_B, Qt::ControlModifier);
        QTRY_VERIFY(drawer->property("opened").toBool());
        QTRY_VERIFY(search->isVisible());
        QVERIFY(!settings->sidebarCollapsed());  // the drawer does not change the wide layout's choice
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("narrow-drawer")).isEmpty());
        QTest::keyClick(window_, Qt::Key_Escape);
        QTRY_VERIFY(!drawer->property("visible").toBool());
        window_->resize(1360, 860);
        QTRY_VERIFY(search->isVisible());
        QVERIFY(!findItem(window_, "sidebarRail")->isVisible());
        settings->setTheme(QStringLiteral("system"));
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

    // The file dialogs as a user drives Qt Quick's own dialog (no native one
    // offscreen): Export opens on a folder that exists; after double-clicking
    // into a folder the typed name is what gets saved, and Enter saves it;
    // Import opens the highlighted file without a click on it.
    void fileDialogFlows() {
        ChatController* chat = app_->chat();
        const qint64 id = chat->conversations()->idAt(0);
        QVERIFY(id > 0);
        QTemporaryDir folder;
        QVERIFY(QDir(folder.path()).mkpath(QStringLiteral("notes")));

        QQuickItem* sidebar = findItem(window_, "sidebar");
        QObject* exportDialog = window_->findChild<QObject*>(QStringLiteral("exportDialog"));
        QVERIFY(sidebar && exportDialog);
        // A remembered folder that is gone: the dialog opens somewhere that exists.
        exportDialog->setProperty("lastFolder", folder.filePath(QStringLiteral("gone")));
        QMetaObject::invokeMethod(sidebar, "exportConversation", Q_ARG(QVariant, double(id)), Q_ARG(QVariant, QStringLiteral("markdown")));
        QTRY_VERIFY(exportDialog->property("visible").toBool());
        QVERIFY2(QFileInfo(exportDialog->property("currentFolder").toUrl().toLocalFile()).isDir(),
                 qPrintable(exportDialog->property("currentFolder").toUrl().toString()));
        QMetaObject::invokeMethod(exportDialog, "reject");
        QTRY_VERIFY(!exportDialog->property("visible").toBool());

        exportDialog->setProperty("lastFolder", folder.path());
        QMetaObject::invokeMethod(sidebar, "exportConversation", Q_ARG(QVariant, double(id)), Q_ARG(QVariant, QStringLiteral("markdown")));
        QTRY_VERIFY(exportDialog->property("visible").toBool());
        QCOMPARE(exportDialog->property("currentFolder").toUrl().toLocalFile(), folder.path());
        QQuickItem* notes = nullptr;
        QTRY_VERIFY((notes = dialogEntry(window_, QStringLiteral("notes"))));
        QTest::mouseDClick(window_, Qt::LeftButton, Qt::NoModifier, centreOf(notes));
        QTRY_COMPARE(exportDialog->property("currentFolder").toUrl().toLocalFile(), folder.filePath(QStringLiteral("notes")));
        QQuickItem* name = findVisual(window_, "fileNameTextField");
        QVERIFY(name);
        QTest::mouseClick(window_, Qt::LeftButton, Qt::NoModifier, centreOf(name));
        QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);
        typeText(window_, QStringLiteral("typed.md"));
        const QString typed = folder.filePath(QStringLiteral("notes/typed.md"));
        QTRY_COMPARE(exportDialog->property("selectedFile").toUrl(), QUrl::fromLocalFile(typed));
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_VERIFY2(QFileInfo::exists(typed), qPrintable(exportDialog->property("selectedFile").toUrl().toString()));
        QTRY_VERIFY(!exportDialog->property("visible").toBool());
        QVERIFY(!QFileInfo::exists(folder.filePath(QStringLiteral("notes/") + chat->suggestedFileName(id, QStringLiteral("markdown")))));

        // Import: the only file in the folder is highlighted; Import takes it.
        QTemporaryDir exports;
        const QString json = exports.filePath(QStringLiteral("conversation.json"));
        QVERIFY(chat->exportConversation(id, QUrl::fromLocalFile(json), QStringLiteral("json")));
        QObject* importDialog = window_->findChild<QObject*>(QStringLiteral("importDialog"));
        QVERIFY(importDialog);
        QMetaObject::invokeMethod(importDialog, "start");
        QTRY_VERIFY(importDialog->property("visible").toBool());
        QVERIFY(QFileInfo(importDialog->property("currentFolder").toUrl().toLocalFile()).isDir());
        importDialog->setProperty("currentFolder", QUrl::fromLocalFile(exports.path()));
        QTRY_VERIFY(dialogEntry(window_, QStringLiteral("conversation.json")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("dialog-import-highlighted")).isEmpty());
        QQuickItem* importButton = dialogButton(window_, QStringLiteral("Import"));
        QVERIFY(importButton);
        QTRY_VERIFY2(importButton->isEnabled(), "the highlighted file can be imported");
        const int before = chat->conversations()->count();
        QVERIFY(clickItem(window_, importButton));
        QTRY_COMPARE(chat->conversations()->count(), before + 1);
        QTRY_VERIFY(!importDialog->property("visible").toBool());
    }

    // Issue 26: the pool monitor redrew four times a second with nothing
    // changing: for a minute after any change the chart scrolled on every
    // snapshot. A reply has just run (its pages came and went in the chart's
    // minute); once it has ended, snapshots keep coming and nothing is drawn.
    void idlePoolMonitorDoesNotRedraw() {
        ChatController* chat = app_->chat();
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->activeRequests() == 0, 60000);
        const qint64 id = app_->storage()->createConversation(QStringLiteral("Pools"));
        chat->reload();
        QSignalSpy ended(chat, &ChatController::replyEnded);
        QVERIFY(chat->sendTo(id, QStringLiteral("Fill the pools a little")));
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("monitor")));
        QTRY_VERIFY(findItem(window_, "poolMonitorPage")->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->activeRequests() == 0, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!findItem(window_, "toast")->isVisible(), 30000);
        QSignalSpy snapshots(app_->engineHost(), &EngineHost::statusUpdated);
        QTRY_VERIFY(snapshots.count() >= 2);  // the first one after the reply is drawn
        QTest::qWait(50);
        int frames = 0;
        QObject scope;
        connect(window_, &QQuickWindow::afterFrameEnd, &scope, [&] { ++frames; }, Qt::DirectConnection);
        const int seen = snapshots.count();
        QTRY_VERIFY_WITH_TIMEOUT(snapshots.count() >= seen + 8, 30000);
        QVERIFY2(frames == 0, qPrintable(QStringLiteral("%1 frames drawn over %2 unchanged snapshots")
                                           .arg(frames).arg(snapshots.count() - seen)));
    }

    // Issue 26: "Apply and reload", disabled, looked enabled in the dark
    // theme (a grey fill with white bold text). Disabled, it is an outline:
    // inside it is the page's own colour, where enabled it is the accent.
    void disabledApplyLooksDisabledInTheDark() {
        QObject* context = app_->context();
        context->setProperty("themeOverride", QStringLiteral("dark"));
        auto lightAgain = qScopeGuard([context] { context->setProperty("themeOverride", QString()); });
        window_->resize(1360, 860);
        QTRY_COMPARE(window_->width(), 1360);
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("settings")));
        QQuickItem* apply = findItem(window_, "applyButton");
        QTRY_VERIFY(apply && apply->isVisible());
        QQuickItem* page = findItem(window_, "engineSettingsPage");
        const QVariant saved = page->property("saved");
        // Where the fill is sampled: inside the button's left edge, and just beside it.
        auto distance = [](QColor a, QColor b) {
            return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue());
        };
        auto sample = [&](QColor& inside, QColor& beside) {
            QTest::qWait(50);  // let the colours settle
            const QImage shot = window_->grabWindow();
            const qreal dpr = shot.devicePixelRatio();
            auto colourAt = [&](qreal x, qreal y) {
                const QPoint p = (apply->mapToScene(QPointF(x, y)) * dpr).toPoint();
                return shot.rect().contains(p) ? QColor(shot.pixel(p)) : QColor();
            };
            inside = colourAt(4, apply->height() / 2);
            beside = colourAt(-6, apply->height() / 2);
            return inside.isValid() && beside.isValid();
        };
        QColor enabledInside, enabledBeside, inside, beside;
        QVariantMap changed = saved.toMap();
        changed.insert(QStringLiteral("threads"), changed.value(QStringLiteral("threads")).toInt() + 1);
        page->setProperty("draft", changed);  // something to apply: enabled
        QTRY_VERIFY(apply->isEnabled());
        QVERIFY2(sample(enabledInside, enabledBeside), "the button is outside the window");
        QVERIFY2(distance(enabledInside, enabledBeside) > 60, qPrintable(QStringLiteral("enabled: %1 inside, %2 beside")
                                                                         .arg(enabledInside.name(), enabledBeside.name())));
        page->setProperty("draft", saved);  // nothing to apply: disabled
        QTRY_VERIFY(!apply->isEnabled());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("apply-disabled-dark")).isEmpty());
        QVERIFY2(sample(inside, beside), "the button is outside the window");
        QVERIFY2(distance(inside, beside) < 12, qPrintable(QStringLiteral("a disabled primary button is filled: %1 inside, "
                                                                          "%2 beside (enabled: %3)")
                                                           .arg(inside.name(), beside.name(), enabledInside.name())));
    }

    // Issue 26: a GGUF file that cannot load stayed in the model list (and,
    // as the last model, was tried at every start). Remove takes it off.
    void aModelThatCannotLoadCanBeRemoved() {
        QTemporaryDir folder;
        const QString bad = folder.filePath(QStringLiteral("broken-model.gguf"));
        {
            QFile file(bad);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("GGUF, but not really");
        }
        AppSettings* settings = app_->settings();
        settings->addRecentModel(bad);
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("model")));
        QQuickItem* row = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((row = findVisual(window_, "modelRow:broken-model.gguf")), 30000);
        QQuickItem* remove = nullptr;
        for (QQuickItem* item : allItems(row))
            if (item->objectName() == QLatin1String("removeModelButton") && item->isVisible()) remove = item;
        QVERIFY2(remove, "a file that cannot load offers Remove");
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("model-remove")).isEmpty());
        QVERIFY(clickItem(window_, remove));
        QTRY_VERIFY(!settings->recentModels().contains(bad));
        QVERIFY(settings->lastModel() != bad);
        QTRY_VERIFY_WITH_TIMEOUT(!findVisual(window_, "modelRow:broken-model.gguf"), 30000);
        QVERIFY(QFileInfo::exists(bad));  // outside the model folders: only forgotten
    }

    // Last: it closes the window.
    void ctrlQQuits() {
        QVERIFY(window_->isVisible());
        QTest::keyClick(window_, Qt::Key_Q, Qt::ControlModifier);
        QTRY_VERIFY(!window_->isVisible());
    }

    void cleanupTestCase() {
        app_->chat()->stopAll();
        app_.reset();
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
