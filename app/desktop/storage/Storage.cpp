#include "storage/Storage.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutexLocker>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QUrl>
#include <QVariant>
#include <atomic>

#ifdef Q_OS_UNIX
#include <unistd.h>
#endif

#include "app/logging/log_categories.h"
#include "storage/MessageTree.h"
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

// Runs one statement with its values bound in order; on failure `error` says why.
bool execBound(QSqlDatabase& d, const QString& sql, const QVariantList& values, QSqlError& error) {
    QSqlQuery q(d);
    bool done = q.prepare(sql);
    for (const QVariant& v : values) q.addBindValue(v);
    done = done && q.exec();
    if (!done) error = q.lastError();
    return done;
}

// A null QString binds as SQL NULL; the text columns are NOT NULL.
QVariant text(const QString& s) { return s.isNull() ? QVariant(QString(QStringLiteral(""))) : QVariant(s); }

const char* kConversationColumns =
    "id, title, created_at, updated_at, deleted_at, system_prompt, temperature, top_p, top_k, max_tokens, seed,"
    " context_policy, min_p, repeat_penalty, engine";
const char* kMessageColumns =
    "id, conversation_id, position, role, content, state, error, prompt_tokens, completion_tokens,"
    " cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at, parent_id, active, finish_reason,"
    " context_from_id, draft_tokens, accepted_draft_tokens, model";

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
    c.settings.contextPolicy = q.value(11).toString();
    c.settings.minP = q.value(12).toDouble();
    c.settings.repeatPenalty = q.value(13).toDouble();
    c.settings.engine = q.value(14).toString();
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
    m.parentId = q.value(14).toLongLong();  // NULL (the first turn) reads as 0
    m.active = q.value(15).toInt() != 0;
    m.finishReason = q.value(16).toString();
    m.contextFromId = q.value(17).toLongLong();
    m.draftTokens = q.value(18).toInt();
    m.acceptedDraftTokens = q.value(19).toInt();
    m.model = q.value(20).toString();
    return m;
}

std::atomic<int> nextInstance{0};

// SQLite's primary result codes that say what kind of trouble a call met.
constexpr int kSqlitePerm = 3, kSqliteReadOnly = 8, kSqliteCorrupt = 11, kSqliteFull = 13, kSqliteNotADb = 26;

StorageProblem problemOf(const QSqlError& error) {
    bool ok = false;
    const int code = error.nativeErrorCode().toInt(&ok) & 0xff;  // extended codes keep the primary one low
    if (!ok) return StorageProblem::Other;
    switch (code) {
    case kSqliteFull: return StorageProblem::DiskFull;
    case kSqliteReadOnly:
    case kSqlitePerm: return StorageProblem::ReadOnly;
    case kSqliteCorrupt:
    case kSqliteNotADb: return StorageProblem::Damaged;
    default: return StorageProblem::Other;
    }
}

// Whether files can be created in `dir`: access() also says no on a
// read-only mount or for an immutable folder, where root's permission bits
// would say yes.
bool folderWritable(const QString& dir) {
#ifdef Q_OS_UNIX
    return ::access(QFile::encodeName(dir).constData(), W_OK) == 0;
#else
    return QFileInfo(dir).isWritable();
#endif
}

// SQLite's own words ("database or disk is full"), without Qt's prefix.
QString reasonOf(const QSqlError& error) {
    const QString text = error.databaseText().trimmed();
    return text.isEmpty() ? error.text().trimmed() : text;
}

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

bool Storage::fail(const QString& what, const QString& detail, StorageProblem problem) {
    const QString message = detail.isEmpty() ? what : what + QStringLiteral(": ") + detail;
    bool repeated = false;
    {
        QMutexLocker lock(&lastErrorMutex_);
        auto it = lastError_.find(QThread::currentThreadId());
        repeated = it != lastError_.end() && it->message == message;
        lastError_.insert(QThread::currentThreadId(), Failure{message, problem});
    }
    // A save retried every second against a full disk says so once, not each time.
    if (!repeated) qCWarning(weir::logging::lcStorage).noquote() << message;
    return false;
}

bool Storage::fail(const QString& what, const QSqlError& error) { return fail(what, reasonOf(error), problemOf(error)); }

QString Storage::lastError() const {
    QMutexLocker lock(&lastErrorMutex_);
    return lastError_.value(QThread::currentThreadId()).message;
}

StorageProblem Storage::lastProblem() const {
    QMutexLocker lock(&lastErrorMutex_);
    return lastError_.value(QThread::currentThreadId()).problem;
}

QString Storage::connectionName() const {
    return connectionPrefix_ + QString::number(quintptr(QThread::currentThreadId()), 16);
}

QSqlDatabase Storage::db() {
    const QString name = connectionName();
    if (QSqlDatabase::contains(name)) return QSqlDatabase::database(name);
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    const StorageMode mode = this->mode();
    QStringList options{QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000")};
    if (mode == StorageMode::Temporary) {
        // One database in memory that every thread's connection shares.
        d.setDatabaseName(QStringLiteral("file:%1temporary?mode=memory&cache=shared").arg(connectionPrefix_));
        options << QStringLiteral("QSQLITE_OPEN_URI");
    } else {
        if (mode == StorageMode::ReadOnly && immutable_) {
            d.setDatabaseName(QUrl::fromLocalFile(path_).toString(QUrl::FullyEncoded) + QStringLiteral("?immutable=1"));
            options << QStringLiteral("QSQLITE_OPEN_URI");
        } else {
            d.setDatabaseName(path_);
        }
        if (mode == StorageMode::ReadOnly) options << QStringLiteral("QSQLITE_OPEN_READONLY");
    }
    d.setConnectOptions(options.join(u';'));
    if (d.open()) {
        // Settings of this connection only; nothing here writes to the file.
        // (WAL, which is stored in the file, is switched on by open() once the
        // file has passed the integrity check.) NORMAL sync is durable against
        // process death (only a power cut can drop the last commits).
        QSqlQuery q(d);
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

void Storage::dropThreadConnection() {
    const QString name = connectionName();
    {
        QSqlDatabase d = QSqlDatabase::database(name, false);
        if (d.isOpen()) d.close();
    }
    QSqlDatabase::removeDatabase(name);
    QMutexLocker lock(&connectionsMutex_);
    connections_.remove(name);
}

int Storage::latestSchemaVersion() { return migrations::kLatest; }

int Storage::schemaVersion() {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return -1;
    return q.value(0).toInt();
}

bool Storage::open(int targetVersion) {
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    interruptedAtOpen_ = 0;
    integrityProblems_.clear();
    if (!QDir().mkpath(dir_))
        return fail(QStringLiteral("cannot create the data folder"), dir_, StorageProblem::ReadOnly);
    // SQLite keeps its log and the log's index beside the file: without them
    // nothing can be written, and reading a WAL file needs the index too.
    if (!folderWritable(dir_))
        return fail(QStringLiteral("the data folder %1 is read-only").arg(dir_), QString(), StorageProblem::ReadOnly);
    mode_ = int(StorageMode::ReadWrite);
    if (openReadWrite(targetVersion < 0 ? migrations::kLatest : targetVersion)) return true;
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    return false;
}

bool Storage::openReadWrite(int targetVersion) {
    const bool existing = QFileInfo(path_).size() > 0;
    QSqlDatabase d = db();
    if (!d.isOpen()) return fail(QStringLiteral("cannot open ") + path_, d.lastError());
    // Before anything is written: a damaged file is never written to.
    if (existing && !checkIntegrity(d)) return false;
    {
        QSqlQuery q(d);
        // WAL: readers never block the writer, and a killed process loses
        // nothing that was committed. A file that cannot be written keeps its
        // mode; the first write below then says so.
        if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")))
            return fail(QStringLiteral("cannot switch %1 to WAL").arg(path_), q.lastError());
        if (!q.exec(QStringLiteral("PRAGMA foreign_keys")) || !q.next() || q.value(0).toInt() != 1)
            return fail(QStringLiteral("SQLite refused foreign keys"), q.lastError());
    }
    if (!migrate(d, targetVersion)) return false;

    // A reply still marked Streaming was being generated when its process died.
    // (Also the first write: a file that cannot be written fails here.)
    QSqlQuery q(d);
    const bool ready =
        q.prepare(QStringLiteral("UPDATE messages SET state = 'interrupted', updated_at = ? WHERE state = 'streaming'"));
    q.addBindValue(nowMs());
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot write to ") + path_, q.lastError());
    interruptedAtOpen_ = q.numRowsAffected();
    return true;
}

bool Storage::checkIntegrity(QSqlDatabase& d) {
    QSqlQuery q(d);
    if (!q.exec(QStringLiteral("PRAGMA integrity_check(10)"))) {
        integrityProblems_ = {reasonOf(q.lastError())};
        return fail(QStringLiteral("cannot read ") + path_, q.lastError());
    }
    QStringList problems;
    while (q.next()) {
        // One row may hold several lines; "*** in database main ***" only names the schema.
        for (const QString& line : q.value(0).toString().split(u'\n', Qt::SkipEmptyParts))
            if (!line.startsWith(QStringLiteral("*** in database"))) problems << line.trimmed();
    }
    if (problems == QStringList{QStringLiteral("ok")}) return true;
    integrityProblems_ = problems;
    return fail(QStringLiteral("%1 failed SQLite's integrity check").arg(path_), problems.join(QStringLiteral("; ")),
                StorageProblem::Damaged);
}

bool Storage::openReadOnly() {
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    interruptedAtOpen_ = 0;
    if (QFileInfo(path_).size() <= 0)
        return fail(QStringLiteral("there is no database to read at ") + path_, {}, StorageProblem::Other);
    immutable_ = !folderWritable(dir_) && QFileInfo(path_ + QStringLiteral("-wal")).size() <= 0;
    mode_ = int(StorageMode::ReadOnly);
    if (openForReading()) return true;
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    return false;
}

bool Storage::openForReading() {
    QSqlDatabase d = db();
    if (!d.isOpen()) return fail(QStringLiteral("cannot open %1 read-only").arg(path_), d.lastError());
    QSqlQuery q(d);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
        return fail(QStringLiteral("cannot read ") + path_, q.lastError());
    const int version = q.value(0).toInt();
    // An older schema needs a migration, which is a write. A newer one reads
    // fine: its added columns are not asked for.
    if (version < migrations::kLatest)
        return fail(QStringLiteral("%1 has schema version %2 and needs an upgrade to %3, which means writing to it")
                        .arg(path_).arg(version).arg(migrations::kLatest), {}, StorageProblem::Other);
    if (!q.exec(QStringLiteral("SELECT COUNT(*) FROM conversations")) || !q.next())
        return fail(QStringLiteral("cannot read the conversations in ") + path_, q.lastError());
    return true;
}

bool Storage::openTemporary() {
    dropThreadConnection();
    mode_ = int(StorageMode::Temporary);
    interruptedAtOpen_ = 0;
    QSqlDatabase d = db();
    if (d.isOpen() && migrate(d, migrations::kLatest)) return true;
    if (!d.isOpen()) fail(QStringLiteral("cannot create a temporary database"), d.lastError());
    d = QSqlDatabase();
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    return false;
}

bool Storage::migrate(QSqlDatabase& d, int targetVersion) {
    int version = -1;
    {
        QSqlQuery q(d);
        if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
            return fail(QStringLiteral("cannot read the schema version of ") + path_, q.lastError());
        version = q.value(0).toInt();
    }
    if (version > migrations::kLatest)
        return fail(QStringLiteral("%1 has schema version %2, newer than this Weir understands (%3); "
                                   "use a newer Weir or another data folder")
                        .arg(path_).arg(version).arg(migrations::kLatest), QString());
    while (version < targetVersion) {
        const int next = version + 1;
        if (!d.transaction()) return fail(QStringLiteral("cannot start migration %1").arg(next), d.lastError());
        QString error;
        bool ok = migrations::migrateTo(d, next, &error);
        QSqlError sqlError;
        if (ok) {
            QSqlQuery q(d);
            ok = q.exec(QStringLiteral("PRAGMA user_version = %1").arg(next));
            if (!ok) sqlError = q.lastError();
        }
        if (!ok) {
            d.rollback();
            if (sqlError.isValid()) return fail(QStringLiteral("schema migration to version %1 failed").arg(next), sqlError);
            return fail(QStringLiteral("schema migration to version %1 failed").arg(next), error);
        }
        if (!d.commit()) return fail(QStringLiteral("cannot commit migration %1").arg(next), d.lastError());
        version = next;
    }
    return true;
}

qint64 Storage::createConversation(const QString& title, const ConversationSettings& s) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, system_prompt, temperature,"
                             " top_p, top_k, max_tokens, seed, context_policy, min_p, repeat_penalty, engine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    for (const QVariant& v : {text(title), QVariant(now), QVariant(now), text(s.systemPrompt),
                              QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK), QVariant(s.maxTokens),
                              QVariant(s.seed), text(s.contextPolicy), QVariant(s.minP), QVariant(s.repeatPenalty),
                              text(s.engine)})
        q.addBindValue(v);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot create a conversation"), q.lastError()), 0;
    return q.lastInsertId().toLongLong();
}

QList<ConversationRecord> Storage::conversations(bool includeDeleted) {
    QList<ConversationRecord> out;
    // A damaged index must not hide the rows: the second try reads the table itself.
    for (const char* table : {"conversations", "conversations NOT INDEXED"}) {
        out.clear();
        QSqlQuery q(db());
        QString sql = QStringLiteral("SELECT %1 FROM %2").arg(QLatin1String(kConversationColumns), QLatin1String(table));
        if (!includeDeleted) sql += QStringLiteral(" WHERE deleted_at = 0");
        sql += QStringLiteral(" ORDER BY updated_at DESC, id DESC");
        bool ok = q.exec(sql);
        while (ok && q.next()) out.append(readConversation(q));
        if (ok && !q.lastError().isValid()) return out;
        fail(QStringLiteral("cannot list conversations"), q.lastError());
        if (lastProblem() != StorageProblem::Damaged) break;
    }
    return out;  // what could be read
}

std::optional<ConversationRecord> Storage::conversation(qint64 id) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("SELECT %1 FROM conversations WHERE id = ?").arg(QLatin1String(kConversationColumns)));
    q.addBindValue(id);
    if (!ready || !q.exec() || !q.next()) return std::nullopt;
    return readConversation(q);
}

bool Storage::renameConversation(qint64 id, const QString& title) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"));
    q.addBindValue(text(title));
    q.addBindValue(id);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot rename conversation %1").arg(id), q.lastError());
    return q.numRowsAffected() == 1;
}

bool Storage::setConversationSettings(qint64 id, const ConversationSettings& s) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE conversations SET system_prompt = ?, temperature = ?, top_p = ?, top_k = ?,"
                             " max_tokens = ?, seed = ?, context_policy = ?, min_p = ?, repeat_penalty = ?, engine = ? WHERE id = ?"));
    for (const QVariant& v : {text(s.systemPrompt), QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK),
                              QVariant(s.maxTokens), QVariant(s.seed), text(s.contextPolicy), QVariant(s.minP),
                              QVariant(s.repeatPenalty), text(s.engine), QVariant(id)})
        q.addBindValue(v);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save settings of conversation %1").arg(id), q.lastError());
    return q.numRowsAffected() == 1;
}

int Storage::renameEngine(const QString& from, const QString& to) {
    if (from.isEmpty() || from == to) return 0;  // "" is the local engine, never renamed
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE conversations SET engine = ? WHERE engine = ?"));
    q.addBindValue(text(to));
    q.addBindValue(text(from));
    if (!ready || !q.exec()) {
        fail(QStringLiteral("cannot move conversations from engine %1 to %2").arg(from, to), q.lastError());
        return -1;
    }
    return q.numRowsAffected();
}

bool Storage::touchConversation(qint64 id) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(nowMs());
    q.addBindValue(id);
    return ready && q.exec();
}

bool Storage::setConversationDeleted(qint64 id, bool deleted) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE conversations SET deleted_at = ? WHERE id = ?"));
    q.addBindValue(deleted ? nowMs() : qint64(0));
    q.addBindValue(id);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot delete conversation %1").arg(id), q.lastError());
    return q.numRowsAffected() == 1;
}

bool Storage::deleteConversation(qint64 id) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot delete conversation %1").arg(id), q.lastError());
    return q.numRowsAffected() == 1;
}

int Storage::purgeDeletedConversations() {
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("DELETE FROM conversations WHERE deleted_at != 0")))
        return fail(QStringLiteral("cannot purge deleted conversations"), q.lastError()), 0;
    return q.numRowsAffected();
}

namespace {
// A LIKE pattern that finds `text` anywhere, its wildcards escaped with '\\'.
QString likePattern(const QString& text) {
    QString pattern = text;
    pattern.replace(u'\\', QStringLiteral("\\\\")).replace(u'%', QStringLiteral("\\%")).replace(u'_', QStringLiteral("\\_"));
    return u'%' + pattern + u'%';
}
} // namespace

QHash<qint64, QPair<qint64, QString>> Storage::firstMatchingMessages(const QString& text) {
    QHash<qint64, QPair<qint64, QString>> out;
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral(
        "SELECT m.conversation_id, m.id, m.content FROM messages m JOIN conversations c ON c.id = m.conversation_id"
        " WHERE c.deleted_at = 0 AND m.content LIKE :p ESCAPE '\\' ORDER BY m.conversation_id, m.position"));
    q.bindValue(QStringLiteral(":p"), likePattern(text));
    if (!ready || !q.exec()) return fail(QStringLiteral("search failed"), q.lastError()), out;
    while (q.next()) {
        const qint64 conversation = q.value(0).toLongLong();
        if (!out.contains(conversation)) out.insert(conversation, {q.value(1).toLongLong(), q.value(2).toString()});
    }
    return out;
}

QList<qint64> Storage::searchConversations(const QString& text) {
    QList<qint64> out;
    const QString pattern = likePattern(text);
    QSqlQuery q(db());
    // LIKE is case-insensitive for ASCII in SQLite; good enough for a search box.
    const bool ready = q.prepare(QStringLiteral(
        "SELECT c.id FROM conversations c WHERE c.deleted_at = 0 AND (c.title LIKE :p1 ESCAPE '\\' OR EXISTS"
        " (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE :p2 ESCAPE '\\'))"
        " ORDER BY c.updated_at DESC, c.id DESC"));
    q.bindValue(QStringLiteral(":p1"), pattern);
    q.bindValue(QStringLiteral(":p2"), pattern);
    if (!ready || !q.exec()) return fail(QStringLiteral("search failed"), q.lastError()), out;
    while (q.next()) out.append(q.value(0).toLongLong());
    return out;
}

qint64 Storage::appendMessage(const MessageRecord& m) {
    qint64 parent = m.parentId;
    if (parent == 0) {
        const QList<MessageRecord> branch = messages(m.conversationId);
        if (!branch.isEmpty()) parent = branch.last().id;
    }
    return insertMessage(m, parent, true);
}

qint64 Storage::insertMessage(const MessageRecord& m, qint64 parent, bool active) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral(
        "INSERT INTO messages (conversation_id, position, role, content, state, error, prompt_tokens,"
        " completion_tokens, cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at, parent_id, active,"
        " finish_reason, context_from_id, draft_tokens, accepted_draft_tokens, model)"
        " VALUES (:conv, (SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE conversation_id = :conv2),"
        " :role, :content, :state, :error, :prompt, :completion, :cached, :tps, :ttft, :created, :updated, :parent,"
        " :active, :finish, :from, :drafts, :kept, :model)"));
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
    q.bindValue(QStringLiteral(":parent"), parent ? QVariant(parent) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":active"), active ? 1 : 0);
    q.bindValue(QStringLiteral(":finish"), text(m.finishReason));
    q.bindValue(QStringLiteral(":from"), m.contextFromId);
    q.bindValue(QStringLiteral(":drafts"), m.draftTokens);
    q.bindValue(QStringLiteral(":kept"), m.acceptedDraftTokens);
    q.bindValue(QStringLiteral(":model"), text(m.model));
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save a message"), q.lastError()), 0;
    const qint64 id = q.lastInsertId().toLongLong();
    touchConversation(m.conversationId);
    return id;
}

QList<MessageRecord> Storage::messages(qint64 conversationId) {
    branchReads_.fetch_add(1, std::memory_order_relaxed);
    return visibleBranch(allMessages(conversationId));
}

QList<MessageRecord> Storage::allMessages(qint64 conversationId) {
    QList<MessageRecord> out;
    // As in conversations(): past a damaged index to the table.
    for (const char* table : {"messages", "messages NOT INDEXED"}) {
        out.clear();
        QSqlQuery q(db());
        const bool ready = q.prepare(QStringLiteral("SELECT %1 FROM %2 WHERE conversation_id = ? ORDER BY position")
                                         .arg(QLatin1String(kMessageColumns), QLatin1String(table)));
        q.addBindValue(conversationId);
        bool ok = ready && q.exec();
        while (ok && q.next()) out.append(asStored(readMessage(q)));
        if (ok && !q.lastError().isValid()) return out;
        fail(QStringLiteral("cannot read messages"), q.lastError());
        if (lastProblem() != StorageProblem::Damaged) break;
    }
    return out;  // what could be read
}

std::optional<MessageRecord> Storage::message(qint64 id) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE id = ?").arg(QLatin1String(kMessageColumns)));
    q.addBindValue(id);
    if (!ready || !q.exec() || !q.next()) return std::nullopt;
    return asStored(readMessage(q));
}

bool Storage::saveProgress(qint64 messageId, const QString& content) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE messages SET content = ?, updated_at = ? WHERE id = ?"));
    q.addBindValue(text(content));
    q.addBindValue(nowMs());
    q.addBindValue(messageId);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save reply %1").arg(messageId), q.lastError());
    return q.numRowsAffected() == 1;
}

bool Storage::updateMessage(const MessageRecord& m) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE messages SET content = ?, state = ?, error = ?, prompt_tokens = ?,"
                             " completion_tokens = ?, cached_tokens = ?, tokens_per_second = ?, ttft_ms = ?,"
                             " updated_at = ?, finish_reason = ?, context_from_id = ?, draft_tokens = ?,"
                             " accepted_draft_tokens = ?, model = ? WHERE id = ?"));
    for (const QVariant& v : {text(m.content), QVariant(messageStateName(m.state)), text(m.error),
                              QVariant(m.promptTokens), QVariant(m.completionTokens), QVariant(m.cachedTokens),
                              QVariant(m.tokensPerSecond), QVariant(m.timeToFirstTokenMs), QVariant(nowMs()),
                              text(m.finishReason), QVariant(m.contextFromId), QVariant(m.draftTokens),
                              QVariant(m.acceptedDraftTokens), text(m.model), QVariant(m.id)})
        q.addBindValue(v);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save message %1").arg(m.id), q.lastError());
    // Not touching the conversation: the sidebar orders by the last message
    // sent (appendMessage), so a reply ending or stopped does not move its row.
    return q.numRowsAffected() == 1;
}

bool Storage::deleteMessagesFrom(qint64 conversationId, int position) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = ? AND position >= ?"));
    q.addBindValue(conversationId);
    q.addBindValue(position);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot delete messages"), q.lastError());
    return true;
}

qint64 Storage::addVersion(const MessageRecord& m, qint64 versionOf) {
    auto sibling = message(versionOf);
    if (!sibling) return fail(QStringLiteral("cannot add a version: message %1 does not exist").arg(versionOf), {}, StorageProblem::Other), 0;
    QSqlDatabase d = db();
    if (!d.transaction()) return fail(QStringLiteral("cannot add a version"), d.lastError()), 0;
    MessageRecord version = m;
    version.conversationId = sibling->conversationId;
    QSqlQuery q(d);
    const bool ready = q.prepare(QStringLiteral("UPDATE messages SET active = 0 WHERE conversation_id = ? AND parent_id IS ?"));
    q.addBindValue(sibling->conversationId);
    q.addBindValue(sibling->parentId ? QVariant(sibling->parentId) : QVariant(QMetaType::fromType<qint64>()));
    if (!ready || !q.exec()) {
        const QSqlError e = q.lastError();
        d.rollback();
        return fail(QStringLiteral("cannot add a version"), e), 0;
    }
    const qint64 id = insertMessage(version, sibling->parentId, true);
    if (!id || !d.commit()) {
        if (id) fail(QStringLiteral("cannot add a version"), d.lastError());
        d.rollback();
        return 0;
    }
    touchConversation(sibling->conversationId);
    return id;
}

bool Storage::selectVersion(qint64 messageId) {
    auto m = message(messageId);
    if (!m) return fail(QStringLiteral("cannot show message %1: it does not exist").arg(messageId), {}, StorageProblem::Other);
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE messages SET active = (id = ?) WHERE conversation_id = ? AND parent_id IS ?"));
    q.addBindValue(messageId);
    q.addBindValue(m->conversationId);
    q.addBindValue(m->parentId ? QVariant(m->parentId) : QVariant(QMetaType::fromType<qint64>()));
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot show message %1").arg(messageId), q.lastError());
    return true;
}

bool Storage::deleteMessage(qint64 messageId) {
    auto m = message(messageId);
    if (!m) return fail(QStringLiteral("cannot delete message %1: it does not exist").arg(messageId), {}, StorageProblem::Other);
    const QList<MessageRecord> versions = versionsOf(allMessages(m->conversationId), messageId);
    const QVariant parent = m->parentId ? QVariant(m->parentId) : QVariant(QMetaType::fromType<qint64>());
    QSqlDatabase d = db();
    if (!d.transaction()) return fail(QStringLiteral("cannot delete message %1").arg(messageId), d.lastError());
    QSqlError error;
    auto run = [&](const QString& sql, const QVariantList& values) { return execBound(d, sql, values, error); };
    bool ok = true;
    if (versions.size() > 1) {
        // One version of several: it goes with the turns that followed it
        // (ON DELETE CASCADE), and the newest other version is shown.
        qint64 next = 0;
        for (const MessageRecord& v : versions)
            if (v.id != messageId) next = v.id;
        ok = run(QStringLiteral("DELETE FROM messages WHERE id = ?"), {messageId}) &&
             (!m->active || run(QStringLiteral("UPDATE messages SET active = 1 WHERE id = ?"), {next}));
    } else {
        // The only version: the turns after it now follow its parent.
        ok = run(QStringLiteral("UPDATE messages SET parent_id = ? WHERE parent_id = ?"), {parent, messageId}) &&
             run(QStringLiteral("DELETE FROM messages WHERE id = ?"), {messageId});
    }
    if (!ok || !d.commit()) {
        if (ok) error = d.lastError();
        d.rollback();
        return fail(QStringLiteral("cannot delete message %1").arg(messageId), error);
    }
    return true;
}

bool Storage::restoreMessages(const QList<MessageRecord>& before, const QHash<qint64, QList<ToolCallRecord>>& toolCalls) {
    QSqlDatabase d = db();
    if (!d.transaction()) return fail(QStringLiteral("cannot restore messages"), d.lastError());
    QSqlError error;
    auto run = [&](const QString& sql, const QVariantList& values) { return execBound(d, sql, values, error); };
    bool ok = true;
    // In position order, so a parent is back before its children.
    for (const MessageRecord& m : before) {
        const QVariant parent = m.parentId ? QVariant(m.parentId) : QVariant(QMetaType::fromType<qint64>());
        if (message(m.id)) {
            ok = run(QStringLiteral("UPDATE messages SET parent_id = ?, active = ? WHERE id = ?"),
                     {parent, m.active ? 1 : 0, m.id});
        } else {
            ok = run(QStringLiteral("INSERT INTO messages (id, conversation_id, position, role, content, state, error,"
                                    " prompt_tokens, completion_tokens, cached_tokens, tokens_per_second, ttft_ms,"
                                    " created_at, updated_at, parent_id, active, finish_reason, context_from_id,"
                                    " draft_tokens, accepted_draft_tokens, model)"
                                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                     {m.id, m.conversationId, m.position, text(m.role), text(m.content), messageStateName(m.state),
                      text(m.error), m.promptTokens, m.completionTokens, m.cachedTokens, m.tokensPerSecond,
                      m.timeToFirstTokenMs, m.createdAt, m.updatedAt, parent, m.active ? 1 : 0, text(m.finishReason),
                      m.contextFromId, m.draftTokens, m.acceptedDraftTokens, text(m.model)});
            for (const ToolCallRecord& c : toolCalls.value(m.id)) {
                if (!ok) break;
                ok = run(QStringLiteral("INSERT INTO tool_calls (message_id, call_id, name, arguments, result, created_at,"
                                        " state, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                         {m.id, text(c.callId), text(c.name), text(c.arguments), text(c.result), c.createdAt,
                          text(c.state), c.durationMs});
            }
        }
        if (!ok) break;
    }
    if (!ok || !d.commit()) {
        if (ok) error = d.lastError();
        d.rollback();
        return fail(QStringLiteral("cannot restore messages"), error);
    }
    return true;
}

qint64 Storage::addToolCall(const ToolCallRecord& c) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("INSERT INTO tool_calls (message_id, call_id, name, arguments, result, created_at,"
                             " state, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const QVariant& v : {QVariant(c.messageId), text(c.callId), text(c.name), text(c.arguments),
                              text(c.result), QVariant(c.createdAt ? c.createdAt : nowMs()), text(c.state),
                              QVariant(c.durationMs)})
        q.addBindValue(v);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save a tool call"), q.lastError()), 0;
    return q.lastInsertId().toLongLong();
}

QList<ToolCallRecord> Storage::toolCalls(qint64 messageId) {
    QList<ToolCallRecord> out;
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("SELECT id, message_id, call_id, name, arguments, result, created_at, state,"
                             " duration_ms FROM tool_calls"
                             " WHERE message_id = ? ORDER BY id"));
    q.addBindValue(messageId);
    if (!ready || !q.exec()) return out;
    while (q.next()) {
        ToolCallRecord c;
        c.id = q.value(0).toLongLong();
        c.messageId = q.value(1).toLongLong();
        c.callId = q.value(2).toString();
        c.name = q.value(3).toString();
        c.arguments = q.value(4).toString();
        c.result = q.value(5).toString();
        c.createdAt = q.value(6).toLongLong();
        c.state = q.value(7).toString();
        c.durationMs = q.value(8).toDouble();
        out.append(c);
    }
    return out;
}

bool Storage::updateToolCall(const ToolCallRecord& c) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("UPDATE tool_calls SET result = ?, state = ?, duration_ms = ? WHERE id = ?"));
    for (const QVariant& v : {text(c.result), text(c.state), QVariant(c.durationMs), QVariant(c.id)}) q.addBindValue(v);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save tool call %1").arg(c.id), q.lastError());
    return q.numRowsAffected() == 1;
}

bool Storage::setToolsEnabled(qint64 conversationId, bool enabled) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("INSERT INTO conversation_tools (conversation_id, enabled) VALUES (?, ?)"
                             " ON CONFLICT(conversation_id) DO UPDATE SET enabled = excluded.enabled"));
    q.addBindValue(conversationId);
    q.addBindValue(enabled ? 1 : 0);
    if (!ready || !q.exec()) return fail(QStringLiteral("cannot save the tools switch of conversation %1").arg(conversationId), q.lastError());
    return true;
}

bool Storage::toolsEnabled(qint64 conversationId) {
    QSqlQuery q(db());
    const bool ready = q.prepare(QStringLiteral("SELECT enabled FROM conversation_tools WHERE conversation_id = ?"));
    q.addBindValue(conversationId);
    return ready && q.exec() && q.next() && q.value(0).toInt() != 0;
}

MessageRecord Storage::asStored(MessageRecord m) const {
    // Only a writable database had its dead replies marked at open(); in the
    // others a reply still Streaming was cut off all the same.
    if (m.state == MessageState::Streaming && mode() != StorageMode::ReadWrite) m.state = MessageState::Interrupted;
    return m;
}

int Storage::checkpoint() {
    // Never into a file opened read-only (it may be damaged).
    if (mode() != StorageMode::ReadWrite) return 0;
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)")) || !q.next())
        return fail(QStringLiteral("checkpoint failed"), q.lastError()), -1;
    // Columns: busy, frames in the log, frames checkpointed.
    return q.value(2).toInt();
}

void Storage::closeThreadConnection() {
    dropThreadConnection();
    // A later thread may get this thread's id.
    QMutexLocker lock(&lastErrorMutex_);
    lastError_.remove(QThread::currentThreadId());
}

qint64 Storage::importConversation(const ConversationRecord& conv, const QList<MessageRecord>& messages,
                                   const QList<QList<ToolCallRecord>>& toolCalls, const QList<int>& parentIndex) {
    QSqlDatabase d = db();
    if (!d.transaction()) return fail(QStringLiteral("cannot start the import"), d.lastError()), 0;
    auto rollback = [&](const QString& what, const auto& detail) {
        d.rollback();
        fail(what, detail);
        return qint64(0);
    };
    QSqlQuery q(d);
    const bool ready = q.prepare(QStringLiteral("INSERT INTO conversations (title, created_at, updated_at, system_prompt, temperature,"
                             " top_p, top_k, max_tokens, seed, context_policy, min_p, repeat_penalty, engine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const qint64 now = nowMs();
    const auto& s = conv.settings;
    for (const QVariant& v : {text(conv.title), QVariant(conv.createdAt ? conv.createdAt : now),
                              QVariant(conv.updatedAt ? conv.updatedAt : now), text(s.systemPrompt),
                              QVariant(s.temperature), QVariant(s.topP), QVariant(s.topK), QVariant(s.maxTokens),
                              QVariant(s.seed), text(s.contextPolicy), QVariant(s.minP), QVariant(s.repeatPenalty),
                              text(s.engine)})
        q.addBindValue(v);
    if (!ready || !q.exec()) return rollback(QStringLiteral("cannot import the conversation"), q.lastError());
    const qint64 id = q.lastInsertId().toLongLong();
    QList<qint64> newIds;
    for (int i = 0; i < messages.size(); ++i) {
        const MessageRecord& m = messages[i];
        // Without parent indexes each message follows the one before it.
        const int parentAt = i < parentIndex.size() ? parentIndex[i] : i - 1;
        if (parentAt >= i) return rollback(QStringLiteral("cannot import message %1").arg(i + 1),
                                           QStringLiteral("it follows a message that comes after it"));
        const QVariant parent = parentAt >= 0 ? QVariant(newIds[parentAt]) : QVariant(QMetaType::fromType<qint64>());
        QSqlQuery mq(d);
        const bool mready = mq.prepare(QStringLiteral(
            "INSERT INTO messages (conversation_id, position, role, content, state, error, prompt_tokens,"
            " completion_tokens, cached_tokens, tokens_per_second, ttft_ms, created_at, updated_at, parent_id,"
            " active, finish_reason, context_from_id, draft_tokens, accepted_draft_tokens, model)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)"));
        // An imported reply cannot still be generating.
        const MessageState state = m.state == MessageState::Streaming ? MessageState::Interrupted : m.state;
        for (const QVariant& v : {QVariant(id), QVariant(i), text(m.role), text(m.content),
                                  QVariant(messageStateName(state)), text(m.error), QVariant(m.promptTokens),
                                  QVariant(m.completionTokens), QVariant(m.cachedTokens), QVariant(m.tokensPerSecond),
                                  QVariant(m.timeToFirstTokenMs), QVariant(m.createdAt ? m.createdAt : now),
                                  QVariant(m.updatedAt ? m.updatedAt : now), parent, QVariant(m.active ? 1 : 0),
                                  text(m.finishReason), QVariant(m.draftTokens), QVariant(m.acceptedDraftTokens),
                                  text(m.model)})
            mq.addBindValue(v);
        if (!mready || !mq.exec()) return rollback(QStringLiteral("cannot import message %1").arg(i + 1), mq.lastError());
        const qint64 messageId = mq.lastInsertId().toLongLong();
        newIds.append(messageId);
        if (i < toolCalls.size()) {
            for (ToolCallRecord c : toolCalls[i]) {
                c.messageId = messageId;
                if (!addToolCall(c)) return rollback(QStringLiteral("cannot import a tool call"), lastError());
            }
        }
    }
    if (!d.commit()) return rollback(QStringLiteral("cannot commit the import"), d.lastError());
    return id;
}

QString Storage::backupPath(int n) const { return QDir(dir_).filePath(QStringLiteral("weir.backup-%1.sqlite3").arg(n)); }

bool Storage::backUp() {
    if (mode() != StorageMode::ReadWrite)
        return fail(QStringLiteral("no backup copy: the database is not open for writing"), {}, StorageProblem::Other);
    const QString fresh = QDir(dir_).filePath(QStringLiteral("weir.backup-new.sqlite3"));
    QFile::remove(fresh);  // a partial copy an earlier attempt left (Weir's own file, not the user's)
    QString quoted = fresh;
    quoted.replace(u'\'', QStringLiteral("''"));
    QSqlQuery q(db());
    if (!q.exec(QStringLiteral("VACUUM INTO '%1'").arg(quoted))) {
        QFile::remove(fresh);
        return fail(QStringLiteral("cannot write a backup copy"), q.lastError());
    }
    // Rotate only once the new copy is complete: a failed copy keeps both old ones.
    const QString newest = backupPath(1), older = backupPath(2);
    if (QFile::exists(newest)) {
        QFile::remove(older);
        if (!QFile::rename(newest, older)) return fail(QStringLiteral("cannot rotate the backup copies"), newest);
    }
    if (!QFile::rename(fresh, newest)) return fail(QStringLiteral("cannot name the backup copy"), newest);
    return true;
}

QList<StorageBackup> Storage::backups() const {
    QList<StorageBackup> out;
    for (int n = 1; n <= 2; ++n) {
        const QFileInfo info(backupPath(n));
        if (info.isFile() && info.size() > 0) out.append({info.filePath(), info.lastModified()});
    }
    return out;
}

namespace {

// Whether SQLite finds the file at `path` sound, read through a connection of its own.
bool isSoundCopy(const QString& path, const QString& connection) {
    bool sound = false;
    {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        d.setDatabaseName(path);
        d.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        if (d.open()) {
            QSqlQuery q(d);
            sound = q.exec(QStringLiteral("PRAGMA integrity_check(1)")) && q.next() && q.value(0).toString() == u"ok" &&
                    q.exec(QStringLiteral("PRAGMA user_version")) && q.next() && q.value(0).toInt() <= migrations::kLatest;
        }
        d.close();
    }
    QSqlDatabase::removeDatabase(connection);
    return sound;
}

} // namespace

bool Storage::restoreBackup(QString* keptAs) {
    QString source;
    for (const StorageBackup& b : backups()) {
        if (isSoundCopy(b.path, connectionPrefix_ + QStringLiteral("backup-check"))) {
            source = b.path;
            break;
        }
    }
    if (source.isEmpty()) return fail(QStringLiteral("no sound backup copy to restore in ") + dir_, {}, StorageProblem::Other);
    dropThreadConnection();
    mode_ = int(StorageMode::Closed);
    {
        QMutexLocker lock(&connectionsMutex_);
        if (!connections_.isEmpty())
            return fail(QStringLiteral("cannot restore while another thread uses the database"), {}, StorageProblem::Other);
    }
    // The old file and its log move aside together, under a name that says what they are.
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString aside = QDir(dir_).filePath(QStringLiteral("weir.damaged-%1.sqlite3").arg(stamp));
    for (int n = 2; QFile::exists(aside); ++n)
        aside = QDir(dir_).filePath(QStringLiteral("weir.damaged-%1-%2.sqlite3").arg(stamp).arg(n));
    const QStringList suffixes{QString(), QStringLiteral("-wal"), QStringLiteral("-shm")};
    QStringList moved;
    auto putBack = [&] {
        for (const QString& suffix : std::as_const(moved)) QFile::rename(aside + suffix, path_ + suffix);
    };
    for (const QString& suffix : suffixes) {
        if (!QFile::exists(path_ + suffix)) continue;
        if (!QFile::rename(path_ + suffix, aside + suffix)) {
            putBack();
            return fail(QStringLiteral("cannot move %1 aside").arg(path_ + suffix), {}, StorageProblem::ReadOnly);
        }
        moved << suffix;
    }
    const QString incoming = path_ + QStringLiteral(".restoring");
    QFile::remove(incoming);
    if (!QFile::copy(source, incoming) || !QFile::rename(incoming, path_)) {
        QFile::remove(incoming);
        putBack();
        return fail(QStringLiteral("cannot copy %1 to %2").arg(source, path_), {}, StorageProblem::Other);
    }
    if (keptAs) *keptAs = moved.isEmpty() ? QString() : aside;
    return open();
}

void Storage::setPageLimitForTesting(qint64 pages) {
    QSqlQuery q(db());
    q.exec(QStringLiteral("PRAGMA max_page_count = %1").arg(pages > 0 ? pages : qint64(4294967294LL)));
}

} // namespace weir::desktop
