#pragma once
// Per-request KV usage from the latest engine status: which conversation (or
// API client) holds how many tokens in each pool, and how far it got.
#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <vector>

#include "weir/engine.h"

namespace weir::desktop {

class RequestUsageModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("RequestUsageModel comes from PoolMonitor")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles {
        RequestIdRole = Qt::UserRole + 1,  // the engine's request id
        ConversationIdRole,             // 0 unless the request is a conversation's
        ApiRequestRole,                 // the endpoint's request key, 0 unless an API request
        StateRole,                      // "waiting", "prefill", "decode"
        FullTokensRole,
        WindowTokensRole,
        PrefixHitTokensRole,
        PromptTokensRole,
        GeneratedTokensRole,
        FullShareRole,                  // fraction of the full pool's capacity
        WindowShareRole,
    };
    Q_ENUM(Roles)

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int count() const { return int(rows_.size()); }

    void update(const CacheStatus& status);

signals:
    void countChanged();

private:
    std::vector<RequestStatus> rows_;
    int64_t fullCapacity_ = 0, windowCapacity_ = 0;
};

} // namespace weir::desktop
