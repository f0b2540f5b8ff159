#include "chat/ConversationTitle.h"

#include <QRegularExpression>
#include <QStringList>

namespace weir::desktop {
namespace {

constexpr int kMaxLength = 48;

// Markdown's inline syntax, replaced by the text it marks up.
QString plainInline(QString line) {
    static const QRegularExpression image(QStringLiteral(R"(!\[([^\]]*)\]\([^)]*\))"));
    static const QRegularExpression link(QStringLiteral(R"(\[([^\]]+)\]\([^)]*\))"));
    static const QRegularExpression stars(QStringLiteral(R"((\*{1,3}|~~)(\S(?:.*?\S)?)\1)"));
    // Underscores inside a word (snake_case) are not emphasis.
    static const QRegularExpression underscores(QStringLiteral(R"((?<!\w)(_{1,3})(\S(?:.*?\S)?)\1(?!\w))"));
    static const QRegularExpression code(QStringLiteral("`+([^`]*)`+"));
    static const QRegularExpression tags(QStringLiteral("<[^>]+>"));
    line.replace(image, QStringLiteral("\\1"));
    line.replace(link, QStringLiteral("\\1"));
    line.replace(code, QStringLiteral("\\1"));
    for (int i = 0; i < 3; ++i) {  // nested: ***a** b*
        line.replace(stars, QStringLiteral("\\2"));
        line.replace(underscores, QStringLiteral("\\2"));
    }
    line.replace(tags, QString());
    return line;
}

// Block markers at the start of a line: headings, quotes, bullets, numbers, task boxes.
QString withoutBlockMarkers(QString line) {
    static const QRegularExpression marker(QStringLiteral(R"(^\s*(#{1,6}\s+|>\s*|[-*+]\s+(\[[ xX]\]\s+)?|\d{1,9}[.)]\s+))"));
    QString previous;
    while (previous != line) {
        previous = line;
        line.remove(marker);
    }
    return line;
}

} // namespace

QString titleFromMessage(const QString& text) {
    QString line, firstCode;
    bool inFence = false;
    for (const QString& raw : text.split(u'\n')) {
        const QString trimmed = raw.trimmed();
        if (trimmed.startsWith(QStringLiteral("```")) || trimmed.startsWith(QStringLiteral("~~~"))) {
            inFence = !inFence;
            continue;
        }
        if (inFence) {
            if (firstCode.isEmpty()) firstCode = trimmed.simplified();
            continue;
        }
        // Rules and table delimiter rows say nothing.
        static const QRegularExpression rule(QStringLiteral(R"(^[\s|:\-=*_]*$)"));
        if (rule.match(trimmed).hasMatch()) continue;
        QString candidate = plainInline(withoutBlockMarkers(trimmed));
        candidate.replace(u'|', u' ');
        candidate = candidate.simplified();
        if (candidate.isEmpty()) continue;
        line = candidate;
        break;
    }
    if (line.isEmpty()) line = !firstCode.isEmpty() ? firstCode : text.simplified();  // all code: its first line
    if (line.size() <= kMaxLength) return line;
    const int cut = int(line.lastIndexOf(u' ', kMaxLength));
    return line.left(cut > 20 ? cut : kMaxLength) + QChar(0x2026);
}

} // namespace weir::desktop
