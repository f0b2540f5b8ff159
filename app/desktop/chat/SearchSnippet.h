#pragma once
// The line of a search result under a conversation's title in the sidebar:
// the text around the first match of the search in a message, on one line.
#include <QString>

namespace weir::desktop {

struct SearchSnippet {
    QString text;       // whitespace runs collapsed to one space, "…" where cut
    int matchStart = -1;  // where the match is in `text`, -1 if it is not
    int matchLength = 0;
};

// Up to `before` characters before the first case-insensitive match of
// `needle` in `content` and up to `after` after it, cut at word boundaries
// where one is near. No match: the start of the content.
SearchSnippet searchSnippet(const QString& content, const QString& needle, int before = 32, int after = 90);

} // namespace weir::desktop
