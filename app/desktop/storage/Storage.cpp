#include "storage/Storage.h"

#include <QDateTime>
#include <QDir>
#include <QMutexLocker>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QVariant>
#include <atomic>

#include "storage/Migrations.h"

namespace weir::desktop {

QString messageStateName(MessageState s) {
    switch (s) {
    case MessageState::Complete: return QStringLiteral("complete");
    case MessageState::Streaming: return QStringLiteral("streaming");
    case MessageState::Interrupted: return QStringLiteral("interrupted");
    case MessageState::Cancelled: return QStringLiteral("cancelled");
    case MessageState::Failed: return QStringLiteral("failed");
    }
    return QStringLiteral("complete");
}

MessageState messageStateFromName(const QString& name) {
    if (name == u"streaming") return MessageState::Streaming;
    if (name == u"interrupted") return MessageState::Interrupted;
    if (name == u"cancelled") return MessageState::Cancelled;
    if (name == u"failed") return MessageState::Failed;
    return MessageState::Complete;
}

namespace {

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// A null QString binds as SQL NULL; the text columns are NOT NULL.
QVariant text(const QString& s) { return s.isNull() ? QVariant(QString(QStringLiteral(""))) : QVariant(s); }

const char* kConversationColumns =
    "id, title, created_at, updated_at, deleted_at, system_prompt, temperature, top_p, top_k, max_tokens, seed";
const char* kMessageColumns =
    "id, conversation_id, position, role, content, state, error, prompt_tokens, completion_tokens,"
    " cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at";

ConversationRecord readConversation(const QSqlQuery& q) {
    ConversationRecord c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.createdAt = q.value(2).toLongLong();
    c.updatedAt = q.value(3).toLongLong();
    c.deletedAt = q.value(4).toLongLong();
    c.settings.systemPrompt = q.value(5).toString();
    c.settings.temperature = q.value(6).toDouble();
    c.settings.topP = q.value(7).toDouble();
    c.settings.topK = q.value(8).toInt();
    c.settings.maxTokens = q.value(9).toInt();
    c.settings.seed = q.value(10).toLongLong();
    return c;
}

MessageRecord readMessage(const QSqlQuery& q) {
    MessageRecord m;
    m.id = q.value(0).toLongLong();
    m.conversationId = q.value(1).toLongLong();
    m.position = q.value(2).toInt();
    m.role = q.value(3).toString();
    m.content = q.value(4).toString();
    m.state = messageStateFromName(q.value(5).toString());
    m.error = q.value(6).toString();
    m.promptTokens = q.value(7).toInt();
    m.completionTokens = q.value(8).toInt();
    m.cachedTokens = q.value(9).toInt();
    m.tokensPerSecond = q.value(10).toDouble();
    m.timeToFirstTokenMs = q.value(11).toDouble();
    m.createdAt = q.value(12).toLongLong();
    m.updatedAt = q.value(13).toLongLong();
    return m;
}

std::atomic<int> nextInstance{0};

} // namespace

Storage::Storage(const QString& dataDir)
    : dir_(dataDir),
      path_(QDir(dataDir).filePath(QStringLiteral("weir.sqlite3"))),
      connectionPrefix_(QStringLiteral("weir-storage-%1-").arg(nextInstance++)) {}

Storage::~Storage() {
    QMutexLocker lock(&connectionsMutex_);
    for (const QString& name : std::as_const(connections_)) {
        {
            QSqlDatabase d = QSqlDatabase::database(name, false);
            if (d.isOpen()) d.close();
        }
        QSqlDatabase::removeDatabase(name);
    }
}

bool Storage::fail(const QString& what, const QString& detail) {
    const QString message = detail.isEmpty() ? what : what + QStringLiteral(": ") + detail;
    {
        QMutexLocker lock(&lastErrorMutex_);
        lastError_.insert(QThread::currentThreadId(), message);
    }
    qWarning("Storage: %s", qPrintable(message));
    return false;
}

QString Storage::lastError() const {
    QMutexLocker lock(&lastErrorMutex_);
    return lastError_.value(QThread::currentThreadId());
}

QSqlDatabase Storage::db() {
    const QString name = connectionPrefix_ + QString::number(quintptr(QThread::currentThreadId()), 16);
    if (QSqlDatabase::contains(name)) return QSqlDatabase::database(name);
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    d.setDatabaseName(path_);
    d.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (d.open()) {
        QSqlQuery q(d);
        // WAL: readers never block the writer, and a killed process loses
        // nothing that was committed. NORMAL sync is durable against process
        // death (only a power cut can drop the last commits).
        q.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
        q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
        q.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
        // With WAL + NORMAL, commits do not wait for the disk; checkpoints do.
        // They run on the checkpointer's thread instead of after some commit.
        q.exec(QStringLiteral("PRAGMA wal_autocheckpoint=0"));
    }
    QMutexLocker lock(&connectionsMutex_);
    connections_.insert(name);
    return d;
}

int Storage::latestSchemaVersion() { return migrations::kLatest; }

int Storage::schemaVersion() {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return -1;
    return q.value(0).toInt();
}

bool Storage::open(int targetVersion) {
    open_ = false;
    if (!QDir().mkpath(dir_)) return fail(QStringLiteral("cannot create the data folder"), dir_);
    QSqlDatabase d = db();
    if (!d.isOpen()) return fail(QStringLiteral("cannot open ") + path_, d.lastError().text());
    {
        QSqlQuery q(d);
        if (!q.exec(QStringLiteral("PRAGMA foreign_keys")) || !q.next() || q.value(0).toInt() != 1)
            return fail(QStringLiteral("SQLite refused foreign keys"), q.lastError().text());
    }
    if (!migrate(d, targetVersion < 0 ? migrations::kLatest : targetVersion)) return false;

    // A reply still marked Streaming was being generated when its process died.
    QSqlQuery q(d);
    q.prepare(QStringLiteral("UPDATE messages SET state = 'interrupted', updated_at = ? WHERE state = 'streaming'"));
    q.addBindValue(nowMs());
    if (!q.exec()) return fail(QStringLiteral("cannot mark interrupted replies"), q.lastError().text());
    interruptedAtOpen_ = q.numRowsAffected();
    open_ = true;
    return true;
}

bool Storage::migrate(QSqlDatabase& d, int targetVersion) {
    int version = schemaVersion();
    if (version < 0) return fail(QStringLiteral("cannot read the schema version of ") + path_, d.lastError().text());
    if (version > migrations::kLatest)
        return fail(QStringLiteral("%1 has schema version %2, newer than this Weir understands (%3); "
                                   "use a newer Weir or another data folder")
                        .arg(path_).arg(version).arg(migrations::kLatest), {});
    while (version < targetVersion) {
        const int next = version + 1;
        if (!d.transaction()) return fail(QStringLiteral("cannot start migration %1").arg(next), d.lastError().text());
        QString error;
        bool ok = migrations::migrateTo(d, next, &error);
        if (ok) {
            QSqlQuery q(d);
            ok = q.exec(QStringLiteral("PRAGMA user_version = %1").arg(next));
            if (!ok) error = q.lastError().text();
        }
        if (!ok) {
            d.rollback();
            return fail(QStringLiteral("schema migration to version %1 failed").arg(next), error);
        }
        if (!d.commit()) return fail(QStringLiteral("cannot commit migration %1").arg(next), d.lastError().text());
        version = next;
    }
    return true;
}

qint64 Storage::createConversation(const QString& title, const ConversationSettings& s) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, system_prompt, temperature,"
                             " top_p, top_k, max_tokens, seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    for (const QVariant& v : {text(title), QVariant(now), QVariant(now), text(s.systemPrompt),
                              QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK), QVariant(s.maxTokens),
                              QVariant(s.seed)})
        q.addBindValue(v);
    if (!q.exec()) return fail(QStringLiteral("cannot create a conversation"), q.lastError().text()), 0;
    return q.lastInsertId().toLongLong();
}

QList<ConversationRecord> Storage::conversations(bool includeDeleted) {
    QList<ConversationRecord> out;
    QSqlQuery q(db());
    QString sql = QStringLiteral("SELECT %1 FROM conversations").arg(QLatin1String(kConversationColumns));
    if (!includeDeleted) sql += QStringLiteral(" WHERE deleted_at = 0");
    sql += QStringLiteral(" ORDER BY updated_at DESC, id DESC");
    if (!q.exec(sql)) return fail(QStringLiteral("cannot list conversations"), q.lastError().text()), out;
    while (q.next()) out.append(readConversation(q));
    return out;
}

std::optional<ConversationRecord> Storage::conversation(qint64 id) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT %1 FROM conversations WHERE id = ?").arg(QLatin1String(kConversationColumns)));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return std::nullopt;
    return readConversation(q);
}

bool Storage::renameConversation(qint64 id, const QString& title) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"));
    q.addBindValue(text(title));
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("cannot rename conversation %1").arg(id), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool Storage::setConversationSettings(qint64 id, const ConversationSettings& s) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE conversations SET system_prompt = ?, temperature = ?, top_p = ?, top_k = ?,"
                             " max_tokens = ?, seed = ? WHERE id = ?"));
    for (const QVariant& v : {text(s.systemPrompt), QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK),
                              QVariant(s.maxTokens), QVariant(s.seed), QVariant(id)})
        q.addBindValue(v);
    if (!q.exec()) return fail(QStringLiteral("cannot save settings of conversation %1").arg(id), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool Storage::touchConversation(qint64 id) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(nowMs());
    q.addBindValue(id);
    return q.exec();
}

bool Storage::setConversationDeleted(qint64 id, bool deleted) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE conversations SET deleted_at = ? WHERE id = ?"));
    q.addBindValue(deleted ? nowMs() : qint64(0));
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("cannot delete conversation %1").arg(id), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool Storage::deleteConversation(qint64 id) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) return fail(QStringLiteral("cannot delete conversation %1").arg(id), q.lastError().text());
    return q.numRowsAffected() == 1;
}

int Storage::purgeDeletedConversations() {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("DELETE FROM conversations WHERE deleted_at != 0")))
        return fail(QStringLiteral("cannot purge deleted conversations"), q.lastError().text()), 0;
    return q.numRowsAffected();
}

QList<qint64> Storage::searchConversations(const QString& text) {
    QList<qint64> out;
    QString pattern = text;
    pattern.replace(u'\\', QStringLiteral("\\\\")).replace(u'%', QStringLiteral("\\%")).replace(u'_', QStringLiteral("\\_"));
    pattern = u'%' + pattern + u'%';
    QSqlQuery q(db());
    // LIKE is case-insensitive for ASCII in SQLite; good enough for a search box.
    q.prepare(QStringLiteral(
        "SELECT c.id FROM conversations c WHERE c.deleted_at = 0 AND (c.title LIKE :p1 ESCAPE '\\' OR EXISTS"
        " (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE :p2 ESCAPE '\\'))"
        " ORDER BY c.updated_at DESC, c.id DESC"));
    q.bindValue(QStringLiteral(":p1"), pattern);
    q.bindValue(QStringLiteral(":p2"), pattern);
    if (!q.exec()) return fail(QStringLiteral("search failed"), q.lastError().text()), out;
    while (q.next()) out.append(q.value(0).toLongLong());
    return out;
}

qint64 Storage::appendMessage(const MessageRecord& m) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral(
        "INSERT INTO messages (conversation_id, position, role, content, state, error, prompt_tokens,"
        " completion_tokens, cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at)"
        " VALUES (:conv, (SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE conversation_id = :conv2),"
        " :role, :content, :state, :error, :prompt, :completion, :cached, :tps, :ttft, :created, :updated)"));
    const qint64 now = m.createdAt ? m.createdAt : nowMs();
    q.bindValue(QStringLiteral(":conv"), m.conversationId);
    q.bindValue(QStringLiteral(":conv2"), m.conversationId);
    q.bindValue(QStringLiteral(":role"), text(m.role));
    q.bindValue(QStringLiteral(":content"), text(m.content));
    q.bindValue(QStringLiteral(":state"), messageStateName(m.state));
    q.bindValue(QStringLiteral(":error"), text(m.error));
    q.bindValue(QStringLiteral(":prompt"), m.promptTokens);
    q.bindValue(QStringLiteral(":completion"), m.completionTokens);
    q.bindValue(QStringLiteral(":cached"), m.cachedTokens);
    q.bindValue(QStringLiteral(":tps"), m.tokensPerSecond);
    q.bindValue(QStringLiteral(":ttft"), m.timeToFirstTokenMs);
    q.bindValue(QStringLiteral(":created"), now);
    q.bindValue(QStringLiteral(":updated"), now);
    if (!q.exec()) return fail(QStringLiteral("cannot save a message"), q.lastError().text()), 0;
    const qint64 id = q.lastInsertId().toLongLong();
    touchConversation(m.conversationId);
    return id;
}

QList<MessageRecord> Storage::messages(qint64 conversationId) {
    QList<MessageRecord> out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE conversation_id = ? ORDER BY position")
                  .arg(QLatin1String(kMessageColumns)));
    q.addBindValue(conversationId);
    if (!q.exec()) return fail(QStringLiteral("cannot read messages"), q.lastError().text()), out;
    while (q.next()) out.append(readMessage(q));
    return out;
}

std::optional<MessageRecord> Storage::message(qint64 id) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return std::nullopt;
    return readMessage(q);
}

bool Storage::saveProgress(qint64 messageId, const QString& content) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE messages SET content = ?, updated_at = ? WHERE id = ?"));
    q.addBindValue(text(content));
    q.addBindValue(nowMs());
    q.addBindValue(messageId);
    if (!q.exec()) return fail(QStringLiteral("cannot save reply %1").arg(messageId), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool Storage::updateMessage(const MessageRecord& m) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("UPDATE messages SET content = ?, state = ?, error = ?, prompt_tokens = ?,"
                             " completion_tokens = ?, cached_tokens = ?, tokens_per_second = ?, ttft_ms = ?,"
                             " updated_at = ? WHERE id = ?"));
    for (const QVariant& v : {text(m.content), QVariant(messageStateName(m.state)), text(m.error),
                              QVariant(m.promptTokens), QVariant(m.completionTokens), QVariant(m.cachedTokens),
                              QVariant(m.tokensPerSecond), QVariant(m.timeToFirstTokenMs), QVariant(nowMs()),
                              QVariant(m.id)})
        q.addBindValue(v);
    if (!q.exec()) return fail(QStringLiteral("cannot save message %1").arg(m.id), q.lastError().text());
    touchConversation(m.conversationId);
    return q.numRowsAffected() == 1;
}

bool Storage::deleteMessagesFrom(qint64 conversationId, int position) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = ? AND position >= ?"));
    q.addBindValue(conversationId);
    q.addBindValue(position);
    if (!q.exec()) return fail(QStringLiteral("cannot delete messages"), q.lastError().text());
    return true;
}

qint64 Storage::addToolCall(const ToolCallRecord& c) {
    QSqlQuery q(db());
    q.prepare(QStringLiteral("INSERT INTO tool_calls (message_id, call_id, name, arguments, result, created_at)"
                             " VALUES (?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v : {QVariant(c.messageId), text(c.callId), text(c.name), text(c.arguments),
                              text(c.result), QVariant(c.createdAt ? c.createdAt : nowMs())})
        q.addBindValue(v);
    if (!q.exec()) return fail(QStringLiteral("cannot save a tool call"), q.lastError().text()), 0;
    return q.lastInsertId().toLongLong();
}

QList<ToolCallRecord> Storage::toolCalls(qint64 messageId) {
    QList<ToolCallRecord> out;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT id, message_id, call_id, name, arguments, result, created_at FROM tool_calls"
                             " WHERE message_id = ? ORDER BY id"));
    q.addBindValue(messageId);
    if (!q.exec()) return out;
    while (q.next()) {
        ToolCallRecord c;
        c.id = q.value(0).toLongLong();
        c.messageId = q.value(1).toLongLong();
        c.callId = q.value(2).toString();
        c.name = q.value(3).toString();
        c.arguments = q.value(4).toString();
        c.result = q.value(5).toString();
        c.createdAt = q.value(6).toLongLong();
        out.append(c);
    }
    return out;
}

int Storage::checkpoint() {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)")) || !q.next())
        return fail(QStringLiteral("checkpoint failed"), q.lastError().text()), -1;
    // Columns: busy, frames in the log, frames checkpointed.
    return q.value(2).toInt();
}

void Storage::closeThreadConnection() {
    const QString name = connectionPrefix_ + QString::number(quintptr(QThread::currentThreadId()), 16);
    {
        QSqlDatabase d = QSqlDatabase::database(name, false);
        if (d.isOpen()) d.close();
    }
    QSqlDatabase::removeDatabase(name);
    {
        QMutexLocker lock(&connectionsMutex_);
        connections_.remove(name);
    }
    // A later thread may get this thread's id.
    QMutexLocker lock(&lastErrorMutex_);
    lastError_.remove(QThread::currentThreadId());
}

qint64 Storage::importConversation(const ConversationRecord& conv, const QList<MessageRecord>& messages,
                                   const QList<QList<ToolCallRecord>>& toolCalls) {
    QSqlDatabase d = db();
    if (!d.transaction()) return fail(QStringLiteral("cannot start the import"), d.lastError().text()), 0;
    auto rollback = [&](const QString& what, const QString& detail) {
        d.rollback();
        fail(what, detail);
        return qint64(0);
    };
    QSqlQuery q(d);
    q.prepare(QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, system_prompt, temperature,"
                             " top_p, top_k, max_tokens, seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    const auto& s = conv.settings;
    for (const QVariant& v : {text(conv.title), QVariant(conv.createdAt ? conv.createdAt : now),
                              QVariant(conv.updatedAt ? conv.updatedAt : now), text(s.systemPrompt),
                              QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK), QVariant(s.maxTokens),
                              QVariant(s.seed)})
        q.addBindValue(v);
    if (!q.exec()) return rollback(QStringLiteral("cannot import the conversation"), q.lastError().text());
    const qint64 id = q.lastInsertId().toLongLong();
    for (int i = 0; i < messages.size(); ++i) {
        const MessageRecord& m = messages[i];
        QSqlQuery mq(d);
        mq.prepare(QStringLiteral(
            "INSERT INTO messages (conversation_id, position, role, content, state, error, prompt_tokens,"
            " completion_tokens, cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
        // An imported reply cannot still be generating.
        const MessageState state = m.state == MessageState::Streaming ? MessageState::Interrupted : m.state;
        for (const QVariant& v : {QVariant(id), QVariant(i), text(m.role), text(m.content),
                                  QVariant(messageStateName(state)), text(m.error), QVariant(m.promptTokens),
                                  QVariant(m.completionTokens), QVariant(m.cachedTokens), QVariant(m.tokensPerSecond),
                                  QVariant(m.timeToFirstTokenMs), QVariant(m.createdAt ? m.createdAt : now),
                                  QVariant(m.updatedAt ? m.updatedAt : now)})
            mq.addBindValue(v);
        if (!mq.exec()) return rollback(QStringLiteral("cannot import message %1").arg(i + 1), mq.lastError().text());
        const qint64 messageId = mq.lastInsertId().toLongLong();
        if (i < toolCalls.size()) {
            for (ToolCallRecord c : toolCalls[i]) {
                c.messageId = messageId;
                if (!addToolCall(c)) return rollback(QStringLiteral("cannot import a tool call"), lastError());
            }
        }
    }
    if (!d.commit()) return rollback(QStringLiteral("cannot commit the import"), d.lastError().text());
    return id;
}

} // namespace weir::desktop
