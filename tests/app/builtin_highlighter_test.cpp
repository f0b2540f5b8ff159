// The built-in highlighter: for each language, the characters of keywords,
// strings, comments, numbers, ... get that category's format; constructs that
// span lines (block comments, triple-quoted strings, fences) carry over;
// comment markers inside strings are not comments; unknown languages stay plain.
#include <QGuiApplication>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

#include "highlight/BuiltinHighlighter.h"
#include "highlight/SyntaxLanguages.h"

using namespace weir::desktop;
using C = BuiltinHighlighter::Category;

namespace {

// The format the highlighter gave the character at (line, column); an empty
// format when none.
QTextCharFormat formatAt(QTextDocument& doc, int line, int column) {
    const QTextBlock block = doc.findBlockByNumber(line);
    for (const QTextLayout::FormatRange& r : block.layout()->formats())
        if (column >= r.start && column < r.start + r.length) return r.format;
    return {};
}

struct Doc {
    Doc(const char* language, const char* text) : highlighter(&doc) {
        doc.setPlainText(QString::fromUtf8(text));
        highlighter.setLanguage(QString::fromLatin1(language));
    }
    QTextDocument doc;
    BuiltinHighlighter highlighter;
    bool is(int line, int column, C category) { return formatAt(doc, line, column) == highlighter.format(category); }
    bool plain(int line, int column) { return formatAt(doc, line, column) == QTextCharFormat(); }
};

} // namespace

class BuiltinHighlighterTest : public QObject {
    Q_OBJECT
private slots:
    void aliases() {
        QCOMPARE(findSyntaxLanguage(QStringLiteral("C++"))->id, QStringLiteral("cpp"));
        QCOMPARE(findSyntaxLanguage(QStringLiteral("py"))->id, QStringLiteral("python"));
        QCOMPARE(findSyntaxLanguage(QStringLiteral("tsx"))->id, QStringLiteral("js"));
        QCOMPARE(findSyntaxLanguage(QStringLiteral("sh"))->id, QStringLiteral("bash"));
        QCOMPARE(findSyntaxLanguage(QStringLiteral("md"))->id, QStringLiteral("markdown"));
        QVERIFY(!findSyntaxLanguage(QStringLiteral("cobol")));
        QCOMPARE(languageDisplayName(QStringLiteral("ts")), QStringLiteral("TypeScript"));
        QCOMPARE(languageDisplayName(QString()), QStringLiteral("Code"));
        QCOMPARE(languageDisplayName(QStringLiteral("zig")), QStringLiteral("zig"));
    }

    void cpp() {
        Doc d("cpp", "#include <vector>\n"
                     "int main() { return 0x1F; } // done\n"
                     "/* a\n still comment */ auto s = \"// not a comment\";");
        QVERIFY(d.is(0, 0, C::Preprocessor));
        QVERIFY(d.is(1, 0, C::Type));          // int
        QVERIFY(d.is(1, 4, C::Function));      // main(
        QVERIFY(d.is(1, 13, C::Keyword));      // return
        QVERIFY(d.is(1, 20, C::Number));       // 0x1F
        QVERIFY(d.is(1, 29, C::Comment));      // // done
        QVERIFY(d.is(2, 0, C::Comment));       // /* a
        QVERIFY(d.is(3, 3, C::Comment));       // still (carried over)
        QVERIFY(d.is(3, 18, C::Keyword));      // auto
        QVERIFY(d.is(3, 28, C::String));       // "// not a comment" stays a string
        QVERIFY(d.plain(3, 23));               // s
    }

    void python() {
        Doc d("python", "def f(x):\n"
                        "    \"\"\"doc\n"
                        "    more\"\"\" # c\n"
                        "    return None  # end\n"
                        "@cache");
        QVERIFY(d.is(0, 0, C::Keyword));
        QVERIFY(d.is(0, 4, C::Function));
        QVERIFY(d.is(1, 4, C::String));
        QVERIFY(d.is(2, 4, C::String));        // inside the triple-quoted string
        QVERIFY(d.is(2, 13, C::Comment));
        QVERIFY(d.is(3, 4, C::Keyword));
        QVERIFY(d.is(3, 11, C::Constant));     // None
        QVERIFY(d.is(3, 17, C::Comment));
        QVERIFY(d.is(4, 0, C::Preprocessor));  // decorator
    }

    void javascript() {
        Doc d("typescript", "const n: number = `a\nb ${x}` + 'c'; // z");
        QVERIFY(d.is(0, 0, C::Keyword));
        QVERIFY(d.is(0, 9, C::Type));
        QVERIFY(d.is(0, 18, C::String));       // template string, first line
        QVERIFY(d.is(1, 0, C::String));        // continues
        QVERIFY(d.is(1, 10, C::String));       // 'c'
        QVERIFY(d.is(1, 16, C::Comment));
    }

    void json() {
        Doc d("json", "{\"key\": \"value\", \"n\": -1.5e3, \"ok\": true}");
        QVERIFY(d.is(0, 1, C::Key));
        QVERIFY(d.is(0, 9, C::String));
        QVERIFY(d.is(0, 24, C::Number));       // 1.5e3
        QVERIFY(d.is(0, 38, C::Constant));     // true
    }

    void bash() {
        Doc d("bash", "for f in *.txt; do echo \"$f\" # loop\ndone; echo $# ${HOME}");
        QVERIFY(d.is(0, 0, C::Keyword));
        QVERIFY(d.is(0, 19, C::Constant));     // echo
        QVERIFY(d.is(0, 24, C::String));
        QVERIFY(d.is(0, 29, C::Comment));
        QVERIFY(d.is(1, 11, C::Variable));     // $# is not a comment
        QVERIFY(d.is(1, 14, C::Variable));     // ${HOME}
    }

    void markdown() {
        Doc d("markdown", "# Title\nSome `code` and **bold**.\n- item\n```\nx = 1\n```\n");
        QVERIFY(d.is(0, 0, C::Heading));
        QVERIFY(d.is(1, 5, C::CodeSpan));
        QVERIFY(d.is(1, 16, C::Strong));
        QVERIFY(d.is(2, 0, C::Keyword));
        QVERIFY(d.is(4, 0, C::CodeSpan));      // inside a fence
    }

    void unknownLanguageIsPlain() {
        Doc d("cobol", "MOVE 1 TO X. \"str\"");
        QVERIFY(d.plain(0, 0));
        QVERIFY(d.plain(0, 14));
        QVERIFY(!d.highlighter.hasLanguage());
    }

    void darkPaletteDiffers() {
        Doc d("cpp", "return 1;");
        const QColor light = d.highlighter.format(C::Keyword).foreground().color();
        d.highlighter.setDark(true);
        QVERIFY(d.highlighter.format(C::Keyword).foreground().color() != light);
        QVERIFY(d.is(0, 0, C::Keyword));       // rehighlighted with the new formats
    }
};

QTEST_MAIN(BuiltinHighlighterTest)
#include "builtin_highlighter_test.moc"
