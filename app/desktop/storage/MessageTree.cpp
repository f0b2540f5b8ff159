#include "storage/MessageTree.h"

#include <QHash>

namespace weir::desktop {

QList<MessageRecord> visibleBranch(const QList<MessageRecord>& all) {
    QHash<qint64, QList<int>> children;  // parent id (0: first turn) -> indexes into `all`, oldest first
    for (int i = 0; i < all.size(); ++i) children[all[i].parentId].append(i);
    QList<MessageRecord> out;
    qint64 parent = 0;
    // Each step moves to a child, which is written after its parent: the walk ends.
    for (int guard = 0; guard <= all.size(); ++guard) {
        const auto it = children.constFind(parent);
        if (it == children.cend() || it->isEmpty()) break;
        const QList<int>& kids = *it;
        int chosen = kids.size() - 1;
        for (int k = int(kids.size()) - 1; k >= 0; --k) {
            if (all[kids[k]].active) {
                chosen = k;
                break;
            }
        }
        MessageRecord m = all[kids[chosen]];
        m.versionIndex = chosen;
        m.versionCount = int(kids.size());
        out.append(m);
        parent = m.id;
    }
    return out;
}

QList<MessageRecord> versionsOf(const QList<MessageRecord>& all, qint64 messageId) {
    QList<MessageRecord> out;
    qint64 parent = -1;
    for (const MessageRecord& m : all)
        if (m.id == messageId) parent = m.parentId;
    if (parent < 0) return out;
    for (const MessageRecord& m : all)
        if (m.parentId == parent) out.append(m);
    return out;
}

} // namespace weir::desktop
