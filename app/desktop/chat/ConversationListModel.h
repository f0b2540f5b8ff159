#pragma once
// The sidebar: live conversations, most recently updated first, optionally
// filtered by a search (title and content, done by Storage). Each row shows
// whether its conversation is generating or waiting in the engine's queue.
#include <QAbstractListModel>
#include <QHash>
#include <QtQml/qqmlregistration.h>

#include "chat/SearchSnippet.h"
#include "storage/Records.h"

namespace weir::desktop {

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ConversationListModel comes from ChatController")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles {
        ConversationIdRole = Qt::UserRole + 1,
        TitleRole,
        UpdatedAtRole,      // QDateTime
        SectionRole,        // "Today", "Yesterday", "Previous 7 days", "Older"
        ActivityRole,       // "", "waiting", "prefill", "decode"
        QueuePositionRole,  // when waiting: 1 = next to start
        SnippetRole,        // while searching: the text around the first match in a message ("" if only the title matched)
        SnippetMatchStartRole,   // where the match is in the snippet (-1: not in it)
        SnippetMatchLengthRole,
        MatchMessageIdRole,  // the message the snippet comes from (0: none)
    };
    Q_ENUM(Roles)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int count() const { return int(rows_.size()); }

    struct SearchMatch {
        qint64 messageId = 0;
        SearchSnippet snippet;
    };
    // The rows, and for a search, where each matched (by conversation id;
    // empty when not searching). Replaces both.
    void setConversations(const QList<ConversationRecord>& conversations,
                          const QHash<qint64, SearchMatch>& matches = {});
    // Inserts or updates one row, keeping the most-recent-first order.
    void upsert(const ConversationRecord& conversation);
    void remove(qint64 id);
    void setActivity(qint64 id, const QString& activity, int queuePosition = 0);
    QString activity(qint64 id) const { return activity_.value(id).first; }

    Q_INVOKABLE int rowOf(qint64 id) const;
    Q_INVOKABLE qint64 idAt(int row) const;

signals:
    void countChanged();

private:
    QList<ConversationRecord> rows_;
    QHash<qint64, SearchMatch> matches_;
    QHash<qint64, QPair<QString, int>> activity_;  // kept across reloads
};

} // namespace weir::desktop
