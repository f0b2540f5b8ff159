#include "chat/ConversationListModel.h"

#include <QCoreApplication>

#include <QDateTime>

namespace weir::desktop {
namespace {

QString sectionFor(qint64 ms) {
    const QDate day = QDateTime::fromMSecsSinceEpoch(ms).date();
    const QDate today = QDate::currentDate();
    if (day >= today) return QCoreApplication::translate("ConversationListModel", "Today");
    if (day == today.addDays(-1)) return QCoreApplication::translate("ConversationListModel", "Yesterday");
    if (day > today.addDays(-7)) return QCoreApplication::translate("ConversationListModel", "Previous 7 days");
    return QCoreApplication::translate("ConversationListModel", "Older");
}

bool before(const ConversationRecord& a, const ConversationRecord& b) {
    return a.updatedAt != b.updatedAt ? a.updatedAt > b.updatedAt : a.id > b.id;
}

} // namespace

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_.size()) return {};
    const ConversationRecord& c = rows_[index.row()];
    switch (role) {
    case ConversationIdRole: return c.id;
    case TitleRole: return c.title.isEmpty() ? tr("New conversation") : c.title;
    case UpdatedAtRole: return QDateTime::fromMSecsSinceEpoch(c.updatedAt);
    case SectionRole: return sectionFor(c.updatedAt);
    case ActivityRole: return activity_.value(c.id).first;
    case QueuePositionRole: return activity_.value(c.id).second;
    case SnippetRole: return matches_.value(c.id).snippet.text;
    case SnippetMatchStartRole: return matches_.contains(c.id) ? matches_.value(c.id).snippet.matchStart : -1;
    case SnippetMatchLengthRole: return matches_.value(c.id).snippet.matchLength;
    case MatchMessageIdRole: return matches_.value(c.id).messageId;
    }
    return {};
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{ConversationIdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedAtRole, "updatedAt"},
            {SectionRole, "section"}, {ActivityRole, "activity"}, {QueuePositionRole, "queuePosition"},
            {SnippetRole, "snippet"}, {SnippetMatchStartRole, "snippetMatchStart"},
            {SnippetMatchLengthRole, "snippetMatchLength"}, {MatchMessageIdRole, "matchMessageId"}};
}

void ConversationListModel::setConversations(const QList<ConversationRecord>& conversations,
                                             const QHash<qint64, SearchMatch>& matches) {
    beginResetModel();
    rows_ = conversations;
    matches_ = matches;
    std::stable_sort(rows_.begin(), rows_.end(), before);
    endResetModel();
    emit countChanged();
}

void ConversationListModel::upsert(const ConversationRecord& c) {
    int row = rowOf(c.id);
    if (row >= 0) {
        rows_[row] = c;
        // Move up if it was updated more recently than the rows above it.
        int target = row;
        while (target > 0 && before(c, rows_[target - 1])) --target;
        if (target != row) {
            beginMoveRows({}, row, row, {}, target);
            rows_.move(row, target);
            endMoveRows();
            row = target;
        }
        emit dataChanged(index(row), index(row));
        return;
    }
    int at = 0;
    while (at < rows_.size() && before(rows_[at], c)) ++at;
    beginInsertRows({}, at, at);
    rows_.insert(at, c);
    endInsertRows();
    emit countChanged();
}

void ConversationListModel::remove(qint64 id) {
    const int row = rowOf(id);
    if (row < 0) return;
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
    emit countChanged();
}

void ConversationListModel::setActivity(qint64 id, const QString& activity, int queuePosition) {
    const QPair<QString, int> value{activity, queuePosition};
    if (activity_.value(id) == value) return;
    if (activity.isEmpty()) activity_.remove(id);
    else activity_.insert(id, value);
    const int row = rowOf(id);
    if (row >= 0) emit dataChanged(index(row), index(row), {ActivityRole, QueuePositionRole});
}

int ConversationListModel::rowOf(qint64 id) const {
    for (int i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id) return i;
    return -1;
}

qint64 ConversationListModel::idAt(int row) const {
    return row >= 0 && row < rows_.size() ? rows_[row].id : 0;
}

} // namespace weir::desktop
