#pragma once
// What the app's ClientTags on engine requests mean: a conversation's
// requests carry its id; the endpoint's carry the server's request key (the
// kinds: app/common/client_tag_kinds.h).
#include <QtGlobal>

#include "app/common/client_tag_kinds.h"
#include "weir/types/generate.h"

namespace weir::desktop {

using common::kConversationTagKind;

inline ClientTag conversationTag(qint64 conversationId) {
    return ClientTag{kConversationTagKind, quint64(conversationId)};
}
// The conversation a request belongs to, or 0.
inline qint64 conversationOf(const ClientTag& tag) {
    return tag.kind == kConversationTagKind ? qint64(tag.id) : 0;
}
// The endpoint's request key, or 0 for requests of the app's own.
inline quint64 apiRequestOf(const ClientTag& tag) {
    return tag.kind == common::kApiRequestTagKind ? quint64(tag.id) : 0;
}

} // namespace weir::desktop
