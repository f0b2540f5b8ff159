#include "markdown/DocumentStyle.h"

#include <QFont>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextList>
#include <QTextTable>

namespace weir::desktop {
namespace {

void styleTable(QTextTable* table, const DocumentStyle& style) {
    QTextTableFormat format = table->format();
    // Qt's default draws each cell's own border with spacing between them:
    // the "double grid". Qt Quick's TextEdit draws a box around every cell
    // whatever the collapse mode (collapsed, two neighbours' boxes sit side by
    // side: 2 px lines), so the cells overlap by one border width instead:
    // neighbouring boxes share their edge, one 1 px grid.
    format.setBorderCollapse(false);
    format.setBorder(1);
    format.setBorderBrush(style.border);
    format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    format.setCellSpacing(-format.border());
    format.setCellPadding(style.cellPadding);
    format.setTopMargin(style.blockSpacing);  // a block above does not push a table down
    format.setBottomMargin(style.blockSpacing);
    if (format.headerRowCount() < 1) format.setHeaderRowCount(1);
    table->setFormat(format);

    for (int column = 0; column < table->columns(); ++column) {
        QTextTableCell cell = table->cellAt(0, column);
        // Qt Quick paints a cell's background behind its text only, not the
        // whole cell: a transparent colour leaves the header to its bold text.
        if (style.headerBackground.alpha() > 0) {
            QTextTableCellFormat cellFormat = cell.format().toTableCellFormat();
            cellFormat.setBackground(style.headerBackground);
            cell.setFormat(cellFormat);
        }
        QTextCursor cursor = cell.firstCursorPosition();
        cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor::KeepAnchor);
        QTextCharFormat bold;
        bold.setFontWeight(QFont::DemiBold);
        cursor.mergeCharFormat(bold);
    }
}

// Room below each top-level block; list items sit closer, with the room
// after the list's last item; table cells keep their padding only.
void spaceBlocks(QTextDocument* document, const DocumentStyle& style) {
    QTextCursor cursor(document);
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        cursor.setPosition(block.position());
        if (cursor.currentTable()) continue;
        QTextBlockFormat format = block.blockFormat();
        qreal below = style.blockSpacing;
        if (QTextList* list = block.textList()) {
            const bool lastItem = list->itemNumber(block) == list->count() - 1;
            const QTextBlock next = block.next();
            const bool nestedNext = next.isValid() && next.textList() && next.textList() != list;
            below = lastItem && !nestedNext ? style.blockSpacing : style.blockSpacing / 4;
        }
        if (!block.next().isValid()) below = 0;  // nothing after the last block
        if (format.headingLevel() > 0 && block.previous().isValid()) format.setTopMargin(style.blockSpacing / 2);
        format.setBottomMargin(below);
        cursor.setBlockFormat(format);
    }
}

// Code spans and indented code blocks: the importer marks them fixed-pitch
// but names the platform's fixed font, which may not resolve to one.
void styleCode(QTextDocument* document, const DocumentStyle& style) {
    if (style.monospaceFamily.isEmpty()) return;
    struct Range { int start, end; bool inBlock; };
    QList<Range> ranges;
    QList<QTextBlock> codeBlocks;
    // Collected first: changing a format splits and merges fragments.
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        const bool codeBlock = block.blockFormat().hasProperty(QTextFormat::BlockCodeFence) ||
                               block.blockFormat().hasProperty(QTextFormat::BlockCodeLanguage);
        if (codeBlock) codeBlocks.append(block);
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (fragment.isValid() && (codeBlock || fragment.charFormat().fontFixedPitch()))
                ranges.append({fragment.position(), fragment.position() + fragment.length(), codeBlock});
        }
    }
    QTextCursor cursor(document);
    for (const Range& range : ranges) {
        QTextCharFormat code;
        code.setFontFamilies(QStringList{style.monospaceFamily});
        code.setFontFixedPitch(true);
        if (!range.inBlock) code.setBackground(style.codeBackground);
        cursor.setPosition(range.start);
        cursor.setPosition(range.end, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(code);
    }
    for (const QTextBlock& block : codeBlocks) {
        QTextBlockFormat format = block.blockFormat();
        format.setBackground(style.codeBackground);
        cursor.setPosition(block.position());
        cursor.setBlockFormat(format);
    }
}

} // namespace

void applyDocumentStyle(QTextDocument* document, const DocumentStyle& style) {
    if (!document) return;
    QTextCursor edit(document);
    edit.beginEditBlock();  // one layout pass for all the changes
    for (QTextFrame* frame : document->rootFrame()->childFrames())
        if (auto* table = qobject_cast<QTextTable*>(frame)) styleTable(table, style);
    spaceBlocks(document, style);
    styleCode(document, style);
    edit.endEditBlock();
}

QString styledHtml(const QString& markdown, const DocumentStyle& style) {
    QTextDocument document;
    document.setUndoRedoEnabled(false);
    if (style.fontPixelSize > 0) {
        QFont body = document.defaultFont();
        body.setPixelSize(qRound(style.fontPixelSize));
        document.setDefaultFont(body);
    }
    document.setMarkdown(markdown);
    applyDocumentStyle(&document, style);
    return document.toHtml();
}

} // namespace weir::desktop
