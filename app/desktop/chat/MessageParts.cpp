#include "chat/MessageParts.h"

#include <QStringView>
#include <optional>

namespace weir::desktop {
namespace {

// A fence line: up to 3 spaces, then 3+ backticks or tildes (CommonMark).
struct Fence {
    QChar ch;
    int length = 0;
    QString info;
};

bool parseFence(QStringView line, Fence* out) {
    int i = 0;
    while (i < line.size() && i < 3 && line[i] == u' ') ++i;
    if (i >= line.size() || (line[i] != u'`' && line[i] != u'~')) return false;
    const QChar ch = line[i];
    int n = 0;
    while (i + n < line.size() && line[i + n] == ch) ++n;
    if (n < 3) return false;
    const QStringView info = line.mid(i + n).trimmed();
    if (ch == u'`' && info.contains(u'`')) return false;  // not a fence per CommonMark
    out->ch = ch;
    out->length = n;
    out->info = info.toString();
    return true;
}

bool closesFence(QStringView line, const Fence& open) {
    Fence f;
    return parseFence(line, &f) && f.ch == open.ch && f.length >= open.length && f.info.isEmpty();
}

// A block quote line: up to 3 spaces, then '>'. Gives the line without the
// marker and one following space; nothing for other lines.
std::optional<QString> quotedLine(QStringView line) {
    int i = 0;
    while (i < line.size() && i < 3 && line[i] == u' ') ++i;
    if (i >= line.size() || line[i] != u'>') return std::nullopt;
    ++i;
    if (i < line.size() && line[i] == u' ') ++i;
    return line.mid(i).toString();
}

void appendText(QList<MessagePart>& parts, QString text) {
    // Whitespace-only text between blocks would draw as an empty paragraph.
    if (text.trimmed().isEmpty()) return;
    while (text.endsWith(u'\n')) text.chop(1);
    while (text.startsWith(u'\n')) text.remove(0, 1);
    parts.append({MessagePart::Text, text, {}, true});
}

} // namespace

QList<MessagePart> splitMessage(const QString& content) {
    QList<MessagePart> parts;
    QString text;
    int pos = 0;
    const int n = content.size();
    while (pos < n) {
        int end = content.indexOf(u'\n', pos);
        const bool lastLine = end < 0;
        if (lastLine) end = n;
        const QStringView line = QStringView(content).mid(pos, end - pos);
        Fence fence;
        if (line.trimmed() == u"<think>") {
            appendText(parts, std::exchange(text, {}));
            const int close = content.indexOf(QStringLiteral("</think>"), end);
            const int bodyStart = lastLine ? n : end + 1;
            MessagePart p{MessagePart::Thinking, {}, {}, close >= 0};
            p.text = content.mid(bodyStart, (close >= 0 ? close : n) - bodyStart).trimmed();
            parts.append(p);
            if (close < 0) return parts;
            pos = close + int(qstrlen("</think>"));
            continue;
        }
        if (parseFence(line, &fence)) {
            appendText(parts, std::exchange(text, {}));
            MessagePart code{MessagePart::Code, {}, fence.info.section(u' ', 0, 0).toLower(), false};
            pos = lastLine ? n : end + 1;
            while (pos < n) {
                int e = content.indexOf(u'\n', pos);
                const bool last = e < 0;
                if (last) e = n;
                const QStringView codeLine = QStringView(content).mid(pos, e - pos);
                if (closesFence(codeLine, fence)) {
                    code.closed = true;
                    pos = last ? n : e + 1;
                    break;
                }
                code.text += codeLine;
                if (!last) code.text += u'\n';
                pos = last ? n : e + 1;
            }
            if (code.text.endsWith(u'\n')) code.text.chop(1);
            parts.append(code);
            continue;
        }
        if (quotedLine(line)) {
            appendText(parts, std::exchange(text, {}));
            MessagePart quote{MessagePart::Quote, {}, {}, true};
            bool first = true;
            while (pos < n) {
                int e = content.indexOf(u'\n', pos);
                const bool last = e < 0;
                if (last) e = n;
                const std::optional<QString> inner = quotedLine(QStringView(content).mid(pos, e - pos));
                if (!inner) break;  // the quote ends at the first line without '>'
                if (!std::exchange(first, false)) quote.text += u'\n';
                quote.text += *inner;
                pos = last ? n : e + 1;
            }
            parts.append(quote);
            continue;
        }
        text += line;
        if (!lastLine) text += u'\n';
        pos = lastLine ? n : end + 1;
    }
    appendText(parts, text);
    return parts;
}

} // namespace weir::desktop
