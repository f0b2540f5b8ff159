#include "chat/MessagePartsModel.h"

namespace weir::desktop {

int MessagePartsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(parts_.size());
}

QVariant MessagePartsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= parts_.size()) return {};
    const MessagePart& p = parts_[index.row()];
    switch (role) {
    case KindRole:
        return p.kind == MessagePart::Code       ? QStringLiteral("code")
               : p.kind == MessagePart::Thinking ? QStringLiteral("thinking")
               : p.kind == MessagePart::Quote    ? QStringLiteral("quote")
                                                 : QStringLiteral("text");
    case TextRole: return p.text;
    case LanguageRole: return p.language;
    case ClosedRole: return p.closed;
    }
    return {};
}

QHash<int, QByteArray> MessagePartsModel::roleNames() const {
    return {{KindRole, "kind"}, {TextRole, "text"}, {LanguageRole, "language"}, {ClosedRole, "closed"}};
}

void MessagePartsModel::setContent(const QString& content) {
    const QList<MessagePart> next = splitMessage(content);
    const int common = int(std::min(parts_.size(), next.size()));
    // A row whose kind changed is replaced (its delegate is a different component).
    int firstReplaced = common;
    for (int i = 0; i < common; ++i) {
        if (parts_[i].kind != next[i].kind) {
            firstReplaced = i;
            break;
        }
    }
    if (firstReplaced < parts_.size()) {
        beginRemoveRows({}, firstReplaced, int(parts_.size()) - 1);
        parts_.resize(firstReplaced);
        endRemoveRows();
    }
    for (int i = 0; i < parts_.size(); ++i) {
        if (parts_[i] == next[i]) continue;
        parts_[i] = next[i];
        emit dataChanged(index(i), index(i));
    }
    if (next.size() > parts_.size()) {
        beginInsertRows({}, int(parts_.size()), int(next.size()) - 1);
        for (qsizetype i = parts_.size(); i < next.size(); ++i) parts_.append(next[i]);
        endInsertRows();
    }
}

} // namespace weir::desktop
