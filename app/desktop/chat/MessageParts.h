#pragma once
// A message is a list of typed parts, each drawn by its own QML component:
// Markdown text, fenced code (with its language), thinking (<think>...) and
// block quotes (consecutive lines starting with '>', the marker removed; the
// view draws the quote bar Qt's rich text cannot).
// splitMessage() works on partial text while a reply streams: an unclosed
// fence or thinking block is a part with closed = false.
#include <QList>
#include <QString>

namespace weir::desktop {

struct MessagePart {
    enum Kind { Text, Code, Thinking, Quote };
    Kind kind = Text;
    QString text;        // for Code: the code without the fences; for Quote: the
                         // quoted Markdown without its '>' markers
    QString language;    // for Code: the info string's first word, lower case
    bool closed = true;
    bool operator==(const MessagePart&) const = default;
};

QList<MessagePart> splitMessage(const QString& content);

} // namespace weir::desktop
