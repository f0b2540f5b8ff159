#include "chat/MessageListModel.h"

#include <QDateTime>

namespace weir::desktop {

MessageListModel::~MessageListModel() = default;

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= rows_.size()) return {};
    const Row& r = rows_[index.row()];
    const MessageRecord& m = r.record;
    switch (role) {
    case MessageIdRole: return m.id;
    case RoleRole: return m.role;
    case ContentRole: return m.content;
    case PartsRole: return QVariant::fromValue(static_cast<QObject*>(r.parts.get()));
    case StateRole: return messageStateName(m.state);
    case ErrorRole: return m.error;
    case PromptTokensRole: return m.promptTokens;
    case CompletionTokensRole: return m.completionTokens;
    case CachedTokensRole: return m.cachedTokens;
    case TokensPerSecondRole: return m.tokensPerSecond;
    case TimeToFirstTokenRole: return m.timeToFirstTokenMs;
    case CreatedAtRole: return QDateTime::fromMSecsSinceEpoch(m.createdAt);
    case ActivityRole: return r.activity;
    case QueuePositionRole: return r.queuePosition;
    case IsLastRole: return size_t(index.row()) + 1 == rows_.size();
    case SavedRole: return r.saved;
    case VersionIndexRole: return m.versionIndex;
    case VersionCountRole: return m.versionCount;
    case FinishReasonRole: return m.finishReason;
    case ContextStartRole: return contextStart_ != 0 && m.id == contextStart_;
    case ToolCallsRole: return r.toolCalls;
    case DraftTokensRole: return m.draftTokens;
    case AcceptedDraftTokensRole: return m.acceptedDraftTokens;
    case ModelNameRole: return m.model;
    }
    return {};
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{MessageIdRole, "messageId"},
            {RoleRole, "role"},
            {ContentRole, "content"},
            {PartsRole, "parts"},
            {StateRole, "state"},
            {ErrorRole, "error"},
            {PromptTokensRole, "promptTokens"},
            {CompletionTokensRole, "completionTokens"},
            {CachedTokensRole, "cachedTokens"},
            {TokensPerSecondRole, "tokensPerSecond"},
            {TimeToFirstTokenRole, "timeToFirstTokenMs"},
            {CreatedAtRole, "createdAt"},
            {ActivityRole, "activity"},
            {QueuePositionRole, "queuePosition"},
            {IsLastRole, "isLast"},
            {SavedRole, "saved"},
            {VersionIndexRole, "versionIndex"},
            {VersionCountRole, "versionCount"},
            {FinishReasonRole, "finishReason"},
            {ContextStartRole, "contextStart"},
            {ToolCallsRole, "toolCalls"},
            {DraftTokensRole, "draftTokens"},
            {AcceptedDraftTokensRole, "acceptedDraftTokens"},
            {ModelNameRole, "modelName"}};
}

MessageListModel::Row MessageListModel::makeRow(const MessageRecord& m) {
    Row r;
    r.record = m;
    r.parts = std::make_unique<MessagePartsModel>();
    r.parts->setContent(m.content);
    return r;
}

void MessageListModel::setMessages(const QList<MessageRecord>& messages) {
    beginResetModel();
    rows_.clear();
    rows_.reserve(messages.size());
    for (const MessageRecord& m : messages) rows_.push_back(makeRow(m));
    contextStart_ = 0;
    for (auto it = messages.crbegin(); it != messages.crend(); ++it) {
        if (it->role != u"assistant") continue;
        contextStart_ = it->contextFromId;
        break;
    }
    endResetModel();
    emit countChanged();
}

void MessageListModel::append(const MessageRecord& message) {
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    rows_.push_back(makeRow(message));
    endInsertRows();
    if (row > 0) emit dataChanged(index(row - 1), index(row - 1), {IsLastRole});
    emit countChanged();
}

void MessageListModel::setContent(qint64 messageId, const QString& content) {
    const int row = rowOf(messageId);
    if (row < 0 || rows_[row].record.content == content) return;
    rows_[row].record.content = content;
    rows_[row].parts->setContent(content);
    emit dataChanged(index(row), index(row), {ContentRole});
}

void MessageListModel::update(const MessageRecord& message) {
    const int row = rowOf(message.id);
    if (row < 0) return;
    rows_[row].record = message;
    rows_[row].parts->setContent(message.content);
    if (message.state != MessageState::Streaming) {
        rows_[row].activity.clear();
        rows_[row].queuePosition = 0;
    }
    emit dataChanged(index(row), index(row));
}

void MessageListModel::setActivity(qint64 messageId, const QString& activity, int queuePosition) {
    const int row = rowOf(messageId);
    if (row < 0) return;
    Row& r = rows_[row];
    if (r.activity == activity && r.queuePosition == queuePosition) return;
    r.activity = activity;
    r.queuePosition = queuePosition;
    emit dataChanged(index(row), index(row), {ActivityRole, QueuePositionRole});
}

void MessageListModel::setToolCalls(qint64 messageId, const QVariantList& calls) {
    const int row = rowOf(messageId);
    if (row < 0) return;
    rows_[row].toolCalls = calls;
    emit dataChanged(index(row), index(row), {ToolCallsRole});
}

void MessageListModel::setSaved(qint64 messageId, bool saved) {
    const int row = rowOf(messageId);
    if (row < 0 || rows_[row].saved == saved) return;
    rows_[row].saved = saved;
    emit dataChanged(index(row), index(row), {SavedRole});
}

void MessageListModel::removeFrom(int position) {
    int first = -1;
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].record.position >= position) {
            first = int(i);
            break;
        }
    }
    if (first < 0) return;
    beginRemoveRows({}, first, int(rows_.size()) - 1);
    rows_.erase(rows_.begin() + first, rows_.end());
    endRemoveRows();
    if (first > 0) emit dataChanged(index(first - 1), index(first - 1), {IsLastRole});
    emit countChanged();
}

void MessageListModel::setContextStart(qint64 messageId) {
    if (messageId == contextStart_) return;
    const int before = rowOf(contextStart_);
    contextStart_ = messageId;
    const int after = rowOf(messageId);
    if (before >= 0) emit dataChanged(index(before), index(before), {ContextStartRole});
    if (after >= 0) emit dataChanged(index(after), index(after), {ContextStartRole});
}

int MessageListModel::rowOf(qint64 messageId) const {
    // Replies stream at the end: search from the back.
    for (int i = int(rows_.size()) - 1; i >= 0; --i)
        if (rows_[i].record.id == messageId) return i;
    return -1;
}

const MessageRecord* MessageListModel::record(qint64 messageId) const {
    const int row = rowOf(messageId);
    return row < 0 ? nullptr : &rows_[row].record;
}

int MessageListModel::latestReplyTokens() const {
    for (auto it = rows_.crbegin(); it != rows_.crend(); ++it) {
        const MessageRecord& m = it->record;
        if (m.role != u"assistant") continue;
        if (const int used = m.promptTokens + m.completionTokens; used > 0) return used;
    }
    return 0;
}

QVariantMap MessageListModel::get(int row) const {
    QVariantMap out;
    if (row < 0 || size_t(row) >= rows_.size()) return out;
    const QHash<int, QByteArray> names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        out.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
    return out;
}

} // namespace weir::desktop
