#pragma once
// The branch of a conversation's message tree that is on screen (and sent to
// the model): from the active first turn, the active version at each step.
// Pure functions over records, so the rules are tested without a database.
#include <QList>

#include "storage/Records.h"

namespace weir::desktop {

// `all` holds every message of one conversation in position order. Returns the
// visible branch, each record with versionIndex/versionCount filled. Where no
// version of a turn is marked active (an import that said nothing), the newest
// is shown; where several are, the newest of those.
QList<MessageRecord> visibleBranch(const QList<MessageRecord>& all);

// The versions of the turn `messageId` belongs to (its siblings and itself),
// oldest first. Empty when the id is not in `all`.
QList<MessageRecord> versionsOf(const QList<MessageRecord>& all, qint64 messageId);

} // namespace weir::desktop
