#include "settings/BaseModelGuess.h"

#include <QRegularExpression>

namespace weir::desktop {

bool looksLikeBaseModel(const QString& name, const QString& fileName, bool hasOwnChatTemplate) {
    if (hasOwnChatTemplate) return false;
    // Not static: the Model page's worker thread calls this too, and a
    // QRegularExpression is reentrant, not thread-safe.
    const QRegularExpression tuned(QStringLiteral("(^|[^a-z])(it|instruct|chat|sft|dpo)([^a-z]|$)"),
                                          QRegularExpression::CaseInsensitiveOption);
    return !tuned.match(name + u' ' + fileName).hasMatch();
}

} // namespace weir::desktop
