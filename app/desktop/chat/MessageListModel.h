#pragma once
// The messages of the conversation on screen. Each row carries its stored
// record, a MessagePartsModel for the typed parts, and the live activity of a
// reply that is generating (waiting in the queue, reading the prompt, writing).
#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <vector>
#include <memory>

#include "chat/MessagePartsModel.h"
#include "storage/Records.h"

namespace weir::desktop {

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("MessageListModel comes from ChatController")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles {
        MessageIdRole = Qt::UserRole + 1,
        RoleRole,             // "user", "assistant", "system", "tool"
        ContentRole,          // raw text (Markdown for replies)
        PartsRole,            // MessagePartsModel*
        StateRole,            // "complete", "streaming", "interrupted", "cancelled", "failed"
        ErrorRole,            // engine error of a failed reply
        PromptTokensRole,
        CompletionTokensRole,
        CachedTokensRole,
        TokensPerSecondRole,
        TimeToFirstTokenRole, // ms
        CreatedAtRole,        // QDateTime
        ActivityRole,         // streaming only: "preparing", "waiting", "prefill", "decode" or ""
        QueuePositionRole,    // streaming + waiting: 1 = next to start
        IsLastRole,
        SavedRole,            // false while the database has not taken the latest text or state
        VersionIndexRole,     // which version of its turn this is, from 0 (the "2/3" switcher)
        VersionCountRole,     // how many versions the turn has
        FinishReasonRole,     // replies: "length" when it stopped at Max tokens
        ContextStartRole,     // true: the model was not sent the messages above this one (a divider)
        ToolCallsRole,        // the reply's tool calls, one map each (chat/AgentTurns.h toolCallMap)
        DraftTokensRole,      // replies: speculative draft tokens verified (0: none)
        AcceptedDraftTokensRole, // replies: how many of those the model kept
        ModelNameRole,        // replies: the model that wrote it ("" when not known)
    };
    Q_ENUM(Roles)

    using QAbstractListModel::QAbstractListModel;
    ~MessageListModel() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int count() const { return int(rows_.size()); }
    // The context the latest reply with usage took: what it was sent and what it wrote (0: none).
    int latestReplyTokens() const;

    void setMessages(const QList<MessageRecord>& messages);
    void append(const MessageRecord& message);
    // Live text of a streaming reply (re-splits its parts incrementally).
    void setContent(qint64 messageId, const QString& content);
    void update(const MessageRecord& message);
    void setActivity(qint64 messageId, const QString& activity, int queuePosition);
    void setSaved(qint64 messageId, bool saved);
    void setToolCalls(qint64 messageId, const QVariantList& calls);
    void removeFrom(int position);
    // The first message the latest reply was sent after the system prompt
    // (0: all were sent). setMessages works it out from the latest reply.
    void setContextStart(qint64 messageId);
    qint64 contextStart() const { return contextStart_; }

    int rowOf(qint64 messageId) const;
    const MessageRecord* record(qint64 messageId) const;
    Q_INVOKABLE QVariantMap get(int row) const;

signals:
    void countChanged();

private:
    struct Row {
        MessageRecord record;
        std::unique_ptr<MessagePartsModel> parts;
        QString activity;
        int queuePosition = 0;
        bool saved = true;
        QVariantList toolCalls;
    };
    Row makeRow(const MessageRecord& m);
    std::vector<Row> rows_;
    qint64 contextStart_ = 0;
};

} // namespace weir::desktop
