#include "markdown/LineBreaks.h"

#include <QRegularExpression>
#include <QStringList>

namespace weir::desktop {
namespace {

bool isBlank(const QString& line) { return line.trimmed().isEmpty(); }

// Lines that are blocks of their own, which a break after the previous line
// (or after this one) must not glue to their neighbour.
bool startsBlock(const QString& line) {
    static const QRegularExpression block(QStringLiteral(
        R"(^ {0,3}(#{1,6}(\s|$)|>|[-*+]\s|\d{1,9}[.)]\s|\||(-{3,}|\*{3,}|_{3,})\s*$|```|~~~))"));
    return block.match(line).hasMatch();
}

bool isTableRow(const QString& line) { return line.trimmed().startsWith(u'|') || line.trimmed().endsWith(u'|'); }
bool isIndentedCode(const QString& line) { return line.startsWith(QStringLiteral("    ")) || line.startsWith(u'\t'); }
bool endsInBreak(const QString& line) { return line.endsWith(u'\\') || line.endsWith(QStringLiteral("  ")); }

} // namespace

QString keepLineBreaks(const QString& markdown) {
    QStringList lines = markdown.split(u'\n');
    bool inFence = false;
    for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
        QString& line = lines[i];
        const QString& next = lines[i + 1];
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(QStringLiteral("```")) || trimmed.startsWith(QStringLiteral("~~~"))) inFence = !inFence;
        if (inFence) continue;
        if (isBlank(line) || isBlank(next) || endsInBreak(line)) continue;
        if (isTableRow(line) || isIndentedCode(line) || trimmed.startsWith(u'#')) continue;
        // A setext underline or a table's delimiter row under this line
        // belongs to it; another block starting on the next line ends it anyway.
        if (startsBlock(next) || next.trimmed().startsWith(u'=') || isTableRow(next)) continue;
        line += u'\\';
    }
    return lines.join(u'\n');
}

} // namespace weir::desktop
