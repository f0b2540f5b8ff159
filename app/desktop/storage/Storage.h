#pragma once
// Storage owns Weir's SQLite database (conversations, messages, tool calls)
// and is the only code that writes SQL. WAL journal, foreign keys on,
// numbered schema migrations tracked in PRAGMA user_version. Each thread that
// uses a Storage gets its own connection, and its own last error: the
// checkpointer thread failing must not change what the GUI thread reads.
//
// The user's database file is never deleted, overwritten or "repaired": a file
// that fails SQLite's integrity check or cannot be written is opened read-only,
// one that cannot be read at all is left alone while the app runs on a
// temporary database, and restoring a backup copy first renames it aside.
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QSet>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <atomic>
#include <optional>

#include "storage/Records.h"

class QSqlError;

namespace weir::desktop {

// What a failed call ran into, from SQLite's result code.
enum class StorageProblem {
    None,
    DiskFull,   // SQLITE_FULL: no space on the disk (or the size limit reached)
    ReadOnly,   // the file, its folder or the connection cannot be written
    Damaged,    // SQLITE_CORRUPT / SQLITE_NOTADB, or integrity_check found problems
    Other,
};

// How the database is open. Only ReadWrite writes to the user's file.
enum class StorageMode { Closed, ReadWrite, ReadOnly, Temporary };

// A backup copy Storage keeps next to the database (newest first in backups()).
struct StorageBackup {
    QString path;
    QDateTime time;  // when it was written
};

class Storage {
public:
    // The database file lives in `dataDir` (created if missing).
    explicit Storage(const QString& dataDir);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    // Opens the database for reading and writing: checks an existing file with
    // PRAGMA integrity_check before anything is written to it, migrates it to
    // `targetVersion` (default: latest) and marks replies left Streaming by a
    // killed process as Interrupted. On failure returns false, lastError() and
    // lastProblem() say why, and the file is as it was.
    bool open(int targetVersion = -1);
    // After open() failed: the existing file, read-only (no migration, nothing
    // written). Writes then fail with StorageProblem::ReadOnly. False if even
    // reading fails (not a database, unreadable schema, no file). In a folder
    // that cannot be written (a read-only mount) and without a write-ahead log
    // beside it, the file is read as immutable (SQLite could not create the
    // log's index there, and nothing can change the file).
    bool openReadOnly();
    // After both failed: an empty database in memory, so the app still works;
    // nothing in it outlives the process. The file is not touched.
    bool openTemporary();
    bool isOpen() const { return mode() != StorageMode::Closed; }
    StorageMode mode() const { return StorageMode(mode_.load()); }
    // Why the calling thread's last failed call failed ("" if none failed).
    QString lastError() const;
    StorageProblem lastProblem() const;
    // What integrity_check reported when the last open() found the file damaged.
    QStringList integrityProblems() const { return integrityProblems_; }
    QString databasePath() const { return path_; }

    // Backup copies (SQLite's VACUUM INTO), two kept, newest first. backUp()
    // runs on any thread, only in ReadWrite mode; a failed copy leaves the
    // earlier ones as they were.
    bool backUp();
    QList<StorageBackup> backups() const;
    // Replaces the database with the newest backup that passes integrity_check:
    // the current file (with its -wal and -shm) is renamed to
    // weir.damaged-DATE.sqlite3, never deleted, then the copy is opened with
    // open(). Call only while no other thread holds a connection (stop the
    // checkpointer first). `keptAs` gets the name the old file now has.
    bool restoreBackup(QString* keptAs = nullptr);

    // Simulates a full disk on the calling thread's connection: the database
    // may not grow past `pages` pages (PRAGMA max_page_count; 0 lifts it).
    void setPageLimitForTesting(qint64 pages);

    static int latestSchemaVersion();
    int schemaVersion();
    // Replies found Streaming at open() and marked Interrupted.
    int interruptedAtOpen() const { return interruptedAtOpen_; }

    // Conversations. Deleted ones (deletedAt != 0) are hidden unless asked.
    qint64 createConversation(const QString& title, const ConversationSettings& settings = {});
    QList<ConversationRecord> conversations(bool includeDeleted = false);
    std::optional<ConversationRecord> conversation(qint64 id);
    bool renameConversation(qint64 id, const QString& title);
    bool setConversationSettings(qint64 id, const ConversationSettings& settings);
    // Every conversation (deleted ones too) on the remote engine `from` moves
    // to `to`, in one statement: a renamed endpoint keeps its conversations.
    // How many moved; -1 when the database refused.
    int renameEngine(const QString& from, const QString& to);
    bool touchConversation(qint64 id);
    bool setConversationDeleted(qint64 id, bool deleted);  // soft delete, undoable
    bool deleteConversation(qint64 id);                    // for good, with its messages
    int purgeDeletedConversations();
    // Ids of live conversations whose title or any message contains `text`
    // (case-insensitive), most recently updated first.
    QList<qint64> searchConversations(const QString& text);
    // The first message (by position) of each live conversation whose content
    // contains `text` (case-insensitive): message id and content, by conversation id.
    QHash<qint64, QPair<qint64, QString>> firstMatchingMessages(const QString& text);

    // Messages. appendMessage assigns the next position and returns the id; the
    // message follows `message.parentId`, or when that is 0 the last message
    // of the visible branch (a new turn at the end of what is on screen).
    qint64 appendMessage(const MessageRecord& message);
    // The visible branch (see Records.h), with versionIndex/versionCount filled.
    QList<MessageRecord> messages(qint64 conversationId);
    // How many times messages() has read a branch: a reply reads its branch
    // once, and the chat tests hold it to that with this count.
    quint64 branchReads() const { return branchReads_.load(std::memory_order_relaxed); }
    // Every message of every version, in position order (JSON export).
    QList<MessageRecord> allMessages(qint64 conversationId);
    std::optional<MessageRecord> message(qint64 id);
    // Saves the text of a reply still generating (cheap, called every second).
    bool saveProgress(qint64 messageId, const QString& content);
    // Saves everything about a finished (or failed/cancelled) message.
    bool updateMessage(const MessageRecord& message);
    // Removes the messages at `position` and after, in every branch.
    bool deleteMessagesFrom(qint64 conversationId, int position);
    // A new version of the turn `versionOf` belongs to (an edit, a regeneration):
    // `message` follows the same parent and becomes the version shown. Returns its id or 0.
    qint64 addVersion(const MessageRecord& message, qint64 versionOf);
    // Shows this version of its turn (and so the branch that follows it).
    bool selectVersion(qint64 messageId);
    // Deletes one message. The only version of its turn: the turns after it
    // stay and now follow its parent. One of several versions: it goes with
    // the turns that followed it, and the newest other version is shown.
    bool deleteMessage(qint64 messageId);
    // Undo of deleteMessage: `before` is allMessages() of the conversation as
    // it was, with the tool calls of each message by id. Messages missing now
    // are written back under their ids; the others get back the parent and
    // active flag they had. Messages written since are left as they are.
    bool restoreMessages(const QList<MessageRecord>& before, const QHash<qint64, QList<ToolCallRecord>>& toolCalls);

    // Tool calls belong to an assistant message.
    qint64 addToolCall(const ToolCallRecord& call);
    QList<ToolCallRecord> toolCalls(qint64 messageId);
    // Result, state and duration of a call (by id) as the agent loop advances.
    bool updateToolCall(const ToolCallRecord& call);
    // Whether a conversation offers the tools to the model (off by default).
    bool setToolsEnabled(qint64 conversationId, bool enabled);
    bool toolsEnabled(qint64 conversationId);

    // Copies the write-ahead log into the database file (the only step that
    // waits for the disk). Connections never do it on their own; the
    // StorageCheckpointer calls this on its thread so the GUI never waits.
    // Returns the number of log frames checkpointed, or -1 on error; 0 when
    // the database is not open for writing.
    int checkpoint();
    // Closes the calling thread's connection (threads that stop using Storage).
    void closeThreadConnection();

    // A whole conversation in one transaction (JSON import). Returns the new id or 0.
    // parentIndex[i]: the index of the message message i follows (-1: the
    // first turn); when empty, each message follows the one before it.
    qint64 importConversation(const ConversationRecord& conversation,
                              const QList<MessageRecord>& messages,
                              const QList<QList<ToolCallRecord>>& toolCalls,
                              const QList<int>& parentIndex = {});

private:
    struct Failure {
        QString message;
        StorageProblem problem = StorageProblem::None;
    };
    QSqlDatabase db();
    QString connectionName() const;
    void dropThreadConnection();
    bool openReadWrite(int targetVersion);
    bool openForReading();
    bool migrate(QSqlDatabase& db, int targetVersion);
    bool checkIntegrity(QSqlDatabase& db);
    bool fail(const QString& what, const QString& detail, StorageProblem problem = StorageProblem::Other);
    bool fail(const QString& what, const QSqlError& error);
    QString backupPath(int n) const;
    MessageRecord asStored(MessageRecord m) const;
    qint64 insertMessage(const MessageRecord& message, qint64 parent, bool active);

    QString dir_, path_, connectionPrefix_;
    QMutex connectionsMutex_;
    QSet<QString> connections_;
    std::atomic<int> mode_{int(StorageMode::Closed)};  // read by every thread's db()
    // ReadOnly on a folder nothing can be created in (a read-only mount):
    // SQLite opens the file as immutable, as it cannot make the WAL's index.
    std::atomic<bool> immutable_{false};
    std::atomic<quint64> branchReads_{0};
    int interruptedAtOpen_ = 0;
    QStringList integrityProblems_;
    mutable QMutex lastErrorMutex_;
    QHash<Qt::HANDLE, Failure> lastError_;  // by thread, under lastErrorMutex_
};

} // namespace weir::desktop
