#pragma once
// The parts of one message as a list model, updated in place while a reply
// streams: only rows that changed are signalled, so QML delegates for earlier
// parts stay put (no flicker, no re-layout of finished code blocks).
#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "chat/MessageParts.h"

namespace weir::desktop {

class MessagePartsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("MessagePartsModel comes from MessageListModel")
public:
    enum Roles {
        KindRole = Qt::UserRole + 1,  // "text", "code" or "thinking"
        TextRole,                     // Markdown text, code, or thinking text
        LanguageRole,                 // code: language from the fence ("" if none)
        ClosedRole,                   // false while a fence/thinking block is still open
    };
    Q_ENUM(Roles)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Re-splits `content` and applies the difference to the rows.
    void setContent(const QString& content);
    const QList<MessagePart>& parts() const { return parts_; }

private:
    QList<MessagePart> parts_;
};

} // namespace weir::desktop
