#pragma once
// What Qt's Markdown import leaves plain, styled after it: tables get one
// 1 px grid, cell padding and a bold header row (shaded when
// headerBackground is not transparent); paragraphs,
// headings and lists get room between them; inline and indented code get the
// app's fixed-pitch family and a soft background.
#include <QColor>
#include <QString>

class QTextDocument;

namespace weir::desktop {

struct DocumentStyle {
    QColor border{0xe2, 0xe5, 0xe9};
    QColor headerBackground{0xf6, 0xf8, 0xfa};
    QColor codeBackground{0xef, 0xf1, 0xf3};
    QString monospaceFamily;    // empty: leave code fonts as imported
    qreal blockSpacing = 10;    // px below a paragraph, heading, list or table
    qreal cellPadding = 6;      // px inside each table cell
    // px of the body text (the TextEdit's font, zoom included); 0 leaves the
    // application's. The HTML carries the body's size, so a TextEdit's own
    // font size would not apply to it.
    qreal fontPixelSize = 0;
};

// Applies `style` to a document filled by QTextDocument::setMarkdown (or a
// TextEdit in Markdown mode). Safe to run again on the same document.
void applyDocumentStyle(QTextDocument* document, const DocumentStyle& style);

// Markdown in, styled rich text (HTML) out: what a TextEdit shows. A TextEdit
// draws a document's formats as they were when its text was set, so the
// styling happens before, on a document of our own.
QString styledHtml(const QString& markdown, const DocumentStyle& style);

} // namespace weir::desktop
