// The agent loop in ChatController on the fake engine, scripted to write a
// forced tool call and then an answer: the call becomes a tool card that runs
// (or waits for Approve/Deny), its result goes back as a tool turn, the model
// answers, everything is stored; the step limit ends the loop with a message;
// Stop ends a loop waiting for approval; two agent sessions run at once.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using testing::FakeEngineConfig;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 30000 * (scale > 1 ? scale : 1);
}

struct Fixture {
    explicit Fixture(std::vector<std::string> replies, int maxContext = 0)
        : config(makeConfig(std::move(replies))), storage(dir.path()), host(FakeEngineBackend::factory(config)) {
        QVERIFY(storage.open());
        weir::EngineOptions options;
        options.maxRunningRequests = 4;
        options.maxContext = maxContext;
        host.setEngineOptions(options);
        chat = std::make_unique<ChatController>(&storage, &host);
        chat->setToolRegistry(&tools);
        host.load(QStringLiteral("fake.gguf"));
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, patienceMs());
    }
    static FakeEngineConfig makeConfig(std::vector<std::string> replies) {
        FakeEngineConfig c;
        c.tokenIntervalMs = 1;
        c.record = std::make_shared<FakeEngineConfig::Record>();
        c.script = std::make_shared<FakeEngineConfig::Script>();
        for (auto& r : replies) c.script->replies.push_back(std::move(r));
        return c;
    }
    // The messages JSON of the n-th chat with tools the engine was given.
    QJsonArray chatSent(size_t n) {
        std::lock_guard lock(config.record->mutex);
        if (n >= config.record->toolChats.size()) return {};
        return QJsonDocument::fromJson(QByteArray::fromStdString(config.record->toolChats[n].messagesJson)).array();
    }
    FakeEngineConfig config;
    QTemporaryDir dir;
    Storage storage;
    EngineHost host;
    ToolRegistry tools;
    std::unique_ptr<ChatController> chat;
};

// Requests that reached the engine (prepareChat is also called to measure).
size_t requestsSubmitted(Fixture& f) {
    std::lock_guard lock(f.config.record->mutex);
    return f.config.record->requests.size();
}

// The messages of the last chat prepared: the one sent.
QJsonArray lastChatPrepared(Fixture& f) {
    std::lock_guard lock(f.config.record->mutex);
    if (f.config.record->toolChats.empty()) return {};
    return QJsonDocument::fromJson(QByteArray::fromStdString(f.config.record->toolChats.back().messagesJson)).array();
}

} // namespace

class AgentLoopTest : public QObject {
    Q_OBJECT
private slots:
    // Each reply of the loop reads its conversation's branch from the database
    // once: its prompt (with the calls and their results), the context cut it
    // keeps, and what the view shows all come from that one read.
    void eachReplyReadsItsBranchOnce() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "1+1"}})", "Two."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QList<quint64> readsAtStart, readsAtEnd;
        connect(f.chat.get(), &ChatController::replyStarted, [&] { readsAtStart << f.storage.branchReads(); });
        connect(f.chat.get(), &ChatController::replyEnded, [&] { readsAtEnd << f.storage.branchReads(); });
        const qint64 conv = f.chat->newConversation();
        const quint64 before = f.storage.branchReads();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("What is 1+1?"), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("answered"));
        QCOMPARE(readsAtStart.size(), 2);  // the call, then the answer
        QCOMPARE(readsAtEnd.size(), 2);
        // The answer: from the end of the call's reply (its tool ran between) to its start.
        QCOMPARE(readsAtStart[1] - readsAtEnd[0], quint64(1));
        // The whole turn: one read places the user's message at the end of the
        // branch (Storage::appendMessage), then one per reply.
        QCOMPARE(f.storage.branchReads() - before, quint64(3));
    }

    // Until the engine has the request (the host first renders and tokenizes
    // the prompt with its tools, which can take seconds) the reply is
    // "preparing" everywhere it shows, not waiting for a free slot.
    void aReplyIsPreparingUntilTheEngineHasIt() {
        Fixture f({"Hello there."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        f.chat->setToolsEnabled(conv, true);
        QVERIFY(f.chat->sendTo(conv, QStringLiteral("Hi")));
        QCOMPARE(f.chat->currentActivity(), QStringLiteral("preparing"));
        QCOMPARE(f.chat->messages()->get(1).value("activity").toString(), QStringLiteral("preparing"));
        const QModelIndex row = f.chat->conversations()->index(f.chat->conversations()->rowOf(conv));
        QCOMPARE(f.chat->conversations()->data(row, ConversationListModel::ActivityRole).toString(),
                 QStringLiteral("preparing"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("answered"));
        QCOMPARE(f.chat->currentActivity(), QString());
    }

    void callRunsAndTheModelAnswers() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "(2+3)*4"}})", "The answer is 20."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("What is (2+3)*4?"), QStringLiteral("calculator")));
        QVERIFY(f.chat->currentToolsEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("answered"));

        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(stored.size(), 3);
        QCOMPARE(stored[1].role, QStringLiteral("assistant"));
        QCOMPARE(stored[1].content, QString());  // the reply was the call
        const QList<ToolCallRecord> calls = f.storage.toolCalls(stored[1].id);
        QCOMPARE(calls.size(), 1);
        QCOMPARE(calls[0].name, QStringLiteral("calculator"));
        QCOMPARE(QJsonDocument::fromJson(calls[0].arguments.toUtf8()).object()["expression"].toString(),
                 QStringLiteral("(2+3)*4"));
        QCOMPARE(calls[0].result, QStringLiteral("20"));
        QCOMPARE(calls[0].state, QStringLiteral("done"));
        QVERIFY(calls[0].durationMs > 0);
        QCOMPARE(stored[2].content, QStringLiteral("The answer is 20."));

        // The first request was held to the call's schema, the second was free
        // and carried the call and its result as a tool turn.
        {
            std::lock_guard lock(f.config.record->mutex);
            QCOMPARE(f.config.record->requests.size(), size_t(2));
            QCOMPARE(f.config.record->requests[0].constraint.kind, weir::OutputConstraint::Kind::JsonSchema);
            QVERIFY(f.config.record->requests[0].constraint.schema.find("calculator") != std::string::npos);
            QCOMPARE(f.config.record->requests[1].constraint.kind, weir::OutputConstraint::Kind::None);
            QVERIFY(f.config.record->toolChats[0].toolsJson.find("\"calculator\"") != std::string::npos);
        }
        const QJsonArray second = f.chatSent(1);
        QCOMPARE(second.size(), 3);
        QCOMPARE(second[1].toObject()["tool_calls"].toArray()[0].toObject()["function"].toObject()["name"].toString(),
                 QStringLiteral("calculator"));
        QCOMPARE(second[2].toObject()["role"].toString(), QStringLiteral("tool"));
        QCOMPARE(second[2].toObject()["content"].toString(), QStringLiteral("20"));
        QCOMPARE(second[2].toObject()["tool_call_id"], second[1].toObject()["tool_calls"].toArray()[0].toObject()["id"]);

        // The card on screen, and the export.
        const QVariantList cards = f.chat->messages()->get(1).value("toolCalls").toList();
        QCOMPARE(cards.size(), 1);
        QCOMPARE(cards[0].toMap().value("state").toString(), QStringLiteral("done"));
        const QString file = f.dir.filePath(QStringLiteral("export.json"));
        QVERIFY(f.chat->exportConversation(conv, QUrl::fromLocalFile(file), QStringLiteral("json")));
        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QJsonArray exported = QJsonDocument::fromJson(in.readAll()).object()["messages"].toArray();
        QCOMPARE(exported[1].toObject()["tool_calls"].toArray()[0].toObject()["result"].toString(), QStringLiteral("20"));
        QCOMPARE(exported[1].toObject()["tool_calls"].toArray()[0].toObject()["state"].toString(), QStringLiteral("done"));
    }

    void aWriteWaitsForApproval() {
        Fixture f({R"({"name": "write_file", "arguments": {"path": "note.txt", "content": "hello"}})", "Saved.",
                   R"({"name": "write_file", "arguments": {"path": "other.txt", "content": "no"}})", "Not saved."});
        QTemporaryDir ws;
        f.tools.setWorkspaceFolder(ws.path());
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QSignalSpy changed(f.chat.get(), &ChatController::toolCallChanged);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("Save a note"), QStringLiteral("write_file")));
        QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), patienceMs());
        QCOMPARE(changed.last().at(2).toString(), QStringLiteral("pending"));
        QVERIFY(f.chat->isGenerating(conv));                       // the loop waits
        QVERIFY(!f.chat->send(QStringLiteral("meanwhile")));       // nothing else is sent meanwhile
        QTest::qWait(50);
        QVERIFY(!QFile::exists(ws.filePath(QStringLiteral("note.txt"))));  // nothing written before Approve
        const qint64 callId = changed.last().at(1).toLongLong();
        QCOMPARE(f.chat->messages()->get(1).value("toolCalls").toList().value(0).toMap().value("state").toString(),
                 QStringLiteral("pending"));
        f.chat->approveToolCall(callId);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QFile note(ws.filePath(QStringLiteral("note.txt")));
        QVERIFY(note.open(QIODevice::ReadOnly));
        QCOMPARE(note.readAll(), QByteArray("hello"));

        // Denied: nothing written, the model is told, and answers.
        changed.clear();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("Save another"), QStringLiteral("write_file")));
        QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty() && changed.last().at(2).toString() == u"pending", patienceMs());
        f.chat->denyToolCall(changed.last().at(1).toLongLong());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, patienceMs());
        QVERIFY(!QFile::exists(ws.filePath(QStringLiteral("other.txt"))));
        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(stored.last().content, QStringLiteral("Not saved."));
        const QList<ToolCallRecord> denied = f.storage.toolCalls(stored[stored.size() - 2].id);
        QCOMPARE(denied.value(0).state, QStringLiteral("denied"));
        const QJsonArray sent = f.chatSent(3);
        QCOMPARE(sent.last().toObject()["content"].toString(), QStringLiteral("The user denied this call."));
    }

    // A reply after the results with neither text nor a call (a small model
    // writing the result marker, a stop string) is asked again without tools.
    void anEmptyAnswerIsAskedAgainWithoutTools() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "2^10"}})", "", "It is 1024."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("2^10?"), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("answered"));
        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(stored.size(), 3);  // the empty reply is gone
        QCOMPARE(stored[2].content, QStringLiteral("It is 1024."));
        QCOMPARE(f.chat->messages()->count(), 3);
        std::lock_guard lock(f.config.record->mutex);
        QCOMPARE(f.config.record->toolChats.size(), size_t(3));
        QCOMPARE(f.config.record->toolChats[1].toolChoice.mode, weir::ToolChoice::Mode::Auto);
        QCOMPARE(f.config.record->toolChats[2].toolChoice.mode, weir::ToolChoice::Mode::None);
    }

    // In the versions model a loop is one branch: each reply follows the one
    // whose calls ran. Regenerate writes the whole turn again as a new version
    // of its first reply; the old loop stays as the earlier version. Continue
    // is refused (its prompt would lack the tool turns).
    void aLoopIsOneBranchAndRegeneratesAsAVersion() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "6*7"}})", "It is 42.", "Again 42."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("6*7?"), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        const QList<MessageRecord> loop = f.storage.messages(conv);
        QCOMPARE(loop.size(), 3);
        QCOMPARE(loop[1].parentId, loop[0].id);
        QCOMPARE(loop[2].parentId, loop[1].id);
        QCOMPARE(loop[2].content, QStringLiteral("It is 42."));

        QSignalSpy notices(f.chat.get(), &ChatController::notice);
        QVERIFY(!f.chat->continueReply(loop[2].id));
        QCOMPARE(notices.count(), 1);

        QVERIFY(f.chat->regenerate());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, patienceMs());
        const QList<MessageRecord> again = f.storage.messages(conv);
        QCOMPARE(again.size(), 2);
        QCOMPARE(again[1].parentId, loop[0].id);
        QCOMPARE(again[1].content, QStringLiteral("Again 42."));
        QCOMPARE(again[1].versionCount, 2);
        QCOMPARE(again[1].versionIndex, 1);
        QCOMPARE(f.chat->messages()->count(), 2);
        // The new version was asked with the user's turn only, not the old loop.
        QCOMPARE(f.chatSent(2).size(), 1);

        QVERIFY(f.chat->switchVersion(again[1].id, -1));
        const QList<MessageRecord> back = f.storage.messages(conv);
        QCOMPARE(back.size(), 3);
        QCOMPARE(back[2].id, loop[2].id);
        QCOMPARE(f.storage.toolCalls(back[1].id).size(), 1);
    }

    void theStepLimitEndsTheLoop() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "1+1"}})"});
        f.chat->setMaxAgentSteps(1);
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("Add"), QStringLiteral("required")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("step limit"));
        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(stored.last().state, MessageState::Failed);
        QVERIFY2(stored.last().error.contains(u"step limit"), qPrintable(stored.last().error));
        QVERIFY(!f.chat->isGenerating(conv));
    }

    void stopEndsALoopWaitingForApproval() {
        Fixture f({R"({"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}})"});
        QTemporaryDir ws;
        f.tools.setWorkspaceFolder(ws.path());
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QSignalSpy changed(f.chat.get(), &ChatController::toolCallChanged);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("Write"), QStringLiteral("write_file")));
        QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), patienceMs());
        f.chat->stop();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("stopped"));
        QVERIFY(!f.chat->isGenerating(conv));
        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(f.storage.toolCalls(stored[1].id).value(0).state, QStringLiteral("denied"));
        f.chat->approveToolCall(changed.last().at(1).toLongLong());  // too late: nothing happens
        QTest::qWait(50);
        QVERIFY(!QFile::exists(ws.filePath(QStringLiteral("x.txt"))));
    }

    void twoAgentSessionsAtOnce() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "6*7"}})",
                   R"({"name": "current_datetime", "arguments": {"timezone": "UTC"}})", "Done.", "Done."});
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 a = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(a, QStringLiteral("Multiply"), QStringLiteral("calculator")));
        const qint64 b = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(b, QStringLiteral("Time?"), QStringLiteral("current_datetime")));
        QCOMPARE(f.chat->generatingCount(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, patienceMs());
        const QList<MessageRecord> ma = f.storage.messages(a), mb = f.storage.messages(b);
        QCOMPARE(ma.size(), 3);
        QCOMPARE(mb.size(), 3);
        QCOMPARE(f.storage.toolCalls(ma[1].id).value(0).result, QStringLiteral("42"));
        QVERIFY(f.storage.toolCalls(mb[1].id).value(0).result.contains(u"UTC"));
        QCOMPARE(ma[2].content, QStringLiteral("Done."));
        QCOMPARE(mb[2].content, QStringLiteral("Done."));
    }

    // A call of a tool that does not exist fails at once (nothing to approve),
    // and the model is told so in the next turn.
    void aCallOfAnUnknownToolFailsAtOnce() {
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "1"}})", "Sorry."});
        f.tools.setPolicy(QStringLiteral("calculator"), QStringLiteral("ask"));
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QSignalSpy changed(f.chat.get(), &ChatController::toolCallChanged);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(f.chat->sendForcing(conv, QStringLiteral("go"), QStringLiteral("calculator")));
        // The calculator goes away while the reply is written (its policy becomes "never").
        QTRY_VERIFY_WITH_TIMEOUT(f.chat->generatingCount() == 1, patienceMs());
        f.tools.setPolicy(QStringLiteral("calculator"), QStringLiteral("never"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        const QList<MessageRecord> stored = f.storage.messages(conv);
        const QList<ToolCallRecord> calls = f.storage.toolCalls(stored[1].id);
        QCOMPARE(calls.value(0).state, QStringLiteral("failed"));
        QCOMPARE(calls.value(0).result, QStringLiteral("the user does not allow 'calculator'"));
        QCOMPARE(changed.count(), 1);  // failed at once: never pending, never running
        QCOMPARE(stored.last().content, QStringLiteral("Sorry."));
    }

    // An agent session that outgrows the context is cut like a plain chat
    // (the conversation's policy), at a user message, so a call is never sent
    // without its result or a result without its call.
    void aLongAgentSessionIsFittedToTheContext_data() {
        QTest::addColumn<QString>("policy");
        QTest::newRow("rolling window") << QStringLiteral("rollingWindow");
        QTest::newRow("stop") << QStringLiteral("stop");
    }
    void aLongAgentSessionIsFittedToTheContext() {
        QFETCH(QString, policy);
        // The fake counts a word of the messages JSON as a token: a context of
        // 60 with 8 kept for the reply.
        Fixture f({R"({"name": "calculator", "arguments": {"expression": "(2+3)*4"}})", "The answer is 20.", "Fine."}, 60);
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        const qint64 conv = f.chat->newConversation();
        f.chat->setSettings({{"maxTokens", 8}, {"systemPrompt", "Be brief."}, {"contextPolicy", policy}});
        auto words = [](const QString& stem, int n) {
            QStringList out;
            for (int i = 0; i < n; ++i) out << stem + QString::number(i);
            return out.join(u' ');
        };
        QVERIFY(f.chat->sendForcing(conv, words(QStringLiteral("a"), 20), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(f.chat->contextTokens(), 60);
        QVERIFY(f.chat->currentToolsEnabled());
        QCOMPARE(f.storage.messages(conv).value(2).content, QStringLiteral("The answer is 20."));
        QCOMPARE(requestsSubmitted(f), size_t(2));
        QCOMPARE(lastChatPrepared(f).size(), 4);  // system, question, call, result: all of it fits

        // 30 more words: the whole session no longer fits, the last question does.
        QVERIFY(f.chat->send(words(QStringLiteral("b"), 30)));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, patienceMs());
        const QList<MessageRecord> stored = f.storage.messages(conv);
        QCOMPARE(stored.size(), 5);
        if (policy == u"stop") {
            QCOMPARE(stored[4].state, MessageState::Failed);
            QVERIFY2(stored[4].error.contains(QStringLiteral("context of 60 tokens")), qPrintable(stored[4].error));
            QCOMPARE(requestsSubmitted(f), size_t(2));  // nothing reached the engine
            return;
        }
        QCOMPARE(stored[4].state, MessageState::Complete);
        QCOMPARE(stored[4].content, QStringLiteral("Fine."));
        QCOMPARE(requestsSubmitted(f), size_t(3));
        const QJsonArray sent = lastChatPrepared(f);
        QCOMPARE(sent.size(), 2);
        QCOMPARE(sent[0].toObject()["content"].toString(), QStringLiteral("Be brief."));  // the system prompt stays
        QCOMPARE(sent[1].toObject()["role"].toString(), QStringLiteral("user"));
        QVERIFY(sent[1].toObject()["content"].toString().startsWith(u"b0 "));
        // The reply records where its context began; the view marks it.
        QCOMPARE(stored[4].contextFromId, stored[3].id);
        QCOMPARE(f.chat->messages()->contextStart(), stored[3].id);
        QVERIFY(f.chat->contextUsed() <= 60);
    }

    void toolsOffMeansAPlainChat() {
        Fixture f({"Hello there."});
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 conv = f.chat->newConversation();
        QVERIFY(!f.chat->currentToolsEnabled());
        QVERIFY(f.chat->send(QStringLiteral("Hi")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        std::lock_guard lock(f.config.record->mutex);
        QVERIFY(f.config.record->toolChats.empty());  // no tools in the prompt
        QCOMPARE(f.storage.messages(conv).last().content, QStringLiteral("Hello there."));
    }
};

QTEST_MAIN(AgentLoopTest)
#include "agent_loop_test.moc"
