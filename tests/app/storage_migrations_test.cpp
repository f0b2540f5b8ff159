// Numbered migrations: a database written at schema 1 (by SQL written here,
// as an old Weir would have) migrates to the latest version with its data
// intact and the new columns at their defaults; a database from a newer Weir
// is refused with a clear message; a failed migration rolls back.
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "storage/Storage.h"

using namespace weir::desktop;

namespace {

// Runs statements on the database file through a connection of its own.
void execRaw(const QString& path, const QStringList& statements) {
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        for (const QString& sql : statements) QVERIFY2(q.exec(sql), qPrintable(q.lastError().text() + " in " + sql));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("raw"));
}

} // namespace

class StorageMigrationsTest : public QObject {
    Q_OBJECT
private slots:
    void schemaOneMigratesWithDataIntact() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        // Schema 1 exactly as it shipped.
        execRaw(path, {
            QStringLiteral("CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT '',"
                           " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL"
                           " REFERENCES conversations(id) ON DELETE CASCADE, position INTEGER NOT NULL, role TEXT NOT NULL,"
                           " content TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'complete',"
                           " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE tool_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id INTEGER NOT NULL"
                           " REFERENCES messages(id) ON DELETE CASCADE, call_id TEXT NOT NULL DEFAULT '', name TEXT NOT NULL,"
                           " arguments TEXT NOT NULL DEFAULT '', result TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL)"),
            QStringLiteral("PRAGMA user_version = 1"),
            QStringLiteral("INSERT INTO conversations VALUES (7, 'Old chat', 1000, 2000)"),
            QStringLiteral("INSERT INTO messages VALUES (1, 7, 0, 'user', 'question', 'complete', 1000, 1000)"),
            QStringLiteral("INSERT INTO messages VALUES (2, 7, 1, 'assistant', 'partial answ', 'streaming', 1001, 1500)"),
            QStringLiteral("INSERT INTO tool_calls VALUES (1, 2, 'c1', 'lookup', '{}', '', 1001)"),
        });

        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QCOMPARE(s.schemaVersion(), Storage::latestSchemaVersion());
        QCOMPARE(s.interruptedAtOpen(), 1);

        const auto c = s.conversation(7);
        QVERIFY(c);
        QCOMPARE(c->title, QStringLiteral("Old chat"));
        QCOMPARE(c->createdAt, 1000);
        QCOMPARE(c->deletedAt, 0);                 // added by migration 3
        QCOMPARE(c->settings.temperature, 0.8);    // added by migration 2, default
        QCOMPARE(c->settings.seed, -1);
        const auto messages = s.messages(7);
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].content, QStringLiteral("question"));
        QCOMPARE(messages[1].content, QStringLiteral("partial answ"));
        QCOMPARE(messages[1].state, MessageState::Interrupted);
        QCOMPARE(messages[1].completionTokens, 0);
        QCOMPARE(s.toolCalls(2).size(), 1);
        QCOMPARE(s.conversations().size(), 1);
    }

    void schemaThreeBecomesOneBranchOfVersions() {
        // Written at schema 3, as Weir before versions kept it; then opened by this one.
        QTemporaryDir dir;
        {
            Storage old(dir.path());
            QVERIFY2(old.open(3), qPrintable(old.lastError()));
        }
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        execRaw(path, {
            QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at, system_prompt) VALUES (3, 'Three', 1, 2, 'Be brief')"),
            QStringLiteral("INSERT INTO messages (id, conversation_id, position, role, content, created_at, updated_at, prompt_tokens)"
                           " VALUES (10, 3, 0, 'user', 'q1', 1, 1, 0), (11, 3, 1, 'assistant', 'a1', 2, 2, 7),"
                           " (12, 3, 2, 'user', 'q2', 3, 3, 0), (13, 3, 3, 'assistant', 'a2', 4, 4, 19)"),
            QStringLiteral("INSERT INTO tool_calls (message_id, name, created_at) VALUES (13, 'calc', 4)"),
        });
        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QCOMPARE(s.schemaVersion(), Storage::latestSchemaVersion());  // through 4 (versions) and on
        QCOMPARE(s.conversation(3)->settings.minP, 0.05);            // 5: the engine's defaults
        QCOMPARE(s.conversation(3)->settings.repeatPenalty, 1.0);
        const auto messages = s.messages(3);
        QCOMPARE(messages.size(), 4);
        const QList<qint64> parents{0, 10, 11, 12};
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(messages[i].id, qint64(10 + i));
            QCOMPARE(messages[i].parentId, parents[i]);  // each follows the one before it
            QVERIFY(messages[i].active);
            QCOMPARE(messages[i].versionCount, 1);
        }
        QCOMPARE(messages[3].content, QStringLiteral("a2"));
        QCOMPARE(messages[3].promptTokens, 19);
        QCOMPARE(messages[3].finishReason, QString());
        QCOMPARE(s.conversation(3)->settings.systemPrompt, QStringLiteral("Be brief"));
        QCOMPARE(s.conversation(3)->settings.contextPolicy, QString());
        QCOMPARE(s.toolCalls(13).size(), 1);
        // And the migrated branch takes versions like a new one.
        MessageRecord edited;
        edited.role = QStringLiteral("user");
        edited.content = QStringLiteral("q2 again");
        const qint64 v = s.addVersion(edited, 12);
        QVERIFY(v > 0);
        const auto after = s.messages(3);
        QCOMPARE(after.size(), 3);
        QCOMPARE(after[2].id, v);
        QCOMPARE(after[2].versionIndex, 1);
        QCOMPARE(after[2].versionCount, 2);
        QCOMPARE(s.allMessages(3).size(), 5);
    }

    // Schema 6 (before drafts were kept): its replies keep their usage and
    // read 0 drafts (the stats line shows none); new replies store them.
    void schemaSixRepliesReadNoDrafts() {
        QTemporaryDir dir;
        {
            Storage old(dir.path());
            QVERIFY2(old.open(6), qPrintable(old.lastError()));
        }
        execRaw(dir.filePath(QStringLiteral("weir.sqlite3")), {
            QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (6, 'Six', 1, 2)"),
            QStringLiteral("INSERT INTO messages (id, conversation_id, position, role, content, created_at, updated_at,"
                           " completion_tokens, tokens_per_second, parent_id)"
                           " VALUES (20, 6, 0, 'user', 'q', 1, 1, 0, 0, NULL), (21, 6, 1, 'assistant', 'a', 2, 2, 33, 41.5, 20)"),
        });
        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QCOMPARE(s.schemaVersion(), Storage::latestSchemaVersion());
        QVERIFY(Storage::latestSchemaVersion() >= 7);
        auto messages = s.messages(6);
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[1].completionTokens, 33);
        QCOMPARE(messages[1].tokensPerSecond, 41.5);
        QCOMPARE(messages[1].draftTokens, 0);
        QCOMPARE(messages[1].acceptedDraftTokens, 0);

        // The old reply takes counts on update; a new one keeps them from insert.
        MessageRecord updated = messages[1];
        updated.draftTokens = 57;
        updated.acceptedDraftTokens = 42;
        QVERIFY(s.updateMessage(updated));
        MessageRecord fresh;
        fresh.conversationId = 6;
        fresh.role = QStringLiteral("assistant");
        fresh.content = QStringLiteral("b");
        fresh.draftTokens = 9;
        fresh.acceptedDraftTokens = 4;
        const qint64 freshId = s.appendMessage(fresh);
        QVERIFY(freshId > 0);
        QCOMPARE(s.message(21)->draftTokens, 57);
        QCOMPARE(s.message(21)->acceptedDraftTokens, 42);
        QCOMPARE(s.message(freshId)->draftTokens, 9);
        QCOMPARE(s.message(freshId)->acceptedDraftTokens, 4);
    }

    // Schema 7 (before replies named their model): its replies read "" (the
    // view says "Assistant", not whichever model is loaded now); new and
    // updated replies keep the name.
    void schemaSevenRepliesHaveNoModelName() {
        QTemporaryDir dir;
        {
            Storage old(dir.path());
            QVERIFY2(old.open(7), qPrintable(old.lastError()));
        }
        execRaw(dir.filePath(QStringLiteral("weir.sqlite3")), {
            QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (7, 'Seven', 1, 2)"),
            QStringLiteral("INSERT INTO messages (id, conversation_id, position, role, content, created_at, updated_at,"
                           " parent_id) VALUES (30, 7, 0, 'user', 'q', 1, 1, NULL), (31, 7, 1, 'assistant', 'a', 2, 2, 30)"),
        });
        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QVERIFY(Storage::latestSchemaVersion() >= 8);
        QCOMPARE(s.messages(7)[1].model, QString());

        MessageRecord updated = s.messages(7)[1];
        updated.model = QStringLiteral("SmolLM2 135M Instruct");
        QVERIFY(s.updateMessage(updated));
        MessageRecord fresh;
        fresh.conversationId = 7;
        fresh.role = QStringLiteral("assistant");
        fresh.model = QStringLiteral("Gemma 3 270M");
        const qint64 freshId = s.appendMessage(fresh);
        QVERIFY(freshId > 0);
        QCOMPARE(s.message(31)->model, QStringLiteral("SmolLM2 135M Instruct"));
        QCOMPARE(s.message(freshId)->model, QStringLiteral("Gemma 3 270M"));
    }

    // Schema 8 (before a conversation chose its engine): its conversations
    // use the local engine; a chosen remote engine is kept.
    void schemaEightConversationsUseTheLocalEngine() {
        QTemporaryDir dir;
        {
            Storage old(dir.path());
            QVERIFY2(old.open(8), qPrintable(old.lastError()));
        }
        execRaw(dir.filePath(QStringLiteral("weir.sqlite3")), {
            QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (8, 'Eight', 1, 2)"),
        });
        Storage s(dir.path());
        QVERIFY2(s.open(), qPrintable(s.lastError()));
        QVERIFY(Storage::latestSchemaVersion() >= 9);
        QCOMPARE(s.conversation(8)->settings.engine, QString());
        ConversationSettings settings = s.conversation(8)->settings;
        settings.engine = QStringLiteral("gpu-box");
        QVERIFY(s.setConversationSettings(8, settings));
        QCOMPARE(s.conversation(8)->settings.engine, QStringLiteral("gpu-box"));
        QCOMPARE(s.conversation(8)->title, QStringLiteral("Eight"));
    }

    void stepwiseMigrationToEachVersion() {
        QTemporaryDir dir;
        for (int v = 1; v <= Storage::latestSchemaVersion(); ++v) {
            Storage s(dir.path());
            QVERIFY2(s.open(v), qPrintable(s.lastError()));
            QCOMPARE(s.schemaVersion(), v);
        }
        Storage s(dir.path());
        QVERIFY(s.open());
        QVERIFY(s.createConversation(QStringLiteral("works")) > 0);
    }

    void newerDatabaseIsRefused() {
        QTemporaryDir dir;
        execRaw(dir.filePath(QStringLiteral("weir.sqlite3")), {QStringLiteral("PRAGMA user_version = 99")});
        Storage s(dir.path());
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("newer than this Weir")));
        QVERIFY(!s.open());
        QVERIFY(s.lastError().contains(QStringLiteral("99")));
    }

    void failedMigrationRollsBack() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        {
            Storage s(dir.path());
            QVERIFY(s.open(1));
        }
        // A column migration 2 wants to add is already there: migration 2 fails.
        execRaw(path, {QStringLiteral("ALTER TABLE messages ADD COLUMN error TEXT")});
        Storage s(dir.path());
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("migration to version 2 failed")));
        QVERIFY(!s.open());
        QVERIFY(s.lastError().contains(QStringLiteral("version 2")));
        QCOMPARE(s.schemaVersion(), 1);  // nothing half-applied
    }

    void notADatabaseIsAClearError() {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("weir.sqlite3")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        Storage s(dir.path());
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(".*")));
        QVERIFY(!s.open());
        QVERIFY(!s.lastError().isEmpty());
    }
};

QTEST_GUILESS_MAIN(StorageMigrationsTest)
#include "storage_migrations_test.moc"
