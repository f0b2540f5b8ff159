// Storage: the database is WAL with foreign keys on; conversations, messages
// and tool calls round-trip; search covers titles and content; delete is
// undoable until purged and cascades to messages and tool calls. When storage
// fails, the failure says what it is (a full disk, a file that cannot be
// written, a damaged file), a damaged or unwritable file is never written to
// and opens read-only or not at all, backup copies rotate, and restoring one
// keeps the damaged file under another name.
#include <QDir>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "DatabaseDamage.h"
#include "storage/Storage.h"
#include "storage/StorageCheckpointer.h"
#include <QFileInfo>

using namespace weir::desktop;
using namespace weir::desktop::testing;

class StorageTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void opensWithWalAndForeignKeys() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QCOMPARE(s.schemaVersion(), Storage::latestSchemaVersion());
        // Check from an independent connection what the file says.
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("check"));
            db.setDatabaseName(s.databasePath());
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("PRAGMA journal_mode")) && q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("wal"));
            QVERIFY(q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")));
            QStringList tables;
            while (q.next()) tables << q.value(0).toString();
            QVERIFY(tables.contains(QStringLiteral("conversations")));
            QVERIFY(tables.contains(QStringLiteral("messages")));
            QVERIFY(tables.contains(QStringLiteral("tool_calls")));
        }
        QSqlDatabase::removeDatabase(QStringLiteral("check"));
    }

    void conversationsAndMessagesRoundTrip() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        ConversationSettings settings;
        settings.systemPrompt = QStringLiteral("Be brief.");
        settings.temperature = 0.3;
        settings.topK = 7;
        settings.seed = 1234;
        const qint64 id = s.createConversation(QStringLiteral("First"), settings);
        QVERIFY(id > 0);

        MessageRecord user;
        user.conversationId = id;
        user.role = QStringLiteral("user");
        user.content = QStringLiteral("Hi \u00e9\u00e8 \U0001F600");
        const qint64 u = s.appendMessage(user);
        MessageRecord reply;
        reply.conversationId = id;
        reply.role = QStringLiteral("assistant");
        reply.state = MessageState::Streaming;
        const qint64 r = s.appendMessage(reply);
        QVERIFY(u > 0 && r > u);
        QVERIFY(s.saveProgress(r, QStringLiteral("Hel")));

        reply = *s.message(r);
        QCOMPARE(reply.position, 1);
        QCOMPARE(reply.content, QStringLiteral("Hel"));
        QCOMPARE(reply.state, MessageState::Streaming);
        reply.content = QStringLiteral("Hello");
        reply.state = MessageState::Complete;
        reply.promptTokens = 10;
        reply.completionTokens = 2;
        reply.cachedTokens = 4;
        reply.tokensPerSecond = 55.5;
        QVERIFY(s.updateMessage(reply));

        const auto messages = s.messages(id);
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].content, user.content);
        QCOMPARE(messages[1].content, QStringLiteral("Hello"));
        QCOMPARE(messages[1].cachedTokens, 4);
        QCOMPARE(messages[1].tokensPerSecond, 55.5);

        const auto c = s.conversation(id);
        QVERIFY(c);
        QCOMPARE(c->settings.systemPrompt, QStringLiteral("Be brief."));
        QCOMPARE(c->settings.topK, 7);
        QCOMPARE(c->settings.seed, 1234);
        QCOMPARE(c->settings.temperature, 0.3);

        ToolCallRecord call;
        call.messageId = r;
        call.callId = QStringLiteral("call_1");
        call.name = QStringLiteral("search");
        call.arguments = QStringLiteral("{\"q\":\"x\"}");
        call.state = QStringLiteral("pending");
        call.id = s.addToolCall(call);
        QVERIFY(call.id > 0);
        QCOMPARE(s.toolCalls(r).size(), 1);
        QCOMPARE(s.toolCalls(r)[0].name, QStringLiteral("search"));
        QCOMPARE(s.toolCalls(r)[0].state, QStringLiteral("pending"));
        // The agent loop moves a call along (schema 5: state and duration).
        call.state = QStringLiteral("done");
        call.result = QStringLiteral("3 hits");
        call.durationMs = 12.5;
        QVERIFY(s.updateToolCall(call));
        QCOMPARE(s.toolCalls(r)[0].state, QStringLiteral("done"));
        QCOMPARE(s.toolCalls(r)[0].result, QStringLiteral("3 hits"));
        QCOMPARE(s.toolCalls(r)[0].durationMs, 12.5);
        // The Tools switch of a conversation: off until set, then kept.
        QVERIFY(!s.toolsEnabled(id));
        QVERIFY(s.setToolsEnabled(id, true));
        QVERIFY(s.toolsEnabled(id));
        QVERIFY(s.setToolsEnabled(id, false));
        QVERIFY(!s.toolsEnabled(id));

        QVERIFY(s.deleteMessagesFrom(id, 1));
        QCOMPARE(s.messages(id).size(), 1);
        QCOMPARE(s.toolCalls(r).size(), 0);  // cascaded
    }

    void versionsBranchSwitchDeleteAndSurviveRestart() {
        QTemporaryDir dir;
        qint64 id = 0, q1 = 0, a1 = 0, q2 = 0, a2 = 0, a1b = 0, q1b = 0;
        auto msg = [&](const QString& role, const QString& text) {
            MessageRecord m;
            m.conversationId = id;
            m.role = role;
            m.content = text;
            return m;
        };
        auto contents = [](const QList<MessageRecord>& list) {
            QStringList out;
            for (const MessageRecord& m : list) out << m.content;
            return out;
        };
        {
            Storage s(dir.path());
            QVERIFY(s.open());
            id = s.createConversation(QStringLiteral("Tree"));
            q1 = s.appendMessage(msg(QStringLiteral("user"), QStringLiteral("q1")));
            a1 = s.appendMessage(msg(QStringLiteral("assistant"), QStringLiteral("a1")));
            q2 = s.appendMessage(msg(QStringLiteral("user"), QStringLiteral("q2")));
            a2 = s.appendMessage(msg(QStringLiteral("assistant"), QStringLiteral("a2")));
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1", "q2", "a2"}));

            // A regenerated a1: a branch of its own, the old one kept.
            a1b = s.addVersion(msg(QStringLiteral("assistant"), QStringLiteral("a1 again")), a1);
            QVERIFY(a1b > 0);
            auto branch = s.messages(id);
            QCOMPARE(contents(branch), (QStringList{"q1", "a1 again"}));
            QCOMPARE(branch[1].versionIndex, 1);
            QCOMPARE(branch[1].versionCount, 2);
            // appendMessage continues the branch on screen.
            s.appendMessage(msg(QStringLiteral("user"), QStringLiteral("q2b")));
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1 again", "q2b"}));

            // Back to the first version: its later turns come back with it.
            QVERIFY(s.selectVersion(a1));
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1", "q2", "a2"}));
            QCOMPARE(s.messages(id)[1].versionIndex, 0);

            // An edited first question: a version at the root.
            q1b = s.addVersion(msg(QStringLiteral("user"), QStringLiteral("q1 edited")), q1);
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1 edited"}));
            QCOMPARE(s.messages(id)[0].versionCount, 2);
            QVERIFY(s.selectVersion(q1));
            QCOMPARE(s.allMessages(id).size(), 7);
        }
        {
            // All of it is in the file, the choice of versions too.
            Storage s(dir.path());
            QVERIFY(s.open());
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1", "q2", "a2"}));

            // Deleting the only version of a turn keeps the turns after it.
            QVERIFY(s.deleteMessage(q2));
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1", "a2"}));
            QCOMPARE(s.message(a2)->parentId, a1);
            // Deleting one of several versions takes its branch and shows another.
            QVERIFY(s.deleteMessage(a1));
            QCOMPARE(contents(s.messages(id)), (QStringList{"q1", "a1 again", "q2b"}));
            QVERIFY(!s.message(a2));
            QCOMPARE(s.messages(id)[1].versionCount, 1);
            QVERIFY(!s.deleteMessage(a2));  // gone already: a clear failure
            QVERIFY(s.lastError().contains(QStringLiteral("does not exist")));
            QVERIFY(s.message(q1b));        // the other root version is untouched
        }
    }

    void searchTitlesAndContent() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const qint64 a = s.createConversation(QStringLiteral("Rust lifetimes"));
        const qint64 b = s.createConversation(QStringLiteral("Cooking"));
        const qint64 c = s.createConversation(QStringLiteral("Other"));
        MessageRecord m;
        m.conversationId = b;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("How long do I boil a LIFETIME egg?");
        s.appendMessage(m);
        m.conversationId = c;
        m.content = QStringLiteral("100% sure_thing");
        s.appendMessage(m);

        const auto hits = s.searchConversations(QStringLiteral("lifetime"));
        QCOMPARE(hits.size(), 2);
        QVERIFY(hits.contains(a) && hits.contains(b));
        QCOMPARE(s.searchConversations(QStringLiteral("100%")), QList<qint64>{c});
        QCOMPARE(s.searchConversations(QStringLiteral("o_g")).size(), 0);  // "_" is literal: "long" must not match
        QCOMPARE(s.searchConversations(QStringLiteral("nothing like it")).size(), 0);

        // The message a snippet comes from: the first (by position) that matches.
        m.conversationId = b;
        m.content = QStringLiteral("and another lifetime later");
        s.appendMessage(m);
        const auto first = s.firstMatchingMessages(QStringLiteral("lifetime"));
        QCOMPARE(first.size(), 1);  // a matches by its title only
        QCOMPARE(first.value(b).second, QStringLiteral("How long do I boil a LIFETIME egg?"));
        QCOMPARE(s.messages(b).first().id, first.value(b).first);
        QVERIFY(s.firstMatchingMessages(QStringLiteral("o_g")).isEmpty());
    }

    // Min-p and repeat penalty (schema 5) are kept per conversation.
    void samplingSettingsRoundTrip() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        ConversationSettings set;
        QCOMPARE(set.minP, 0.05);
        QCOMPARE(set.repeatPenalty, 1.0);
        const qint64 id = s.createConversation(QStringLiteral("x"), set);
        QCOMPARE(s.conversation(id)->settings.minP, 0.05);
        set.minP = 0.12;
        set.repeatPenalty = 1.3;
        QVERIFY(s.setConversationSettings(id, set));
        QCOMPARE(s.conversation(id)->settings.minP, 0.12);
        QCOMPARE(s.conversation(id)->settings.repeatPenalty, 1.3);
    }

    void softDeleteUndoAndPurge() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const qint64 a = s.createConversation(QStringLiteral("keep"));
        const qint64 b = s.createConversation(QStringLiteral("drop"));
        MessageRecord m;
        m.conversationId = b;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("x");
        s.appendMessage(m);

        QVERIFY(s.setConversationDeleted(b, true));
        QCOMPARE(s.conversations().size(), 1);
        QCOMPARE(s.conversations(true).size(), 2);
        QVERIFY(s.searchConversations(QStringLiteral("drop")).isEmpty());
        QVERIFY(s.setConversationDeleted(b, false));
        QCOMPARE(s.conversations().size(), 2);

        QVERIFY(s.setConversationDeleted(b, true));
        QCOMPARE(s.purgeDeletedConversations(), 1);
        QVERIFY(!s.conversation(b));
        QVERIFY(s.conversation(a));
        QCOMPARE(s.messages(b).size(), 0);  // cascaded
    }

    void foreignKeysRejectOrphans() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        MessageRecord m;
        m.conversationId = 999;  // no such conversation
        m.role = QStringLiteral("user");
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("cannot save a message")));
        QCOMPARE(s.appendMessage(m), 0);
        QVERIFY(s.lastError().contains(QStringLiteral("FOREIGN KEY"), Qt::CaseInsensitive));
    }

    void checkpointsRunOffTheCallingThread() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const qint64 id = s.createConversation(QStringLiteral("c"));
        for (int i = 0; i < 50; ++i) {
            MessageRecord m;
            m.conversationId = id;
            m.role = QStringLiteral("user");
            m.content = QString(500, QChar(u'a' + i % 26));
            QVERIFY(s.appendMessage(m) > 0);
        }
        const QFileInfo wal(s.databasePath() + QStringLiteral("-wal"));
        QVERIFY(wal.exists() && wal.size() > 0);
        // The checkpointer moves it into the file on its own thread; the data stays.
        {
            StorageCheckpointer checkpointer(&s, 60000);
            checkpointer.requestNow();
            QTRY_VERIFY_WITH_TIMEOUT(checkpointer.completed() >= 1, 30000);
        }
        QCOMPARE(s.messages(id).size(), 50);
        QVERIFY(s.checkpoint() >= 0);
    }

    // The checkpointer thread's failure is its own: the GUI thread's
    // lastError() keeps the GUI's last error. Before, both threads shared one
    // unguarded string (a data race, and the GUI showed the checkpoint's error).
    void checkpointerErrorsDoNotReachTheGuiThread() {
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("data"));
        Storage s(data);
        QVERIFY(s.open());
        MessageRecord orphan;
        orphan.conversationId = 4242;
        orphan.role = QStringLiteral("user");
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("cannot save a message")));
        QCOMPARE(s.appendMessage(orphan), 0);
        const QString guiError = s.lastError();
        QVERIFY(guiError.contains(QStringLiteral("FOREIGN KEY"), Qt::CaseInsensitive));
        // The checkpointer opens its own connection, which now cannot open the file.
        QVERIFY(QDir(data).removeRecursively());
        {
            StorageCheckpointer checkpointer(&s, 60000);
            checkpointer.requestNow();
            // Read while the other thread fails (what ThreadSanitizer watches).
            while (checkpointer.completed() < 1) QCOMPARE(s.lastError(), guiError);
        }
        QCOMPARE(s.lastError(), guiError);
    }

    // A full disk (SQLite's page limit stands in for it) is reported as such,
    // and the same save goes through once there is room again.
    void diskFullIsReportedAndSavingResumes() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const qint64 conv = s.createConversation(QStringLiteral("c"));
        MessageRecord reply;
        reply.conversationId = conv;
        reply.role = QStringLiteral("assistant");
        reply.state = MessageState::Streaming;
        const qint64 r = s.appendMessage(reply);
        QVERIFY(r > 0);
        s.setPageLimitForTesting(1);  // no room to grow
        const QString longText(20000, u'x');
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("cannot save reply .*full")));
        QVERIFY(!s.saveProgress(r, longText));
        QCOMPARE(s.lastProblem(), StorageProblem::DiskFull);
        QVERIFY2(s.lastError().contains(QStringLiteral("database or disk is full")), qPrintable(s.lastError()));
        QVERIFY(!s.saveProgress(r, longText));  // the same failure again: logged once (no second warning expected)
        s.setPageLimitForTesting(0);
        QVERIFY2(s.saveProgress(r, longText), qPrintable(s.lastError()));
        QCOMPARE(s.message(r)->content, longText);
    }

    // A file that cannot be written: open() says so without writing, the file
    // opens read-only with everything readable (a reply cut off shows as
    // interrupted), writes fail as ReadOnly, and the file is unchanged.
    void writeProtectedFileOpensReadOnly() {
        QTemporaryDir dir;
        const qint64 conv = writeDatabase(dir.path(), QStringLiteral("Kept"), 3);
        QVERIFY(conv > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        {
            Storage s(dir.path());
            QVERIFY(s.open());
            MessageRecord cut;
            cut.conversationId = conv;
            cut.role = QStringLiteral("assistant");
            cut.state = MessageState::Streaming;
            cut.content = QStringLiteral("half a repl");
            QVERIFY(s.appendMessage(cut) > 0);
        }
        if (!makeReadOnly(path)) QSKIP("cannot make a file read-only for this process here");
        const QByteArray before = fileBytes(path);
        {
            Storage s(dir.path());
            QVERIFY(!s.open());
            QCOMPARE(s.lastProblem(), StorageProblem::ReadOnly);
            QVERIFY2(s.openReadOnly(), qPrintable(s.lastError()));
            QCOMPARE(s.mode(), StorageMode::ReadOnly);
            QCOMPARE(s.conversations().size(), 1);
            const auto messages = s.messages(conv);
            QCOMPARE(messages.size(), 4);
            QCOMPARE(messages[3].state, MessageState::Interrupted);
            QCOMPARE(s.createConversation(QStringLiteral("new")), 0);
            QCOMPARE(s.lastProblem(), StorageProblem::ReadOnly);
            QCOMPARE(s.checkpoint(), 0);
            QVERIFY(!s.backUp());
        }
        makeWritable(path);
        QCOMPARE(fileBytes(path), before);
    }

    // Issue 26: a healthy WAL database on a read-only mount got "cannot read"
    // and an empty in-memory session: SQLite cannot create the log's index
    // (-shm) there. It opens read-only, as immutable, with its conversations.
    void readOnlyFolderOpensItsConversations() {
        QTemporaryDir dir;
        const qint64 conv = writeDatabase(dir.path(), QStringLiteral("On a read-only disk"), 3);
        QVERIFY(conv > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(!QFile::exists(path + QStringLiteral("-wal")));
        if (!makeReadOnlyFolder(dir.path(), path)) QSKIP("cannot make a folder read-only for this process here");
        const QByteArray before = fileBytes(path);
        {
            Storage s(dir.path());
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("data folder .* is read-only")));
            QVERIFY(!s.open());
            QCOMPARE(s.lastProblem(), StorageProblem::ReadOnly);
            QVERIFY2(s.openReadOnly(), qPrintable(s.lastError()));
            QCOMPARE(s.mode(), StorageMode::ReadOnly);
            const auto conversations = s.conversations();
            QCOMPARE(conversations.size(), 1);
            QCOMPARE(conversations.first().title, QStringLiteral("On a read-only disk"));
            QCOMPARE(s.messages(conv).size(), 3);
            QCOMPARE(s.createConversation(QStringLiteral("new")), 0);
        }
        QVERIFY(!QFile::exists(path + QStringLiteral("-shm")));
        makeWritableFolder(dir.path(), path);
        QCOMPARE(fileBytes(path), before);
    }

    void damagedFileIsNeverWritten_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("bytes overwritten in the middle") << int(Damage::OverwrittenInTheMiddle);
        QTest::newRow("an index page overwritten") << int(Damage::IndexPage);
        QTest::newRow("truncated") << int(Damage::Truncated);
        QTest::newRow("not a database") << int(Damage::NotADatabase);
    }

    // integrity_check runs before the first write; a damaged file fails open()
    // as Damaged with SQLite's own words (not Qt's "Parameter count mismatch"),
    // opens read-only if it still reads, else the app gets a temporary
    // database; the file itself is never changed.
    void damagedFileIsNeverWritten() {
        QFETCH(int, kind);
        QTemporaryDir dir;
        QVERIFY(writeDatabase(dir.path(), QStringLiteral("Precious"), 200) > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(!QFileInfo::exists(path + QStringLiteral("-wal")));
        QVERIFY(damage(path, Damage(kind)));
        const QByteArray before = fileBytes(path);
        {
            Storage s(dir.path());
            QVERIFY(!s.open());
            QCOMPARE(s.lastProblem(), StorageProblem::Damaged);
            QVERIFY(!s.integrityProblems().isEmpty());
            QVERIFY2(!s.lastError().contains(QStringLiteral("Parameter count")), qPrintable(s.lastError()));
            if (Damage(kind) == Damage::NotADatabase)
                QVERIFY2(s.lastError().contains(QStringLiteral("not a database")), qPrintable(s.lastError()));
            if (s.openReadOnly()) {
                QCOMPARE(s.mode(), StorageMode::ReadOnly);
                QCOMPARE(s.createConversation(QStringLiteral("new")), 0);
                // Before, this file opened read-write without a word (only an index
                // is damaged); now it is read-only, and every row still reads.
                if (Damage(kind) == Damage::IndexPage) {
                    QCOMPARE(s.conversations().size(), 1);
                    QCOMPARE(s.messages(s.conversations().first().id).size(), 200);
                }
            } else {
                QVERIFY2(s.openTemporary(), qPrintable(s.lastError()));
                QCOMPARE(s.mode(), StorageMode::Temporary);
                QVERIFY(s.createConversation(QStringLiteral("new")) > 0);  // works, in memory
                QCOMPARE(s.conversations().size(), 1);
            }
            QCOMPARE(s.checkpoint(), 0);
        }
        QCOMPARE(fileBytes(path), before);
    }

    // Backups: two copies, newest first; a damaged file is replaced by the
    // newest sound one and kept aside byte for byte.
    void backupsRotateAndRestoreKeepsTheDamagedFile() {
        QTemporaryDir dir;
        {
            Storage s(dir.path());
            QVERIFY(s.open());
            QVERIFY(s.createConversation(QStringLiteral("first")) > 0);
            QVERIFY2(s.backUp(), qPrintable(s.lastError()));
            QCOMPARE(s.backups().size(), 1);
            QVERIFY(s.createConversation(QStringLiteral("second")) > 0);
            QVERIFY(s.backUp());
            QVERIFY(s.backUp());
            QCOMPARE(s.backups().size(), 2);  // never more than two
            QVERIFY(s.backups()[0].time >= s.backups()[1].time);
        }
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(damage(path, Damage::NotADatabase));
        const QByteArray damaged = fileBytes(path);

        Storage s(dir.path());
        QVERIFY(!s.open());
        QVERIFY(!s.openReadOnly());
        QVERIFY(s.openTemporary());
        QString keptAs;
        QVERIFY2(s.restoreBackup(&keptAs), qPrintable(s.lastError()));
        QCOMPARE(s.mode(), StorageMode::ReadWrite);
        QCOMPARE(s.conversations().size(), 2);
        QVERIFY(keptAs.contains(QStringLiteral("weir.damaged-")));
        QCOMPARE(fileBytes(keptAs), damaged);
        QCOMPARE(s.backups().size(), 2);  // the copies stay where they were
    }

    // With no sound copy, restoring changes nothing.
    void restoreWithoutASoundCopyChangesNothing() {
        QTemporaryDir dir;
        QVERIFY(writeDatabase(dir.path(), QStringLiteral("only"), 1) > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(damage(path, Damage::NotADatabase));
        QFile::copy(path, dir.filePath(QStringLiteral("weir.backup-1.sqlite3")));  // a "backup" that is damaged too
        const QByteArray before = fileBytes(path);
        Storage s(dir.path());
        QVERIFY(!s.open());
        QVERIFY(s.openTemporary());
        QVERIFY(!s.restoreBackup());
        QVERIFY(s.lastError().contains(QStringLiteral("no sound backup")));
        QCOMPARE(s.mode(), StorageMode::Temporary);
        QCOMPARE(fileBytes(path), before);
    }

    void unwritableFolderIsAClearError() {
        Storage s(QStringLiteral("/proc/weir-cannot-exist/data"));
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("cannot create the data folder")));
        QVERIFY(!s.open());
        QVERIFY(s.lastError().contains(QStringLiteral("/proc/weir-cannot-exist/data")));
    }
};

QTEST_GUILESS_MAIN(StorageTest)
#include "storage_test.moc"
