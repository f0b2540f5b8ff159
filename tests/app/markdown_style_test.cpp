// How a reply's Markdown is laid out: single line breaks kept, tables with one
// collapsed border, padding and a header row, room between blocks, and code
// spans in a font that really is fixed-pitch.
#include <QFontInfo>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include "markdown/DocumentStyle.h"
#include "markdown/LineBreaks.h"
#include "theme/MonospaceFont.h"

using namespace weir::desktop;

namespace {
QTextTable* firstTable(QTextDocument& document) {
    for (QTextFrame* frame : document.rootFrame()->childFrames())
        if (auto* table = qobject_cast<QTextTable*>(frame)) return table;
    return nullptr;
}
}  // namespace

class MarkdownStyleTest : public QObject {
    Q_OBJECT
private slots:
    void singleLineBreaksAreKept() {
        QTextDocument plain, kept;
        plain.setMarkdown(QStringLiteral("Roses are red\nviolets are blue"));
        kept.setMarkdown(keepLineBreaks(QStringLiteral("Roses are red\nviolets are blue")));
        QCOMPARE(plain.toPlainText(), QStringLiteral("Roses are red violets are blue"));  // what Markdown does
        QCOMPARE(kept.toPlainText(), QStringLiteral("Roses are red\nviolets are blue"));
    }

    void breaksLeaveBlocksAlone() {
        const QString table = QStringLiteral("| a | b |\n|---|---|\n| 1 | 2 |");
        QCOMPARE(keepLineBreaks(table), table);
        const QString list = QStringLiteral("- one\n- two\n\n1. x\n2. y");
        QCOMPARE(keepLineBreaks(list), list);
        const QString fenced = QStringLiteral("```\nint a;\nint b;\n```");
        QCOMPARE(keepLineBreaks(fenced), fenced);
        const QString setext = QStringLiteral("Title\n=====\n\nText");
        QCOMPARE(keepLineBreaks(setext), setext);
        QCOMPARE(keepLineBreaks(QStringLiteral("# Heading\nline")), QStringLiteral("# Heading\nline"));
        QCOMPARE(keepLineBreaks(QStringLiteral("para\n\nnext")), QStringLiteral("para\n\nnext"));
        QCOMPARE(keepLineBreaks(QStringLiteral("- item\n  more")), QStringLiteral("- item\\\n  more"));
    }

    void tablesHaveOneBorderPaddingAndAHeader() {
        QTextDocument document;
        document.setMarkdown(QStringLiteral("Before\n\n| Name | Size |\n|------|-----:|\n| a | 1 |\n| b | 2 |\n\nAfter"));
        DocumentStyle style;
        style.headerBackground = QColor(0x11, 0x22, 0x33);
        style.border = QColor(0x44, 0x55, 0x66);
        QTextTable* table = firstTable(document);
        QVERIFY(table);
        QVERIFY(!table->format().borderCollapse());  // Qt's default: a double grid
        applyDocumentStyle(&document, style);
        table = firstTable(document);
        const QTextTableFormat format = table->format();
        QVERIFY(!format.borderCollapse());  // overlapping cells instead: one grid in Qt Quick too
        QCOMPARE(format.border(), 1.0);
        QCOMPARE(format.cellSpacing(), -format.border());
        QCOMPARE(format.cellPadding(), style.cellPadding);
        QCOMPARE(format.borderBrush().color(), style.border);
        QCOMPARE(table->rows(), 3);
        for (int column = 0; column < 2; ++column) {
            const QTextTableCell header = table->cellAt(0, column);
            QCOMPARE(header.format().background().color(), style.headerBackground);
            QCOMPARE(header.firstCursorPosition().charFormat().fontWeight(), int(QFont::DemiBold));
            QVERIFY(table->cellAt(1, column).format().background().style() == Qt::NoBrush);
        }
    }

    void blocksHaveRoomBetweenThem() {
        QTextDocument document;
        document.setMarkdown(QStringLiteral("First paragraph.\n\n- one\n- two\n\nLast paragraph."));
        DocumentStyle style;
        style.blockSpacing = 12;
        applyDocumentStyle(&document, style);
        QList<qreal> below;
        for (QTextBlock b = document.begin(); b.isValid(); b = b.next()) below << b.blockFormat().bottomMargin();
        QCOMPARE(below, (QList<qreal>{12, 3, 12, 0}));  // list items closer; nothing after the last block
    }

    void codeSpansAreFixedPitch() {
        QTextDocument document;
        document.setMarkdown(QStringLiteral("Call `make_pair(a, b)` here."));
        DocumentStyle style;
        style.monospaceFamily = monospaceFamily();
        style.codeBackground = QColor(0x12, 0x34, 0x56);
        applyDocumentStyle(&document, style);
        bool found = false;
        for (auto it = document.begin().begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            const QTextCharFormat format = fragment.charFormat();
            const bool code = fragment.text() == QStringLiteral("make_pair(a, b)");
            QCOMPARE(QFontInfo(format.font()).fixedPitch(), code);
            if (code) {
                found = true;
                QCOMPARE(format.background().color(), style.codeBackground);
            }
        }
        QVERIFY(found);
    }

    // What the TextEdit is given: the styles survive the trip through HTML.
    void styledHtmlKeepsTheStyle() {
        DocumentStyle style;
        style.monospaceFamily = monospaceFamily();
        style.blockSpacing = 12;
        style.headerBackground = QColor(0x11, 0x22, 0x33);
        QTextDocument shown;
        shown.setHtml(styledHtml(QStringLiteral("Intro `code`\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\nEnd"), style));
        QTextTable* table = firstTable(shown);
        QVERIFY(table);
        QCOMPARE(table->format().cellSpacing(), -table->format().border());
        QCOMPARE(table->format().cellPadding(), style.cellPadding);
        QCOMPARE(table->cellAt(0, 0).format().background().color(), style.headerBackground);
        QCOMPARE(shown.begin().blockFormat().bottomMargin(), 12.0);
        bool code = false;
        for (auto it = shown.begin().begin(); !it.atEnd(); ++it)
            if (it.fragment().text() == QStringLiteral("code")) code = QFontInfo(it.fragment().charFormat().font()).fixedPitch();
        QVERIFY(code);
    }

    // Issue 26 (zoom): the HTML names the body's font size, so the TextEdit's
    // own size (Theme.baseSize, zoom included) never reached reply text.
    void bodyTextHasTheStylesSize() {
        for (qreal px : {14.0, 21.0}) {
            DocumentStyle style;
            style.fontPixelSize = px;
            QTextDocument shown;
            QFont small = shown.defaultFont();
            small.setPixelSize(9);  // what the TextEdit's document starts with does not matter
            shown.setDefaultFont(small);
            shown.setHtml(styledHtml(QStringLiteral("Plain words and **bold** ones."), style));
            int fragments = 0;
            for (auto it = shown.begin().begin(); !it.atEnd(); ++it, ++fragments)
                QCOMPARE(QFontInfo(it.fragment().charFormat().font()).pixelSize(), int(px));
            QVERIFY(fragments >= 2);
        }
    }

    void theMonospaceFamilyIsFixedPitch() {
        const QString family = monospaceFamily();
        QVERIFY(!family.isEmpty());
        // setFamily() is what QML's font.family does.
        QFont font;
        font.setFamily(family);
        QVERIFY2(QFontInfo(font).fixedPitch(), qPrintable(family));
        // The old comma-joined name does not: setFamily takes it as one name.
        QFont joined;
        joined.setFamily(QStringLiteral("DejaVu Sans Mono, Noto Sans Mono, Liberation Mono, monospace"));
        QVERIFY(!QFontInfo(joined).fixedPitch());
    }
};

QTEST_MAIN(MarkdownStyleTest)
#include "markdown_style_test.moc"
