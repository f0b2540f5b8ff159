// ChatController on the fake engine: send streams a reply into its
// conversation and stores it; two conversations generate at the same time;
// beyond max running they wait in a visible queue; stop keeps the partial
// text; regenerate, edit-and-resend, delete with undo, search, settings
// reaching the request, progress saved while streaming, errors in place, and
// a full disk: the reply stays on screen marked "not saved", a banner says
// why, and it is saved once there is room again.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using testing::FakeEngineConfig;

namespace {

struct Fixture {
    explicit Fixture(FakeEngineConfig config = {}, int maxRunning = 2, int maxContext = 0)
        : storage(dir.path()), host(FakeEngineBackend::factory(config)) {
        QVERIFY(storage.open());
        weir::EngineOptions options;
        options.maxRunningRequests = maxRunning;
        options.maxContext = maxContext;
        host.setEngineOptions(options);
        host.setStatusInterval(10);
        chat = std::make_unique<ChatController>(&storage, &host);
        host.load(QStringLiteral("fake.gguf"));
        QTRY_VERIFY_WITH_TIMEOUT(host.state() == EngineHost::Ready, 30000);
    }
    QTemporaryDir dir;
    Storage storage;
    EngineHost host;
    std::unique_ptr<ChatController> chat;
};

QStringList contents(const QList<MessageRecord>& list) {
    QStringList out;
    for (const MessageRecord& m : list) out << m.content;
    return out;
}

// Ten words: twelve tokens for the fake (a word each, two for the turn).
QString tenWords(const QString& tag) {
    QStringList words;
    for (int i = 0; i < 10; ++i) words << tag + QString::number(i);
    return words.join(u' ');
}

QString expectedReply(qint64 conv, int promptTokens) {
    return QString::fromStdString(testing::fakeReplyFor(
        QStringLiteral("%1:%2 (%3 tokens)").arg(kConversationTagKind).arg(conv).arg(promptTokens).toStdString()));
}

} // namespace

class ChatControllerTest : public QObject {
    Q_OBJECT
private slots:
    void sendStreamsAndStores() {
        Fixture f;
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QCOMPARE(f.chat->currentId(), id);
        QVERIFY(f.chat->send(QStringLiteral("Hello world")));
        QVERIFY(f.chat->currentGenerating());
        QCOMPARE(f.chat->messages()->rowCount(), 2);
        QCOMPARE(f.chat->currentTitle(), QStringLiteral("Hello world"));
        QVERIFY(!f.chat->send(QStringLiteral("again")));  // one reply at a time per conversation
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));

        const auto stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].content, expectedReply(id, 4));
        QCOMPARE(stored[1].state, MessageState::Complete);
        QCOMPARE(stored[1].tokensPerSecond, 250.0);
        QVERIFY(stored[1].completionTokens > 10);
        QCOMPARE(f.chat->messages()->get(1).value("content").toString(), stored[1].content);
        QVERIFY(!f.chat->currentGenerating());
    }

    // A reply reads its conversation's branch from the database once: its
    // prompt, the context cut it keeps and the view come from that read.
    void aReplyReadsItsBranchOnce() {
        Fixture f;
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("Hello world")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        const quint64 before = f.storage.branchReads();
        QVERIFY(f.chat->sendTo(id, QStringLiteral("And again")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        // One places the user's message at the end of the branch
        // (Storage::appendMessage), one is the reply's.
        QCOMPARE(f.storage.branchReads() - before, quint64(2));
        QCOMPARE(f.storage.messages(id).size(), 4);
    }

    // Editing the question while its reply streams ends that reply at once;
    // the engine's own "cancelled", arriving later, ends nothing again: every
    // reply ends exactly once.
    void aReplyEndsExactlyOnce() {
        FakeEngineConfig config;
        config.endless = true;
        Fixture f(config);
        QHash<qint64, QStringList> endings;  // by message id
        connect(f.chat.get(), &ChatController::replyEnded,
                [&](qint64, qint64 messageId, const QString& state) { endings[messageId] << state; });
        int engineCancelled = 0;
        connect(&f.host, &EngineHost::cancelled, [&](quint64, const weir::Usage&) { ++engineCancelled; });
        QSignalSpy tokens(f.chat.get(), &ChatController::replyTokens);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("first question")));
        QTRY_VERIFY_WITH_TIMEOUT(tokens.count() > 0, 30000);
        const qint64 question = f.storage.messages(id)[0].id;
        const qint64 oldReply = f.storage.messages(id)[1].id;
        QVERIFY(f.chat->editAndResend(question, QStringLiteral("second question")));
        QCOMPARE(endings.value(oldReply), QStringList{QStringLiteral("cancelled")});
        QTRY_COMPARE_WITH_TIMEOUT(engineCancelled, 1, 30000);
        f.chat->stop();
        QTRY_COMPARE_WITH_TIMEOUT(engineCancelled, 2, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(endings.size(), 2, 30000);
        QCOMPARE(endings.value(oldReply), QStringList{QStringLiteral("cancelled")});
        for (const QStringList& e : std::as_const(endings)) QCOMPARE(e.size(), 1);
        QVERIFY(!f.chat->currentGenerating());
    }

    // A reply keeps the name of the model that wrote it: after another model
    // is loaded, its label still names the one that wrote it.
    void aReplyNamesTheModelThatWroteIt() {
        Fixture f;
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("Hello world")));
        QCOMPARE(f.chat->messages()->get(1).value("modelName").toString(), QStringLiteral("Fake Gemma"));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        MessageRecord reply = f.storage.messages(id)[1];
        QCOMPARE(reply.model, QStringLiteral("Fake Gemma"));
        QCOMPARE(f.chat->messages()->get(1).value("modelName").toString(), QStringLiteral("Fake Gemma"));

        // As if it had been written by another model than the one loaded now.
        reply.model = QStringLiteral("SmolLM2 135M Instruct");
        QVERIFY(f.storage.updateMessage(reply));
        QVERIFY(f.chat->sendTo(id, QStringLiteral("And again")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        f.chat->select(id);
        QCOMPARE(f.chat->messages()->get(1).value("modelName").toString(), QStringLiteral("SmolLM2 135M Instruct"));
        QCOMPARE(f.chat->messages()->get(3).value("modelName").toString(), QStringLiteral("Fake Gemma"));
        QCOMPARE(f.chat->messages()->get(0).value("modelName").toString(), QString());  // the user's turn
    }

    // Speculative decoding's counts reach the stored reply and the model's
    // roles as the engine reported them at the end of the request.
    void draftCountsAreStoredAsTheEngineReported() {
        FakeEngineConfig config;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        Fixture f(config);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("Hello world")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        weir::Usage reported;
        {
            std::lock_guard lock(config.record->mutex);
            QCOMPARE(config.record->usages.size(), size_t(1));
            reported = config.record->usages[0];
        }
        QVERIFY(reported.draftTokens > 0);  // the fake's reply repeats words
        QVERIFY(reported.acceptedDraftTokens <= reported.draftTokens);
        const MessageRecord stored = f.storage.messages(id)[1];
        QCOMPARE(stored.draftTokens, reported.draftTokens);
        QCOMPARE(stored.acceptedDraftTokens, reported.acceptedDraftTokens);
        const QVariantMap row = f.chat->messages()->get(1);
        QCOMPARE(row.value("draftTokens").toInt(), reported.draftTokens);
        QCOMPARE(row.value("acceptedDraftTokens").toInt(), reported.acceptedDraftTokens);
        QCOMPARE(f.chat->messages()->get(0).value("draftTokens").toInt(), 0);  // the user's turn
    }

    void twoConversationsStreamAtTheSameTime() {
        Fixture f;
        const qint64 a = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("first")));
        const qint64 b = f.chat->newConversation();  // switch, start another
        QVERIFY(f.chat->send(QStringLiteral("second")));
        QCOMPARE(f.chat->generatingCount(), 2);
        // Interleaving: a token of each arrives while the other is still running.
        QSet<qint64> streaming, ended;
        bool overlapped = false;
        connect(f.chat.get(), &ChatController::replyTokens, [&](qint64 conv, int) {
            streaming.insert(conv);
            if (streaming.contains(a) && streaming.contains(b) && ended.isEmpty()) overlapped = true;
        });
        connect(f.chat.get(), &ChatController::replyEnded, [&](qint64 conv, qint64, const QString&) { ended.insert(conv); });
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, 30000);
        QVERIFY(overlapped);
        QCOMPARE(f.storage.messages(a)[1].content, expectedReply(a, 3));
        QCOMPARE(f.storage.messages(b)[1].content, expectedReply(b, 3));
        // The conversation on screen is b; a's reply went to storage, not to b's view.
        QCOMPARE(f.chat->messages()->get(0).value("content").toString(), QStringLiteral("second"));
    }

    void beyondMaxRunningTheyQueue() {
        Fixture f({}, 1);
        QList<qint64> ids;
        QSignalSpy tokens(f.chat.get(), &ChatController::replyTokens);
        for (int i = 0; i < 3; ++i) {
            ids << f.chat->newConversation();
            QVERIFY(f.chat->send(QStringLiteral("q%1").arg(i)));
            // The first one runs before the others arrive (on a loaded machine
            // all three could otherwise still be waiting, as positions 1-3).
            if (i == 0) QTRY_VERIFY_WITH_TIMEOUT(tokens.count() > 0, 30000);
        }
        bool sawQueue = false;
        int bestPosition = 0;
        connect(&f.host, &EngineHost::statusUpdated, [&](const weir::CacheStatus&) {
            for (qint64 id : ids) {
                const int row = f.chat->conversations()->rowOf(id);
                const auto idx = f.chat->conversations()->index(row);
                if (f.chat->conversations()->data(idx, ConversationListModel::ActivityRole).toString() == u"waiting") {
                    sawQueue = true;
                    bestPosition = std::max(bestPosition,
                                            f.chat->conversations()->data(idx, ConversationListModel::QueuePositionRole).toInt());
                }
            }
        });
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, 30000);
        QVERIFY(sawQueue);
        QCOMPARE(bestPosition, 2);  // third in line = second in the queue
    }

    void stopKeepsThePartialReply() {
        FakeEngineConfig config;
        config.endless = true;
        Fixture f(config);
        const qint64 id = f.chat->newConversation();
        QSignalSpy tokens(f.chat.get(), &ChatController::replyTokens);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("go on")));
        QTRY_VERIFY_WITH_TIMEOUT(tokens.count() > 3, 30000);
        f.chat->stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("cancelled"));
        const auto stored = f.storage.messages(id);
        QCOMPARE(stored[1].state, MessageState::Cancelled);
        QVERIFY(stored[1].content.startsWith(QStringLiteral("word0 ")));
        // Before: a stopped reply was stored (and exported) with 0 prompt tokens.
        QVERIFY2(stored[1].promptTokens > 0, qPrintable(QString::number(stored[1].promptTokens)));
        QVERIFY(stored[1].completionTokens > 3);
    }

    // A reload (new engine settings, another model) ends the replies in
    // progress: the reply keeps its text and figures, and Continue writes on.
    void aReplyCutByAReloadKeepsItsFiguresAndContinues() {
        FakeEngineConfig config;
        config.endless = true;
        Fixture f(config);
        const qint64 id = f.chat->newConversation();
        QSignalSpy tokens(f.chat.get(), &ChatController::replyTokens);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("go on")));
        QTRY_VERIFY_WITH_TIMEOUT(tokens.count() > 3, 30000);
        f.host.load(QStringLiteral("fake.gguf"));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(f.host.state() == EngineHost::Ready, 30000);
        const MessageRecord cut = f.storage.messages(id)[1];
        QCOMPARE(cut.state, MessageState::Failed);
        QVERIFY(cut.content.startsWith(QStringLiteral("word0 ")));
        QVERIFY2(cut.promptTokens > 0, qPrintable(QString::number(cut.promptTokens)));
        QVERIFY2(cut.completionTokens > 3, qPrintable(QString::number(cut.completionTokens)));
        QCOMPARE(f.chat->contextUsed(), cut.promptTokens + cut.completionTokens);  // not "0 / N tokens"
        QVERIFY(f.chat->continueReply(cut.id));
        QTRY_VERIFY_WITH_TIMEOUT(f.chat->isGenerating(id), 30000);
        f.chat->stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        const MessageRecord written = f.storage.messages(id)[1];
        QCOMPARE(written.id, cut.id);
        QVERIFY(written.content.startsWith(cut.content));
    }

    void progressIsSavedWhileStreaming() {
        FakeEngineConfig config;
        config.endless = true;
        config.tokenIntervalMs = 5;
        Fixture f(config);
        QVERIFY(f.chat->saveIntervalMs() <= 2000);
        f.chat->setSaveInterval(50);
        const qint64 id = f.chat->newConversation();
        QSignalSpy saved(f.chat.get(), &ChatController::replySaved);
        QVERIFY(f.chat->send(QStringLiteral("stream")));
        QTRY_VERIFY_WITH_TIMEOUT(saved.count() >= 2, 30000);
        const auto stored = f.storage.messages(id);
        QCOMPARE(stored[1].state, MessageState::Streaming);
        QVERIFY(stored[1].content.size() >= saved.last().at(2).toInt());
        f.chat->stop();
    }

    void regenerateAndEditMakeVersionsAndSwitchingShowsTheirBranch() {
        FakeEngineConfig config;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        Fixture f(config);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("one two")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        const qint64 question = f.storage.messages(id)[0].id;
        const qint64 firstReply = f.storage.messages(id)[1].id;

        // Regenerate: a second version of the reply; the first is kept.
        QVERIFY(f.chat->regenerate());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        auto stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        const qint64 secondReply = stored[1].id;
        QVERIFY(secondReply != firstReply);
        QCOMPARE(stored[1].versionIndex, 1);
        QCOMPARE(stored[1].versionCount, 2);
        QVERIFY(f.storage.message(firstReply));
        QCOMPARE(f.chat->messages()->rowCount(), 2);
        QCOMPARE(f.chat->messages()->get(1).value("versionCount").toInt(), 2);
        {
            // The regenerated reply was asked for with the question alone.
            std::lock_guard lock(config.record->mutex);
            QCOMPARE(config.record->chats.back().size(), size_t(1));
        }

        QVERIFY(f.chat->send(QStringLiteral("three")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, 30000);
        QCOMPARE(f.storage.messages(id).size(), 4);

        // The first version had no later turns: switching to it shows that.
        QVERIFY(f.chat->switchVersion(secondReply, -1));
        QCOMPARE(contents(f.storage.messages(id)).size(), 2);
        QCOMPARE(f.chat->messages()->rowCount(), 2);
        QCOMPARE(f.chat->messages()->get(1).value("messageId").toLongLong(), firstReply);
        QCOMPARE(f.chat->messages()->get(1).value("versionIndex").toInt(), 0);
        QVERIFY(!f.chat->switchVersion(firstReply, -1));  // no version before the first
        QVERIFY(f.chat->switchVersion(firstReply, 1));
        QCOMPARE(f.chat->messages()->rowCount(), 4);
        QCOMPARE(f.chat->messages()->get(2).value("content").toString(), QStringLiteral("three"));

        // Edit the first question: a new version of it with a new reply; the
        // old question keeps its whole branch.
        QVERIFY(f.chat->editAndResend(question, QStringLiteral("one two three four")));
        QVERIFY(!f.chat->switchVersion(question, 1));  // not while it generates
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 4, 30000);
        stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("one two three four"));
        QCOMPARE(stored[0].versionCount, 2);
        QCOMPARE(stored[1].content, expectedReply(id, 6));
        QCOMPARE(f.chat->messages()->rowCount(), 2);
        QCOMPARE(f.storage.allMessages(id).size(), 7);
        {
            std::lock_guard lock(config.record->mutex);
            const auto& sent = config.record->chats.back();
            QCOMPARE(sent.size(), size_t(1));
            QCOMPARE(sent[0].content, std::string("one two three four"));
        }
        QVERIFY(f.chat->switchVersion(stored[0].id, -1));
        QCOMPARE(contents(f.storage.messages(id)),
                 (QStringList{QStringLiteral("one two"), f.storage.message(secondReply)->content, QStringLiteral("three"),
                              f.storage.messages(id)[3].content}));

        // JSON export keeps every version; Markdown is the branch on screen;
        // the JSON imports back with its versions.
        QTemporaryDir out;
        const QString json = out.filePath(QStringLiteral("c.json")), md = out.filePath(QStringLiteral("c.md"));
        QVERIFY(f.chat->exportConversation(id, QUrl::fromLocalFile(json), QStringLiteral("json")));
        QVERIFY(f.chat->exportConversation(id, QUrl::fromLocalFile(md), QStringLiteral("markdown")));
        QFile jf(json), mf(md);
        QVERIFY(jf.open(QIODevice::ReadOnly) && mf.open(QIODevice::ReadOnly));
        const QByteArray jsonText = jf.readAll();
        const QString mdText = QString::fromUtf8(mf.readAll());
        QVERIFY(jsonText.contains("one two three four"));
        QVERIFY(!mdText.contains(QStringLiteral("one two three four")));
        QVERIFY(mdText.contains(QStringLiteral("three")));
        const qint64 imported = f.chat->importConversation(QUrl::fromLocalFile(json));
        QVERIFY(imported > 0);
        QCOMPARE(f.storage.allMessages(imported).size(), 7);
        QCOMPARE(contents(f.storage.messages(imported)), contents(f.storage.messages(id)));
        QCOMPARE(f.storage.messages(imported)[0].versionCount, 2);
    }

    void deleteOneMessage() {
        Fixture f;
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("first")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        QVERIFY(f.chat->send(QStringLiteral("second")));
        QVERIFY(!f.chat->deleteMessage(f.storage.messages(id)[0].id));  // not while a reply is written
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        const auto before = f.storage.messages(id);
        QVERIFY(f.chat->deleteMessage(before[2].id));  // "second": the reply after it stays
        const auto after = f.storage.messages(id);
        QCOMPARE(after.size(), 3);
        QCOMPARE(after[2].id, before[3].id);
        QCOMPARE(f.chat->messages()->rowCount(), 3);
        QVERIFY(!f.storage.message(before[2].id));
        QVERIFY(!f.chat->deleteMessage(before[2].id));  // already gone

        // Undo puts it back where it was.
        QCOMPARE(f.chat->undoText(), QStringLiteral("Deleted a message"));
        f.chat->undoRemove();
        QCOMPARE(contents(f.storage.messages(id)), contents(before));
        QCOMPARE(f.storage.messages(id)[3].parentId, before[2].id);
        QCOMPARE(f.chat->messages()->rowCount(), 4);
        QVERIFY(f.chat->undoText().isEmpty());

        // A version goes with its branch, and comes back with it and its tool calls.
        weir::desktop::ToolCallRecord call;
        call.messageId = before[3].id;
        call.name = QStringLiteral("calculator");
        call.arguments = QStringLiteral("{\"x\": 1}");
        QVERIFY(f.storage.addToolCall(call));
        QVERIFY(f.chat->regenerateMessage(before[1].id));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, 30000);
        QVERIFY(f.chat->switchVersion(f.storage.messages(id)[1].id, -1));
        QCOMPARE(contents(f.storage.messages(id)), contents(before));
        QVERIFY(f.chat->deleteMessage(before[1].id));
        QCOMPARE(f.chat->undoText(), QStringLiteral("Deleted a version and the turns that followed it"));
        QCOMPARE(f.storage.messages(id).size(), 2);  // the other version, shown now
        QVERIFY(!f.storage.message(before[3].id));
        f.chat->undoRemove();
        QCOMPARE(contents(f.storage.messages(id)), contents(before));
        QCOMPARE(f.storage.toolCalls(before[3].id).size(), 1);
        QCOMPARE(f.storage.messages(id)[1].versionCount, 2);
    }

    void continueWritesOnAtTheTokenLimit() {
        FakeEngineConfig config;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        Fixture f(config);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        f.chat->setSettings({{"maxTokens", 5}});
        QVERIFY(f.chat->send(QStringLiteral("Tell me more")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        const MessageRecord partial = f.storage.messages(id)[1];
        QCOMPARE(partial.finishReason, QStringLiteral("length"));
        QCOMPARE(partial.completionTokens, 5);
        QCOMPARE(f.chat->messages()->get(1).value("finishReason").toString(), QStringLiteral("length"));
        QVERIFY(!f.chat->continueReply(f.storage.messages(id)[0].id));  // a user message: nothing to continue

        QVERIFY(f.chat->continueReply(partial.id));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        const auto stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);  // the same message, longer
        QCOMPARE(stored[1].id, partial.id);
        QVERIFY(stored[1].content.startsWith(partial.content));
        QVERIFY(stored[1].content.size() > partial.content.size());
        QCOMPARE(stored[1].completionTokens, 10);                // both parts
        QCOMPARE(stored[1].promptTokens, partial.promptTokens);  // the conversation's, once
        // Cached is the first prompt's too: the second part's prompt also holds
        // the reply so far, so its cached count can exceed the first prompt.
        QCOMPARE(stored[1].cachedTokens, partial.cachedTokens);
        QVERIFY(stored[1].cachedTokens <= stored[1].promptTokens);
        QCOMPARE(stored[1].finishReason, QStringLiteral("length"));
        std::lock_guard lock(config.record->mutex);
        QCOMPARE(config.record->usages.size(), size_t(2));  // drafts of both parts, too
        QCOMPARE(stored[1].draftTokens, config.record->usages[0].draftTokens + config.record->usages[1].draftTokens);
        QCOMPARE(stored[1].acceptedDraftTokens,
                 config.record->usages[0].acceptedDraftTokens + config.record->usages[1].acceptedDraftTokens);
        QVERIFY(config.record->continuations.back());
        const auto& sent = config.record->chats.back();
        QCOMPARE(sent.size(), size_t(2));
        QCOMPARE(sent[1].role, std::string("assistant"));
        QCOMPARE(QString::fromStdString(sent[1].content), partial.content);
    }

    void aMessageThatCannotFitIsRefusedAndRetryReplacesTheFailure() {
        Fixture f({}, 2, 60);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        f.chat->setSettings({{"maxTokens", 8}, {"contextPolicy", "rollingWindow"}});
        QStringList words;
        for (int i = 0; i < 60; ++i) words << QStringLiteral("w%1").arg(i);
        QVERIFY(f.chat->send(words.join(u' ')));  // 62 tokens: over the context whatever is dropped
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        const MessageRecord failed = f.storage.messages(id)[1];
        QCOMPARE(failed.state, MessageState::Failed);
        QVERIFY2(failed.error.contains(QStringLiteral("The last message alone needs 70 tokens")), qPrintable(failed.error));
        // Retry fails the same way, and replaces the empty failed reply instead of adding a version.
        QVERIFY(f.chat->regenerate());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
        QVERIFY(!f.storage.message(failed.id));
        QCOMPARE(f.storage.messages(id)[1].state, MessageState::Failed);
        QCOMPARE(f.storage.messages(id)[1].versionCount, 1);
        QCOMPARE(f.chat->messages()->rowCount(), 2);
    }

    void contextPolicies_data() {
        QTest::addColumn<QString>("policy");
        QTest::addColumn<int>("firstSentAtTurnThree");  // index in the branch of the first message sent; -1: refused
        QTest::newRow("stop") << QStringLiteral("stop") << -1;
        QTest::newRow("rolling window") << QStringLiteral("rollingWindow") << 2;
        QTest::newRow("drop oldest") << QStringLiteral("dropOldest") << 4;
    }
    void contextPolicies() {
        QFETCH(QString, policy);
        QFETCH(int, firstSentAtTurnThree);
        FakeEngineConfig config;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        // A context of 60 tokens; 8 kept for the reply. Each exchange is 22
        // tokens (12 + 10), the system prompt 4: the third question does not fit.
        Fixture f(config, 2, 60);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        f.chat->setSettings({{"maxTokens", 8}, {"systemPrompt", "Be brief."}, {"contextPolicy", policy}});
        QCOMPARE(f.chat->contextTokens(), 60);
        for (int turn = 1; turn <= 2; ++turn) {
            QVERIFY(f.chat->send(tenWords(QStringLiteral("t%1w").arg(turn))));
            QTRY_COMPARE_WITH_TIMEOUT(ended.count(), turn, 30000);
        }
        QCOMPARE(f.chat->contextUsed(), 38 + 8);  // the second reply's prompt and completion
        QCOMPARE(f.chat->messages()->contextStart(), 0);

        QVERIFY(f.chat->send(tenWords(QStringLiteral("t3w"))));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, 30000);
        const auto branch = f.storage.messages(id);
        QCOMPARE(branch.size(), 6);
        if (firstSentAtTurnThree < 0) {
            QCOMPARE(branch[5].state, MessageState::Failed);
            QVERIFY2(branch[5].error.contains(QStringLiteral("context of 60 tokens")), qPrintable(branch[5].error));
            return;
        }
        QCOMPARE(branch[5].state, MessageState::Complete);
        QCOMPARE(branch[5].contextFromId, branch[firstSentAtTurnThree].id);
        QCOMPARE(f.chat->messages()->contextStart(), branch[firstSentAtTurnThree].id);
        QVERIFY(f.chat->messages()->get(firstSentAtTurnThree).value("contextStart").toBool());
        {
            std::lock_guard lock(config.record->mutex);
            const auto& sent = config.record->chats.back();
            QCOMPARE(sent.front().content, std::string("Be brief."));  // the system prompt is always sent
            QCOMPARE(QString::fromStdString(sent[1].content), branch[firstSentAtTurnThree].content);
            QCOMPARE(sent.size(), size_t(1 + 6 - 1 - firstSentAtTurnThree));
        }
        // Drop oldest keeps its cut for the next turn while it fits.
        QVERIFY(f.chat->send(tenWords(QStringLiteral("t4w"))));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 4, 30000);
        const auto later = f.storage.messages(id);
        if (policy == u"dropOldest") QCOMPARE(later[7].contextFromId, branch[4].id);
        QVERIFY(later[7].contextFromId != 0);
        QVERIFY(f.chat->contextUsed() <= 60);
    }

    void deleteWithUndoAndSearch() {
        Fixture f;
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 a = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("about rivers")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        const qint64 b = f.chat->newConversation();
        f.chat->rename(b, QStringLiteral("Mountains"));
        QCOMPARE(f.chat->conversations()->count(), 2);

        f.chat->setSearchText(QStringLiteral("RIVERS"));
        QCOMPARE(f.chat->conversations()->count(), 1);
        QCOMPARE(f.chat->conversations()->idAt(0), a);
        f.chat->setSearchText(QStringLiteral("doubled"));  // in the reply's code block
        QCOMPARE(f.chat->conversations()->count(), 1);
        f.chat->setSearchText(QString());
        QCOMPARE(f.chat->conversations()->count(), 2);

        f.chat->remove(a);
        QCOMPARE(f.chat->conversations()->count(), 1);
        QVERIFY(f.chat->undoText().contains(QStringLiteral("about rivers")));
        f.chat->undoRemove();
        QCOMPARE(f.chat->conversations()->count(), 2);
        QCOMPARE(f.chat->currentId(), a);
        QVERIFY(f.chat->undoText().isEmpty());

        f.chat->remove(b);
        f.chat->purgeRemoved();
        QVERIFY(!f.storage.conversation(b));
        QVERIFY(f.storage.conversation(a));
    }

    void settingsReachTheRequest() {
        FakeEngineConfig config;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        Fixture f(config);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        f.chat->newConversation();
        f.chat->setSettings({{"systemPrompt", "Answer in French."}, {"temperature", 0.25}, {"topP", 0.5},
                             {"topK", 12}, {"maxTokens", 7}, {"seed", 99}});
        QCOMPARE(f.chat->currentSettings().value("topK").toInt(), 12);
        QVERIFY(f.chat->send(QStringLiteral("Bonjour")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        std::lock_guard lock(config.record->mutex);
        QCOMPARE(config.record->requests.size(), size_t(1));
        const weir::GenerateRequest& r = config.record->requests[0];
        QCOMPARE(r.sampling.temperature, 0.25f);
        QCOMPARE(r.sampling.topP, 0.5f);
        QCOMPARE(r.sampling.topK, 12);
        QCOMPARE(r.sampling.seed, uint64_t(99));
        QCOMPARE(r.maxTokens, 7);
        const auto& chat = config.record->chats[0];
        QCOMPARE(chat.size(), size_t(2));
        QCOMPARE(chat[0].role, std::string("system"));
        QCOMPARE(chat[0].content, std::string("Answer in French."));
        QCOMPARE(chat[1].content, std::string("Bonjour"));
        // maxTokens 7: the reply stops at 7 tokens.
        QCOMPARE(f.storage.messages(f.chat->currentId())[1].completionTokens, 7);
    }

    // The sidebar moves a conversation up when a message is sent in it, and
    // for nothing else: not a reply ending or stopped, not a settings change.
    void orderFollowsSentMessagesOnly() {
        FakeEngineConfig config;
        config.endless = true;  // replies run until stopped
        Fixture f(config);
        auto order = [&] {
            QList<qint64> ids;
            for (int i = 0; i < f.chat->conversations()->count(); ++i) ids << f.chat->conversations()->idAt(i);
            return ids;
        };
        const qint64 a = f.chat->newConversation();
        const qint64 b = f.chat->newConversation();
        QVERIFY(f.chat->sendTo(b, QStringLiteral("to b")));
        QTest::qWait(5);  // timestamps are in ms
        QVERIFY(f.chat->sendTo(a, QStringLiteral("to a")));
        QCOMPARE(order(), (QList<qint64>{a, b}));

        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QTest::qWait(5);
        f.chat->stopConversation(b);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        f.chat->setSettingsOf(b, {{QStringLiteral("temperature"), 0.2}});
        f.chat->select(b);
        f.chat->setSettings({{QStringLiteral("systemPrompt"), QStringLiteral("Be brief.")}});
        QCOMPARE(order(), (QList<qint64>{a, b}));
        f.chat->reload();  // the same from the database
        QCOMPARE(order(), (QList<qint64>{a, b}));
        QCOMPARE(f.storage.conversation(b)->settings.temperature, 0.2);
        QCOMPARE(f.storage.conversation(b)->settings.systemPrompt, QStringLiteral("Be brief."));
        f.chat->stopAll();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, 30000);
    }

    // Ctrl+N opens an empty conversation when there is one instead of adding another.
    void emptyConversationsAreFound() {
        Fixture f;
        QVERIFY(f.chat->emptyConversations().isEmpty());
        const qint64 a = f.chat->newConversation();
        const qint64 b = f.chat->newConversation();
        QCOMPARE(f.chat->emptyConversations(), (QList<qint64>{b, a}));  // most recent first
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->sendTo(b, QStringLiteral("now b has messages")));
        QCOMPARE(f.chat->emptyConversations(), (QList<qint64>{a}));
        f.chat->rename(a, QStringLiteral("Named on purpose"));
        QVERIFY(f.chat->emptyConversations().isEmpty());  // a renamed one is kept for its name
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
    }

    // Before: the reply kept showing "writing..." while every save failed, and
    // its end state never reached the database, with no word on screen.
    void diskFullKeepsTheReplyAndSavesItWhenThereIsRoom() {
        FakeEngineConfig config;
        config.endless = true;
        config.tokenIntervalMs = 2;
        Fixture f(config);
        f.chat->setSaveInterval(50);
        const qint64 id = f.chat->newConversation();
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("fill the disk")));
        f.storage.setPageLimitForTesting(1);  // the GUI thread's connection, which the controller writes through
        QTRY_VERIFY_WITH_TIMEOUT(!f.chat->saveProblem().isEmpty(), 30000);
        QVERIFY2(f.chat->saveProblem().contains(QStringLiteral("disk is full")), qPrintable(f.chat->saveProblem()));
        QCOMPARE(f.chat->messages()->get(1).value("saved").toBool(), false);
        QCOMPARE(f.chat->unsavedCount(), 1);

        f.chat->stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        // The end state waits in memory; the database still has the last text that fitted.
        const QVariantMap shown = f.chat->messages()->get(1);
        QCOMPARE(shown.value("state").toString(), QStringLiteral("cancelled"));
        QCOMPARE(shown.value("saved").toBool(), false);
        QCOMPARE(f.chat->unsavedCount(), 1);
        QCOMPARE(f.storage.messages(id)[1].state, MessageState::Streaming);
        QVERIFY(f.storage.messages(id)[1].content.size() < shown.value("content").toString().size());
        // Switching away and back shows the reply as it is, not as stored.
        const qint64 other = f.chat->newConversation();
        QVERIFY(other != id);
        f.chat->select(id);
        QCOMPARE(f.chat->messages()->get(1).value("content"), shown.value("content"));
        QCOMPARE(f.chat->messages()->get(1).value("saved").toBool(), false);

        f.storage.setPageLimitForTesting(0);  // room again
        QTRY_VERIFY_WITH_TIMEOUT(f.chat->saveProblem().isEmpty(), 30000);
        QCOMPARE(f.chat->unsavedCount(), 0);
        const MessageRecord stored = f.storage.messages(id)[1];
        QCOMPARE(stored.state, MessageState::Cancelled);
        QCOMPARE(stored.content, shown.value("content").toString());
        QCOMPARE(f.chat->messages()->get(1).value("saved").toBool(), true);
    }

    void engineErrorsShowInPlace() {
        FakeEngineConfig config;
        config.refuseTagKind = kConversationTagKind;
        Fixture f(config);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        const qint64 id = f.chat->newConversation();
        QVERIFY(f.chat->send(QStringLiteral("anything")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const auto stored = f.storage.messages(id);
        QCOMPARE(stored[1].state, MessageState::Failed);
        QVERIFY(stored[1].error.contains(QStringLiteral("can never fit")));
        QCOMPARE(f.chat->messages()->get(1).value("error").toString(), stored[1].error);
    }
};

QTEST_GUILESS_MAIN(ChatControllerTest)
#include "chat_controller_test.moc"
