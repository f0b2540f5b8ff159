#pragma once
// The sidebar and which conversation is open: the list (filtered by the
// search text), create, select, rename, delete with undo (a conversation, or
// the latest deleted message), each conversation's settings, and export and
// import. What the open conversation shows is ChatController's: it is told
// through messagesChanged when the open conversation (or its messages) change.
#include <QHash>
#include <QObject>
#include <QUrl>
#include <QVariantMap>
#include <optional>

#include "chat/ConversationListModel.h"
#include "storage/Records.h"

namespace weir::desktop {

class GenerationTracker;
class Storage;

// What deleting one message undoes: the conversation's messages and tool calls before it.
struct MessageUndo {
    qint64 conversationId = 0;
    QString text;  // what the undo offer says
    QList<MessageRecord> before;
    QHash<qint64, QList<ToolCallRecord>> toolCalls;
};

class ConversationController : public QObject {
    Q_OBJECT

public:
    ConversationController(Storage* storage, const GenerationTracker* replies, QObject* parent = nullptr);

    ConversationListModel* model() { return &model_; }
    qint64 currentId() const { return currentId_; }
    QString currentTitle() const;
    QVariantMap currentSettings() const { return currentSettings_; }
    QString searchText() const { return searchText_; }
    void setSearchText(const QString& text);
    QString undoText() const;

    void reload();  // the list from the database
    qint64 newConversation();
    // Conversations nothing was written in yet (no messages, no title), most recent first.
    QList<qint64> emptyConversations() const;
    void select(qint64 id);
    void rename(qint64 id, const QString& title);
    void remove(qint64 id);
    // Undoes the latest deletion: a conversation, or a message (offerMessageUndo).
    void undoRemove();
    void purgeRemoved();
    // A message was deleted: Undo now means that.
    void offerMessageUndo(MessageUndo undo);
    // Re-reads one conversation's row (title, time) into the list.
    void refreshRow(qint64 id);
    // Re-reads the open conversation's settings, then emits currentChanged.
    void announceCurrentChanged();

    void setSettingsOf(qint64 conversationId, const QVariantMap& settings);
    QVariantMap defaultSettings() const;
    QString conversationTitle(qint64 id) const;

    bool exportConversation(qint64 id, const QUrl& file, const QString& format);
    qint64 importConversation(const QUrl& file);
    QString suggestedFileName(qint64 id, const QString& format) const;

signals:
    // Before currentChanged when another conversation opens, and when the open
    // one's messages changed under the view (a message restored): show them.
    void messagesChanged(qint64 conversationId);
    void currentChanged();
    void selected(qint64 id);  // after currentChanged
    void removing(qint64 id);  // a conversation is about to be deleted: stop what it runs
    void searchTextChanged();
    void undoChanged();
    void notice(const QString& text, bool error);

private:
    void storageFailed(const QString& what);

    Storage* storage_;
    const GenerationTracker* replies_;
    ConversationListModel model_;
    qint64 currentId_ = 0;
    QVariantMap currentSettings_;  // of currentId_, refreshed by announceCurrentChanged()
    QString searchText_;
    QList<QPair<qint64, QString>> removed_;  // undo stack: id, title
    std::optional<MessageUndo> deletedMessage_;  // offered while it is the latest thing deleted
};

} // namespace weir::desktop
