#pragma once
// Storage owns Weir's SQLite database (conversations, messages, tool calls)
// and is the only code that writes SQL. WAL journal, foreign keys on,
// numbered schema migrations tracked in PRAGMA user_version. Each thread that
// uses a Storage gets its own connection, and its own last error: the
// checkpointer thread failing must not change what the GUI thread reads.
#include <QHash>
#include <QList>
#include <QMutex>
#include <QSet>
#include <QSqlDatabase>
#include <QString>
#include <optional>

#include "storage/Records.h"

namespace weir::desktop {

class Storage {
public:
    // The database file lives in `dataDir` (created if missing).
    explicit Storage(const QString& dataDir);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    // Opens the database, migrates it to `targetVersion` (default: latest)
    // and marks replies left Streaming by a killed process as Interrupted.
    // On failure returns false and lastError() says why.
    bool open(int targetVersion = -1);
    bool isOpen() const { return open_; }
    // Why the calling thread's last failed call failed ("" if none failed).
    QString lastError() const;
    QString databasePath() const { return path_; }

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
    bool touchConversation(qint64 id);
    bool setConversationDeleted(qint64 id, bool deleted);  // soft delete, undoable
    bool deleteConversation(qint64 id);                    // for good, with its messages
    int purgeDeletedConversations();
    // Ids of live conversations whose title or any message contains `text`
    // (case-insensitive), most recently updated first.
    QList<qint64> searchConversations(const QString& text);

    // Messages. appendMessage assigns the next position and returns the id.
    qint64 appendMessage(const MessageRecord& message);
    QList<MessageRecord> messages(qint64 conversationId);
    std::optional<MessageRecord> message(qint64 id);
    // Saves the text of a reply still generating (cheap, called every second).
    bool saveProgress(qint64 messageId, const QString& content);
    // Saves everything about a finished (or failed/cancelled) message.
    bool updateMessage(const MessageRecord& message);
    // Removes the messages at `position` and after (regenerate, edit and resend).
    bool deleteMessagesFrom(qint64 conversationId, int position);

    // Tool calls belong to an assistant message.
    qint64 addToolCall(const ToolCallRecord& call);
    QList<ToolCallRecord> toolCalls(qint64 messageId);

    // Copies the write-ahead log into the database file (the only step that
    // waits for the disk). Connections never do it on their own; the
    // StorageCheckpointer calls this on its thread so the GUI never waits.
    // Returns the number of log frames checkpointed, or -1 on error.
    int checkpoint();
    // Closes the calling thread's connection (threads that stop using Storage).
    void closeThreadConnection();

    // A whole conversation in one transaction (JSON import). Returns the new id or 0.
    qint64 importConversation(const ConversationRecord& conversation,
                              const QList<MessageRecord>& messages,
                              const QList<QList<ToolCallRecord>>& toolCalls);

private:
    QSqlDatabase db();
    bool migrate(QSqlDatabase& db, int targetVersion);
    bool fail(const QString& what, const QString& detail);

    QString dir_, path_, connectionPrefix_;
    QMutex connectionsMutex_;
    QSet<QString> connections_;
    bool open_ = false;
    int interruptedAtOpen_ = 0;
    mutable QMutex lastErrorMutex_;
    QHash<Qt::HANDLE, QString> lastError_;  // by thread, under lastErrorMutex_
};

} // namespace weir::desktop
