// End-to-end: a remote engine used from the real app window, offscreen. The
// remote engine is a real `weir-cli serve` on SmolLM2 135M Instruct (a child
// process on a free loopback port, with an API key); the app's own engine runs
// the same file. As a user would, the test adds the endpoint on the Remote
// engines page (typing name, address and key, Test connection, the listed
// model, Add), puts conversations A and B on it from the chat header's
// chooser and leaves C on the local engine, forces write_file in A (a tool
// that always asks), sends in all three so they generate at once, approves
// A's call on its card, and waits for all three to answer. Then the pool
// monitor shows the weir serve endpoint. The tiny model is not asked to be
// right: the test checks the structure (who wrote what, the call made and
// approved, text in every reply, the overlap). Screenshots: remote-*.png in
// $WEIR_SCREENSHOT_DIR.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QQmlProperty>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/prctl.h>

#include "AppDriver.h"
#include "DesktopApp.h"
#include "chat/ChatController.h"
#include "chat/ConversationListModel.h"
#include "engine_host/EngineHost.h"
#include "remote/RemoteEnginesController.h"
#include "remote/RemotePoolModel.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

namespace {

const QString kKey = QStringLiteral("sk-e2e-remote");
const QString kEngine = QStringLiteral("GPU box");

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 120000 * (scale > 1 ? scale : 1);
}

QString modelPath() {
    return qEnvironmentVariable("WEIR_SOURCE_DIR", QStringLiteral(".")) + QStringLiteral("/models/smollm2-135m-instruct-q4_1.gguf");
}

// Repeater rows and list delegates are not QObject children of the window: search the item tree.
void visibleItems(QQuickItem* root, const QString& name, QList<QQuickItem*>& out) {
    if (!root->isVisible()) return;
    if (root->objectName() == name) out << root;
    for (QQuickItem* child : root->childItems()) visibleItems(child, name, out);
}

QQuickItem* findVisual(QQuickWindow* window, const QString& name) {
    QList<QQuickItem*> found;
    visibleItems(window->contentItem(), name, found);
    return found.isEmpty() ? nullptr : found.first();
}

QString textOf(QQuickItem* item) { return item ? QQmlProperty::read(item, QStringLiteral("text")).toString() : QString(); }

} // namespace

class RemoteEnginesE2eTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_, workspace_;
    QProcess server_;
    QString baseUrl_, servedModel_;
    std::unique_ptr<DesktopApp> app_;
    QQuickWindow* window_ = nullptr;
    QString shots_;

    ChatController* chat() { return app_->chat(); }
    QQuickItem* item(const char* name) { return findVisual(window_, QString::fromLatin1(name)); }

    // Clicks a field and types into it, as a user would.
    void typeInto(const char* field, const QString& text) {
        QQuickItem* f = item(field);
        QVERIFY2(f, field);
        QVERIFY(clickItem(window_, f));
        QTRY_VERIFY(f->hasActiveFocus());
        typeText(window_, text);
        QCOMPARE(textOf(f), text);
    }

    // A ComboBox stepped with the Down key until it shows `text` (each step
    // is the user's choice: the box emits activated).
    void chooseWithKeys(QQuickItem* box, const QString& text) {
        QVERIFY(box);
        box->forceActiveFocus();
        for (int i = 0; i < 24 && QQmlProperty::read(box, QStringLiteral("currentText")).toString() != text; ++i)
            QTest::keyClick(window_, Qt::Key_Down);
        QCOMPARE(QQmlProperty::read(box, QStringLiteral("currentText")).toString(), text);
    }

    // The sidebar row of a conversation, clicked.
    void openConversation(qint64 id) {
        QList<QQuickItem*> rows;
        visibleItems(window_->contentItem(), QStringLiteral("conversationRow"), rows);
        QQuickItem* row = nullptr;
        for (QQuickItem* r : rows)
            if (qint64(QQmlProperty::read(r, QStringLiteral("conversationId")).toDouble()) == id) row = r;
        QVERIFY2(row, "no sidebar row for the conversation");
        QVERIFY(clickItem(window_, row));
        QTRY_COMPARE(chat()->currentId(), id);
    }

    // Ctrl+N, the engine chosen in the header, short replies, and the text
    // typed in the message box; returns the new conversation's id in *id.
    void prepareConversation(const QString& engineLabel, const QString& message, int maxTokens, qint64* id) {
        const qint64 before = chat()->currentId();
        QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
        QTRY_VERIFY(chat()->currentId() != 0 && chat()->currentId() != before && chat()->messages()->count() == 0);
        *id = chat()->currentId();
        QQuickItem* chooser = item("engineChooser");
        QVERIFY(chooser);
        if (engineLabel != QQmlProperty::read(chooser, QStringLiteral("currentText")).toString()) chooseWithKeys(chooser, engineLabel);
        QVariantMap s = chat()->currentSettings();
        s["maxTokens"] = maxTokens;
        s["systemPrompt"] = QStringLiteral("You are a helpful assistant. Use the tools when asked. After a tool result, "
                                           "answer the user in one short sentence.");
        s["seed"] = 11;
        s["temperature"] = 0.3;
        chat()->setSettingsOf(*id, s);
        QVERIFY(clickItem(window_, findItem(window_, "composerInput")));
        typeText(window_, message);
    }

    void send(qint64 id) {
        QTest::keyClick(window_, Qt::Key_Return);
        QTRY_VERIFY(chat()->isGenerating(id));
    }

private slots:
    void initTestCase() {
        const QString cli = qEnvironmentVariable("WEIR_BIN_DIR") + QStringLiteral("/weir-cli");
        if (!QFileInfo(cli).isExecutable()) QSKIP("SKIPPED: weir-cli is not built");
        if (!QFileInfo::exists(modelPath())) QSKIP("SKIPPED: SmolLM2 135M Instruct is missing (packaging/setup.sh installs it)");
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
        shots_ = qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath() + QStringLiteral("/weir-screenshots"));
        qInfo() << "screenshots in" << shots_;

        // The remote engine: port 0, so the OS picks a free one; it says which on stdout.
        server_.setProgram(cli);
        server_.setArguments({QStringLiteral("serve"), QStringLiteral("-m"), modelPath(), QStringLiteral("--port"),
                              QStringLiteral("0"), QStringLiteral("--api-key"), kKey, QStringLiteral("--threads"),
                              QStringLiteral("1"), QStringLiteral("--max-context"), QStringLiteral("4096")});
        server_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // The server goes with the test, also when the test dies first.
        server_.setChildProcessModifier([] { prctl(PR_SET_PDEATHSIG, SIGTERM); });
        server_.start();
        QVERIFY2(server_.waitForStarted(30000), "weir-cli did not start");
        QByteArray out;
        while (!out.contains('\n')) {
            QVERIFY2(server_.waitForReadyRead(120000), "weir-cli serve said nothing");
            out += server_.readAllStandardOutput();
        }
        // "listening on http://127.0.0.1:PORT/v1"
        baseUrl_ = QString::fromUtf8(out.left(out.indexOf('\n')).split(' ').last().trimmed());
        QVERIFY2(baseUrl_.startsWith(QLatin1String("http://127.0.0.1:")), out.constData());

        app_ = std::make_unique<DesktopApp>(realEngineFactory());
        QVERIFY(app_->start({QStringLiteral("weir"), QStringLiteral("--model"), modelPath(), QStringLiteral("--data-dir"),
                             dir_.path()}));
        window_ = app_->window();
        QVERIFY(window_);
        window_->resize(1360, 860);
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_VERIFY_WITH_TIMEOUT(app_->engineHost()->state() != EngineHost::Loading, patienceMs());
        QVERIFY2(app_->engineHost()->state() == EngineHost::Ready, qPrintable(app_->engineHost()->errorString()));
        // The Tools page: the workspace folder (picked in a file dialog), and
        // write_file the one tool offered, which keeps the prompts short.
        ToolRegistry* tools = app_->tools();
        tools->setWorkspaceFolder(workspace_.path());
        for (const QVariant& t : tools->toolList()) {
            const QString name = t.toMap().value(QStringLiteral("name")).toString();
            if (name != u"write_file") tools->setPolicy(name, QStringLiteral("never"));
        }
    }

    void cleanupTestCase() {
        if (app_) chat()->stopAll();
        app_.reset();
        if (server_.state() != QProcess::NotRunning) {
            server_.terminate();
            if (!server_.waitForFinished(30000)) server_.kill();
        }
    }

    void addTheRemoteEngine() {
        RemoteEnginesController* remote = app_->remoteEngines();
        QVERIFY(clickItem(window_, findItem(window_, "navRemoteEngines")));
        QTRY_VERIFY(findItem(window_, "remoteEnginesPage")->isVisible());
        typeInto("remoteNameField", kEngine);
        typeInto("remoteUrlField", baseUrl_);
        typeInto("remoteKeyField", kKey);

        QVERIFY(clickItem(window_, item("remoteTestButton")));
        QTRY_VERIFY_WITH_TIMEOUT(remote->testState() != u"testing", patienceMs());
        QVERIFY2(remote->testState() == u"ok", qPrintable(remote->testMessage()));
        // weir serve lists the one model it runs; the box shows it chosen.
        QQuickItem* modelBox = nullptr;
        QTRY_VERIFY((modelBox = item("remoteModelBox")) != nullptr);
        QCOMPARE(QQmlProperty::read(modelBox, QStringLiteral("count")).toInt(), 1);
        servedModel_ = QQmlProperty::read(modelBox, QStringLiteral("currentValue")).toString();
        QVERIFY(!servedModel_.isEmpty());
        QVERIFY2(QQmlProperty::read(modelBox, QStringLiteral("currentText")).toString().startsWith(servedModel_),
                 qPrintable(QQmlProperty::read(modelBox, QStringLiteral("currentText")).toString()));
        chooseWithKeys(modelBox, QQmlProperty::read(modelBox, QStringLiteral("currentText")).toString());
        QVERIFY(!textOf(item("remoteTestMessage")).isEmpty());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-engines-test")).isEmpty());

        QVERIFY(clickItem(window_, item("remoteSaveButton")));
        QTRY_COMPARE(remote->names(), QStringList{kEngine});
        QCOMPARE(textOf(item("remoteFormError")), QString());
        const QVariantMap saved = remote->endpoint(kEngine);
        QCOMPARE(saved.value("model").toString(), servedModel_);
        QCOMPARE(saved.value("baseUrl").toString(), baseUrl_);
        QTRY_VERIFY(item("remoteEndpointRow_0"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-engines")).isEmpty());
        qInfo() << "remote engine" << kEngine << "at" << baseUrl_ << "model" << servedModel_;
    }

    void threeConversationsAtOnceWithAnApproval() {
        QVERIFY(!servedModel_.isEmpty());
        ChatController* c = chat();
        ConversationListModel* sidebar = c->conversations();
        QSignalSpy ended(c, &ChatController::replyEnded);
        QSignalSpy finished(c, &ChatController::agentFinished);
        QSignalSpy calls(c, &ChatController::toolCallChanged);
        qint64 a = 0, b = 0, cc = 0;

        // The overlap, as the sidebar shows it: all three have a reply under
        // way, and the two plain ones are writing (tokens streaming).
        bool overlap = false, allWriting = false;
        auto look = [&] {
            if (!a || !b || !cc) return;
            const QString inA = sidebar->activity(a), inB = sidebar->activity(b), inC = sidebar->activity(cc);
            overlap |= !inA.isEmpty() && inB == u"decode" && inC == u"decode";
            allWriting |= inA == u"decode" && inB == u"decode" && inC == u"decode";
        };
        // `look` reads this function's locals: it must not outlive them (a failed check returns early).
        const auto watching = qScopeGuard([conns = QList{connect(c, &ChatController::replyTokens, this, look),
                                                         connect(c, &ChatController::replyStarted, this, look)}] {
            for (const QMetaObject::Connection& k : conns) QObject::disconnect(k);
        });

        // A: on the remote engine, with write_file forced for its message.
        prepareConversation(kEngine, QStringLiteral("Save the text \"Meeting on Tuesday\" in the file notes.txt."), 64, &a);
        QVERIFY(clickItem(window_, findItem(window_, "toolsSwitch")));
        QTRY_VERIFY(c->currentToolsEnabled());
        chooseWithKeys(item("forceToolBox"), QStringLiteral("write_file (forced)"));
        QVERIFY(clickItem(window_, findItem(window_, "composerInput")));
        send(a);
        QCOMPARE(findItem(window_, "agentBar")->property("forceTool").toString(), QString());

        // B: on the remote engine too; C, sent once B writes, on the local one.
        prepareConversation(kEngine, QStringLiteral("Write a long story about a river that runs to the sea."), 128, &b);
        send(b);
        QTRY_VERIFY_WITH_TIMEOUT(sidebar->activity(b) == u"decode", patienceMs());
        prepareConversation(QStringLiteral("Local engine"), QStringLiteral("Write a long story about a fox in the snow."), 128, &cc);
        send(cc);
        QVERIFY(c->isGenerating(a) && c->isGenerating(b) && c->isGenerating(cc));
        QCOMPARE(c->currentEngine(), QString());
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-three-at-once")).isEmpty());

        // A's call waits for Approve on its card; each new call of A's loop is approved the same way.
        QSet<qint64> approved;
        int approvals = 0;
        auto pendingOfA = [&]() -> qint64 {
            for (const auto& args : calls)
                if (args.at(0).toLongLong() == a && args.at(2).toString() == u"pending" && !approved.contains(args.at(1).toLongLong()))
                    return args.at(1).toLongLong();
            return 0;
        };
        auto agentDone = [&] {
            for (const auto& args : finished)
                if (args.at(0).toLongLong() == a) return true;
            return false;
        };
        while (!agentDone()) {
            QTRY_VERIFY_WITH_TIMEOUT(pendingOfA() != 0 || agentDone(), patienceMs());
            if (agentDone()) break;
            const qint64 call = pendingOfA();
            if (c->currentId() != a) openConversation(a);
            QQuickItem* approve = nullptr;
            QTRY_VERIFY((approve = findVisual(window_, QStringLiteral("approveToolCall"))) != nullptr);
            if (approvals == 0) {
                QCOMPARE(QQmlProperty::read(item("engineChooser"), QStringLiteral("displayText")).toString(), kEngine);
                // The header's context is weir serve's (--max-context 4096), not the local model's.
                QTRY_COMPARE(c->contextTokens(), 4096);
                QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-approval")).isEmpty());
            }
            QVERIFY(clickItem(window_, approve));
            approved.insert(call);
            ++approvals;
            QTRY_VERIFY(!findVisual(window_, QStringLiteral("approveToolCall")));
        }
        QVERIFY(approvals >= 1);

        // B and C end on their own.
        auto endedOf = [&](qint64 id) -> QString {
            QString state;
            for (const auto& args : ended)
                if (args.at(0).toLongLong() == id) state = args.at(2).toString();
            return state;
        };
        QTRY_VERIFY_WITH_TIMEOUT(!endedOf(b).isEmpty() && !endedOf(cc).isEmpty(), patienceMs());
        QCOMPARE(endedOf(b), QStringLiteral("complete"));
        QCOMPARE(endedOf(cc), QStringLiteral("complete"));
        for (const auto& args : finished)
            if (args.at(0).toLongLong() == a) QCOMPARE(args.at(1).toString(), QStringLiteral("answered"));
        qInfo() << "overlap: all three under way with B and C writing:" << overlap << "; all three writing:" << allWriting
                << "; approvals:" << approvals;
        QVERIFY2(overlap, "the three conversations never generated at the same moment");

        // Who wrote what: the remote model for A and B, the local one for C, each with text.
        Storage* storage = app_->storage();
        const QString localModel = app_->engineHost()->modelInfo().value(QStringLiteral("name")).toString();
        QVERIFY(!localModel.isEmpty());
        QVERIFY(localModel != servedModel_);
        auto replies = [&](qint64 id) {
            QList<MessageRecord> out;
            for (const MessageRecord& m : storage->messages(id))
                if (m.role == u"assistant") out << m;
            return out;
        };
        const QList<MessageRecord> ofA = replies(a), ofB = replies(b), ofC = replies(cc);
        QCOMPARE(ofB.size(), 1);
        QCOMPARE(ofC.size(), 1);
        QVERIFY(ofA.size() >= 2);  // the call, then the answer after its result
        for (const MessageRecord& m : ofA) QCOMPARE(m.model, servedModel_);
        QCOMPARE(ofB[0].model, servedModel_);
        QCOMPARE(ofC[0].model, localModel);
        for (const MessageRecord& m : {ofA.last(), ofB[0], ofC[0]}) {
            QCOMPARE(m.state, MessageState::Complete);
            QVERIFY2(!m.content.trimmed().isEmpty(), qPrintable(m.model));
            qInfo().noquote() << m.model << "wrote:" << m.content.left(160).replace(u'\n', u' ');
        }
        const QList<ToolCallRecord> written = storage->toolCalls(ofA[0].id);
        QCOMPARE(written.size(), 1);
        QCOMPARE(written[0].name, QStringLiteral("write_file"));
        QVERIFY2(written[0].state == u"done" || written[0].state == u"failed", qPrintable(written[0].state));
        QVERIFY(!written[0].result.isEmpty());
        qInfo() << "write_file" << written[0].arguments << "->" << written[0].state << written[0].result;
        if (written[0].state == u"done") QVERIFY(!QDir(workspace_.path()).entryList(QDir::Files).isEmpty());

        // On screen: each reply names the model that wrote it.
        openConversation(b);
        QTRY_COMPARE(textOf(item("replyModelName")), servedModel_);
        QCOMPARE(QQmlProperty::read(item("engineChooser"), QStringLiteral("displayText")).toString(), kEngine);
        QVERIFY(!item("modelChip"));  // the local model is not this conversation's
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-chat")).isEmpty());
        openConversation(cc);
        QTRY_COMPARE(textOf(item("replyModelName")), localModel);
        QCOMPARE(QQmlProperty::read(item("engineChooser"), QStringLiteral("displayText")).toString(), QStringLiteral("Local engine"));
        QVERIFY(item("modelChip"));
        openConversation(a);
        QTRY_VERIFY(item("replyModelName"));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-agent")).isEmpty());
    }

    void monitorShowsTheRemoteEngine() {
        RemotePoolModel* pool = app_->remotePool();
        QVERIFY(clickItem(window_, findItem(window_, "navPoolMonitor")));
        QTRY_VERIFY(findItem(window_, "poolMonitorPage")->isVisible());
        QQuickItem* chooser = nullptr;
        QTRY_VERIFY((chooser = item("monitorEngineChooser")) != nullptr);
        chooseWithKeys(chooser, kEngine);
        QCOMPARE(pool->endpointName(), kEngine);
        QTRY_VERIFY(item("remotePoolView"));
        QTRY_VERIFY_WITH_TIMEOUT(pool->hasData(), patienceMs());
        QCOMPARE(pool->source(), QStringLiteral("Weir /v1/cache/status"));
        // weir serve says how full its pool is and how many requests run.
        for (const char* key : {"remoteGauge_kvUsage", "remoteGauge_running", "remoteGauge_waiting"}) {
            QQuickItem* gauge = nullptr;
            QTRY_VERIFY2((gauge = item(key)) != nullptr, key);
            QList<QQuickItem*> values;
            visibleItems(gauge, QStringLiteral("remoteGaugeValue"), values);
            QCOMPARE(values.size(), 1);
            QVERIFY2(textOf(values[0]) != QStringLiteral("\u2014") && !textOf(values[0]).isEmpty(), key);
        }
        QCOMPARE(pool->model(), servedModel_);
        // weir serve says how many requests it runs at once and its context,
        // so the monitor can tell whether the conversations fit.
        QTRY_COMPARE_WITH_TIMEOUT(pool->contextLength(), qint64(4096), patienceMs());
        QVERIFY2(!textOf(item("remoteSizingLine")).startsWith(QLatin1String("Cannot tell")), qPrintable(textOf(item("remoteSizingLine"))));
        QVERIFY(!saveScreenshot(window_, shots_, QStringLiteral("remote-monitor")).isEmpty());
        // Leaving the monitor stops the polling.
        QVERIFY(clickItem(window_, findItem(window_, "navRemoteEngines")));
        QTRY_VERIFY(!pool->polling());
    }
};

QTEST_MAIN(RemoteEnginesE2eTest)
#include "remote_engines_e2e_test.moc"
