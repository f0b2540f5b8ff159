#include "storage/Migrations.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>

namespace weir::desktop::migrations {
namespace {

bool exec(QSqlDatabase& db, const QStringList& statements, QString* error) {
    QSqlQuery q(db);
    for (const QString& sql : statements) {
        if (!q.exec(sql)) {
            *error = q.lastError().text() + QStringLiteral(" (in: ") + sql.simplified() + u')';
            return false;
        }
    }
    return true;
}

// 1: conversations, messages and tool calls.
bool migrateTo1(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("CREATE TABLE conversations ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                       " title TEXT NOT NULL DEFAULT '',"
                       " created_at INTEGER NOT NULL,"
                       " updated_at INTEGER NOT NULL)"),
        QStringLiteral("CREATE TABLE messages ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                       " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                       " position INTEGER NOT NULL,"
                       " role TEXT NOT NULL,"
                       " content TEXT NOT NULL DEFAULT '',"
                       " state TEXT NOT NULL DEFAULT 'complete',"
                       " created_at INTEGER NOT NULL,"
                       " updated_at INTEGER NOT NULL)"),
        QStringLiteral("CREATE TABLE tool_calls ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                       " message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
                       " call_id TEXT NOT NULL DEFAULT '',"
                       " name TEXT NOT NULL,"
                       " arguments TEXT NOT NULL DEFAULT '',"
                       " result TEXT NOT NULL DEFAULT '',"
                       " created_at INTEGER NOT NULL)"),
    }, error);
}

// 2: per-conversation generation settings; per-reply usage and error text.
bool migrateTo2(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN temperature REAL NOT NULL DEFAULT 0.8"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN top_p REAL NOT NULL DEFAULT 0.95"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN top_k INTEGER NOT NULL DEFAULT 40"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 1024"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN seed INTEGER NOT NULL DEFAULT -1"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN error TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN tokens_per_second REAL NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN ttft_ms REAL NOT NULL DEFAULT 0"),
    }, error);
}

// 3: soft delete (undo) and the indexes the sidebar and chat view query by.
bool migrateTo3(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE conversations ADD COLUMN deleted_at INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("CREATE INDEX messages_by_conversation ON messages(conversation_id, position)"),
        QStringLiteral("CREATE INDEX conversations_by_update ON conversations(deleted_at, updated_at)"),
        QStringLiteral("CREATE INDEX tool_calls_by_message ON tool_calls(message_id)"),
    }, error);
}

// 4: versions of a turn (a message tree: parent_id and the active version,
// see MessageRecord), why a reply ended, where the context began, and the
// per-conversation context policy. Existing conversations become one branch:
// each message follows the one before it.
bool migrateTo4(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN finish_reason TEXT NOT NULL DEFAULT ''"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN context_from_id INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("UPDATE messages SET parent_id = (SELECT p.id FROM messages p"
                       " WHERE p.conversation_id = messages.conversation_id AND p.position < messages.position"
                       " ORDER BY p.position DESC LIMIT 1)"),
        QStringLiteral("CREATE INDEX messages_by_parent ON messages(parent_id)"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN context_policy TEXT NOT NULL DEFAULT ''"),
    }, error);
}

// 5: min-p and repeat penalty per conversation (defaults: the engine's).
bool migrateTo5(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE conversations ADD COLUMN min_p REAL NOT NULL DEFAULT 0.05"),
        QStringLiteral("ALTER TABLE conversations ADD COLUMN repeat_penalty REAL NOT NULL DEFAULT 1.0"),
    }, error);
}

// 6: the agent loop: each tool call's state and duration, and which
// conversations offer tools to the model.
bool migrateTo6(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE tool_calls ADD COLUMN state TEXT NOT NULL DEFAULT 'done'"),
        QStringLiteral("ALTER TABLE tool_calls ADD COLUMN duration_ms REAL NOT NULL DEFAULT 0"),
        QStringLiteral("CREATE TABLE conversation_tools ("
                       " conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,"
                       " enabled INTEGER NOT NULL DEFAULT 0)"),
    }, error);
}

// 7: per reply, speculative decoding's draft tokens verified and kept (the
// stats line's "drafts 42/57 kept"). Older replies read 0: nothing shown.
bool migrateTo7(QSqlDatabase& db, QString* error) {
    return exec(db, {
        QStringLiteral("ALTER TABLE messages ADD COLUMN draft_tokens INTEGER NOT NULL DEFAULT 0"),
        QStringLiteral("ALTER TABLE messages ADD COLUMN accepted_draft_tokens INTEGER NOT NULL DEFAULT 0"),
    }, error);
}

// 8: per reply, the name of the model that wrote it, so a reply keeps its
// label after another model is loaded. Older replies read "": not known.
bool migrateTo8(QSqlDatabase& db, QString* error) {
    return exec(db, {QStringLiteral("ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT ''")}, error);
}

// 9: the engine a conversation's replies go to: "" for the local engine,
// else the name of a remote endpoint the user added.
bool migrateTo9(QSqlDatabase& db, QString* error) {
    return exec(db, {QStringLiteral("ALTER TABLE conversations ADD COLUMN engine TEXT NOT NULL DEFAULT ''")}, error);
}

} // namespace

bool migrateTo(QSqlDatabase& db, int toVersion, QString* error) {
    switch (toVersion) {
    case 1: return migrateTo1(db, error);
    case 2: return migrateTo2(db, error);
    case 3: return migrateTo3(db, error);
    case 4: return migrateTo4(db, error);
    case 5: return migrateTo5(db, error);
    case 6: return migrateTo6(db, error);
    case 7: return migrateTo7(db, error);
    case 8: return migrateTo8(db, error);
    case 9: return migrateTo9(db, error);
    default:
        *error = QStringLiteral("no migration to schema version %1").arg(toVersion);
        return false;
    }
}

} // namespace weir::desktop::migrations
