#pragma once
// Chat replies mean a single newline as a line break, but Markdown joins such
// lines into one paragraph. keepLineBreaks() marks each of those newlines as a
// hard break (a trailing backslash, CommonMark's explicit form), leaving alone
// what a break would spoil: blank lines, the line before a blank line or
// block, table rows, headings, indented code and lines already ending in one.
#include <QString>

namespace weir::desktop {

QString keepLineBreaks(const QString& markdown);

} // namespace weir::desktop
