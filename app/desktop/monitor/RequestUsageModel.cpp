#include "monitor/RequestUsageModel.h"

#include "engine_host/ClientTags.h"

namespace weir::desktop {

int RequestUsageModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant RequestUsageModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= rows_.size()) return {};
    const RequestStatus& r = rows_[index.row()];
    switch (role) {
    case RequestIdRole: return quint64(r.id);
    case ConversationIdRole: return conversationOf(r.tag);
    case ApiRequestRole: return apiRequestOf(r.tag);
    case StateRole: return QString::fromUtf8(requestStateName(r.state));
    case FullTokensRole: return qint64(r.fullTokens);
    case WindowTokensRole: return qint64(r.windowTokens);
    case PrefixHitTokensRole: return qint64(r.prefixHitTokens);
    case PromptTokensRole: return r.promptTokens;
    case GeneratedTokensRole: return r.generatedTokens;
    case FullShareRole: return fullCapacity_ > 0 ? double(r.fullTokens) / double(fullCapacity_) : 0.0;
    case WindowShareRole: return windowCapacity_ > 0 ? double(r.windowTokens) / double(windowCapacity_) : 0.0;
    }
    return {};
}

QHash<int, QByteArray> RequestUsageModel::roleNames() const {
    return {{RequestIdRole, "requestId"},      {ConversationIdRole, "conversationId"},
            {ApiRequestRole, "apiRequest"},
            {StateRole, "state"},             {FullTokensRole, "fullTokens"},
            {WindowTokensRole, "windowTokens"}, {PrefixHitTokensRole, "prefixHitTokens"},
            {PromptTokensRole, "promptTokens"}, {GeneratedTokensRole, "generatedTokens"},
            {FullShareRole, "fullShare"},     {WindowShareRole, "windowShare"}};
}

void RequestUsageModel::update(const CacheStatus& status) {
    fullCapacity_ = status.full.capacityTokens;
    windowCapacity_ = status.window.capacityTokens;
    const auto& next = status.requests;
    // Same requests in the same order (the common case at 4 Hz): update in place.
    bool sameIds = next.size() == rows_.size();
    for (size_t i = 0; sameIds && i < next.size(); ++i) sameIds = next[i].id == rows_[i].id;
    if (sameIds) {
        rows_ = next;
        if (!rows_.empty()) emit dataChanged(index(0), index(int(rows_.size()) - 1));
        return;
    }
    beginResetModel();
    rows_ = next;
    endResetModel();
    emit countChanged();
}

} // namespace weir::desktop
