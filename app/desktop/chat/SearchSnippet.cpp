#include "chat/SearchSnippet.h"

#include <QRegularExpression>

namespace weir::desktop {

SearchSnippet searchSnippet(const QString& content, const QString& needle, int before, int after) {
    static const QRegularExpression spaces(QStringLiteral("\\s+"));
    const QString flat = QString(content).replace(spaces, QStringLiteral(" ")).trimmed();
    const QString n = QString(needle).replace(spaces, QStringLiteral(" ")).trimmed();
    SearchSnippet out;
    const int at = n.isEmpty() ? -1 : int(flat.indexOf(n, 0, Qt::CaseInsensitive));
    int from = 0, to = int(flat.size());
    if (at >= 0) {
        from = std::max(0, at - before);
        // Start at a word: move forward to the next space when cutting mid-word.
        if (from > 0) {
            const int space = int(flat.indexOf(u' ', from));
            if (space >= 0 && space < at) from = space + 1;
        }
        to = std::min(int(flat.size()), at + int(n.size()) + after);
    } else {
        to = std::min(int(flat.size()), before + after);
    }
    if (to < flat.size()) {
        const int space = int(flat.lastIndexOf(u' ', to));
        if (space > (at >= 0 ? at + n.size() : from)) to = space;
    }
    const QString head = from > 0 ? QStringLiteral("\u2026") : QString();
    out.text = head + flat.mid(from, to - from) + (to < flat.size() ? QStringLiteral("\u2026") : QString());
    if (at >= 0) {
        out.matchStart = int(head.size()) + at - from;
        out.matchLength = int(n.size());
    }
    return out;
}

} // namespace weir::desktop
