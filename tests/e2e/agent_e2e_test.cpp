// End-to-end agent sessions: the real app offscreen on the instruction-tuned
// SmolLM2 135M. Two agent conversations at once: one is forced to call the
// calculator (runs without asking), the other the workspace's read_file with
// the policy "ask": its card waits until Approve is clicked in the window.
// Both results go back as tool turns and the model answers after them. Then
// a tool of a stdio MCP server (tests/app/mcp_add_server.py on the python
// `mcp` package) is called from a third conversation. The tiny model is not
// asked to be right: the test checks the structure (calls made, results
// stored, an answer after them). Screenshots: agent.png, agent-approval.png,
// mcp.png, tools.png in $WEIR_SCREENSHOT_DIR.
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "AppDriver.h"
#include "DesktopApp.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 300000 * (scale > 1 ? scale : 1);
}

// Items made by a Repeater or a list view are not QObject children of the
// window: search the visual tree.
QQuickItem* findVisual(QQuickItem* root, const QString& name) {
    if (root->objectName() == name && root->isVisible()) return root;
    for (QQuickItem* child : root->childItems())
        if (QQuickItem* found = findVisual(child, name)) return found;
    return nullptr;
}

QString sourceDir() { return qEnvironmentVariable("WEIR_SOURCE_DIR", QStringLiteral(".")); }

} // namespace

class AgentE2eTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_, workspace_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

    void shortReplies(qint64 conversationId) {
        QVariantMap s = app_->chat()->currentSettings();
        s["maxTokens"] = 40;
        s["systemPrompt"] = QStringLiteral("You are a helpful assistant. Use the tools when asked. After a tool "
                                           "result, answer the user in one short sentence.");
        s["seed"] = 3;
        s["temperature"] = 0.7;
        app_->chat()->setSettingsOf(conversationId, s);
    }
    Storage* storage() { return app_->storage(); }
    // The calls of a conversation's replies, in order.
    QList<ToolCallRecord> callsOf(qint64 conversationId) {
        QList<ToolCallRecord> out;
        for (const MessageRecord& m : storage()->messages(conversationId)) out += storage()->toolCalls(m.id);
        return out;
    }

private slots:
    void initTestCase() {
        const QString model = sourceDir() + QStringLiteral("/models/smollm2-135m-instruct-q4_1.gguf");
        if (!QFileInfo::exists(model)) QSKIP("SKIPPED: SmolLM2 135M Instruct is missing (packaging/setup.sh installs it)");
        shots_ = qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath() + QStringLiteral("/weir-screenshots"));
        QFile notes(workspace_.filePath(QStringLiteral("notes.txt")));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("The meeting is on Tuesday at 10.\n");
        notes.close();
        app_ = std::make_unique<DesktopApp>(realEngineFactory());
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--model"), model, QStringLiteral("--data-dir"),
                             dir_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1360, 860);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->state() != EngineHost::Loading, 180000);
        QVERIFY2(app_->engineHost()->state() == EngineHost::Ready, qPrintable(app_->engineHost()->errorString()));
        app_->tools()->setWorkspaceFolder(workspace_.path());
        app_->tools()->setPolicy(QStringLiteral("read_file"), QStringLiteral("ask"));
    }

    void twoAgentSessionsWithAnApproval() {
        ChatController* chat = app_->chat();
        QSignalSpy finished(chat, &ChatController::agentFinished);
        QSignalSpy changed(chat, &ChatController::toolCallChanged);

        const qint64 calc = chat->newConversation();
        shortReplies(calc);
        const qint64 files = chat->newConversation();
        shortReplies(files);
        QVERIFY(chat->sendForcing(calc, QStringLiteral("Use the calculator on the expression 12*7."), QStringLiteral("calculator")));
        QVERIFY(chat->sendForcing(files, QStringLiteral("Call read_file with the path \"notes.txt\" and tell me what it says."),
                                  QStringLiteral("read_file")));
        QVERIFY(chat->isGenerating(calc) && chat->isGenerating(files));  // two agent sessions at once

        // The read_file call waits for Approve on its card.
        qint64 pendingId = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (const auto& args : changed)
                    if (args.at(0).toLongLong() == files && args.at(2).toString() == u"pending") pendingId = args.at(1).toLongLong();
                return pendingId != 0;
            }(),
            patienceMs());
        chat->select(files);
        QTest::qWait(100);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("agent-approval")).isEmpty());
        QQuickItem* approve = nullptr;
        QTRY_VERIFY((approve = findVisual(window_->contentItem(), QStringLiteral("approveToolCall"))) != nullptr);
        QVERIFY(clickItem(window_, approve));

        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 2, patienceMs());
        for (const auto& args : finished) QCOMPARE(args.at(1).toString(), QStringLiteral("answered"));

        const QList<ToolCallRecord> calcCalls = callsOf(calc), fileCalls = callsOf(files);
        QCOMPARE(calcCalls.size(), 1);
        QCOMPARE(calcCalls[0].name, QStringLiteral("calculator"));
        QVERIFY2(calcCalls[0].state == u"done" || calcCalls[0].state == u"failed", qPrintable(calcCalls[0].state));
        QVERIFY(!calcCalls[0].result.isEmpty());
        QCOMPARE(fileCalls.size(), 1);
        QCOMPARE(fileCalls[0].name, QStringLiteral("read_file"));
        QVERIFY(!fileCalls[0].result.isEmpty());
        qInfo() << "calculator" << calcCalls[0].arguments << "->" << calcCalls[0].state << calcCalls[0].result;
        qInfo() << "read_file" << fileCalls[0].arguments << "->" << fileCalls[0].state << fileCalls[0].result;
        // The model wrote an answer after the results.
        for (qint64 conv : {calc, files}) {
            const QList<MessageRecord> m = storage()->messages(conv);
            QCOMPARE(m.size(), 3);
            QCOMPARE(m[2].role, QStringLiteral("assistant"));
            QCOMPARE(m[2].state, MessageState::Complete);
            QVERIFY(!m[2].content.trimmed().isEmpty());
            qInfo() << "answer:" << m[2].content.left(200);
        }
        chat->select(calc);
        QTest::qWait(100);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("agent")).isEmpty());
    }

    void anMcpToolCalledFromTheApp() {
        const QString python = qEnvironmentVariable("WEIR_PYTHON");
        if (python.isEmpty() || !QFileInfo::exists(python)) QSKIP("SKIPPED: no python (WEIR_PYTHON)");
        QProcess probe;
        probe.start(python, {QStringLiteral("-c"), QStringLiteral("import mcp")});
        if (!probe.waitForFinished(30000) || probe.exitCode() != 0) QSKIP("SKIPPED: the python `mcp` package is not installed");
        ToolRegistry* tools = app_->tools();
        QCOMPARE(tools->addServer(QStringLiteral("test-mcp"), python + u' ' + sourceDir() + QStringLiteral("/tests/app/mcp_add_server.py")),
                 QString());
        QTRY_VERIFY_WITH_TIMEOUT(tools->isAvailable(QStringLiteral("add")), patienceMs());
        tools->setPolicy(QStringLiteral("add"), QStringLiteral("always"));

        // As a user would: a new conversation, the Tools switch, the tool to
        // force picked for the next message, the message typed and sent.
        ChatController* chat = app_->chat();
        QSignalSpy finished(chat, &ChatController::agentFinished);
        QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
        QTRY_VERIFY(chat->currentId() != 0 && chat->messages()->count() == 0);
        const qint64 conv = chat->currentId();
        shortReplies(conv);
        QVERIFY(clickItem(window_, findItem(window_, "toolsSwitch")));
        QTRY_VERIFY(chat->currentToolsEnabled());
        QQuickItem* agentBar = findItem(window_, "agentBar");
        QVERIFY(agentBar);
        agentBar->setProperty("forceTool", QStringLiteral("add"));
        QTRY_COMPARE(findItem(window_, "forceToolBox")->property("currentText").toString(), QStringLiteral("add (forced)"));
        findItem(window_, "composerInput")->forceActiveFocus();
        typeText(window_, QStringLiteral("Add 2 and 3 with the add tool."));
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_VERIFY(chat->isGenerating(conv));
        QCOMPARE(agentBar->property("forceTool").toString(), QString());  // for that message only
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, patienceMs());
        const QList<ToolCallRecord> calls = callsOf(conv);
        for (const MessageRecord& m : storage()->messages(conv))
            qInfo() << m.role << messageStateName(m.state) << m.error << m.content.left(200);
        QCOMPARE(calls.size(), 1);
        QCOMPARE(calls[0].name, QStringLiteral("add"));
        QCOMPARE(calls[0].state, QStringLiteral("done"));  // numbers are all the schema allows, so the server adds them
        const QJsonObject args = QJsonDocument::fromJson(calls[0].arguments.toUtf8()).object();
        const double sum = args["a"].toDouble() + args["b"].toDouble();
        QCOMPARE(calls[0].result.toDouble(), sum);
        qInfo() << "add" << calls[0].arguments << "->" << calls[0].result;
        // The card says which server ran the tool.
        QQuickItem* server = nullptr;
        QTRY_VERIFY((server = findVisual(window_->contentItem(), QStringLiteral("toolServer"))) != nullptr);
        QVERIFY2(server->property("text").toString().contains(u"test-mcp"), qPrintable(server->property("text").toString()));
        QTest::qWait(100);
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("mcp")).isEmpty());
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("tools")));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("tools")).isEmpty());
        QMetaObject::invokeMethod(window_, "navigate", Q_ARG(QVariant, QStringLiteral("chat")));
    }

    void cleanupTestCase() {
        if (app_) app_->chat()->stopAll();
        app_.reset();
    }
};

QTEST_MAIN(AgentE2eTest)
#include "agent_e2e_test.moc"
