#include "highlight/BuiltinHighlighter.h"

#include <QColor>
#include <QFont>

namespace weir::desktop {
namespace {

// Block states carried from one line to the next.
enum State { Normal = 0, InBlockComment = 1, InTripleDouble = 2, InTripleSingle = 3, InTemplate = 4, InFence = 5 };

bool isIdentStart(QChar c) { return c.isLetter() || c == u'_'; }
bool isIdentChar(QChar c) { return c.isLetterOrNumber() || c == u'_'; }

bool startsAt(const QString& text, int i, const QString& what) {
    return !what.isEmpty() && QStringView(text).mid(i).startsWith(what);
}

int nextNonSpace(const QString& text, int i) {
    while (i < text.size() && text[i].isSpace()) ++i;
    return i;
}

} // namespace

BuiltinHighlighter::BuiltinHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
    updateFormats();
}

void BuiltinHighlighter::setLanguage(const QString& fenceName) {
    const SyntaxLanguage* l = findSyntaxLanguage(fenceName);
    if (l == language_) return;
    language_ = l;
    rehighlight();
}

void BuiltinHighlighter::setDark(bool dark) {
    if (dark == dark_) return;
    dark_ = dark;
    updateFormats();
    rehighlight();
}

void BuiltinHighlighter::updateFormats() {
    // Two palettes tuned for contrast on the code block backgrounds.
    struct Style { const char* light; const char* dark; bool bold, italic; };
    static const Style styles[CategoryCount] = {
        {"#c42b57", "#ff7b9c", false, false},  // Keyword
        {"#9a4f00", "#ffb86b", false, false},  // Type
        {"#0b5cad", "#7cc4ff", false, false},  // Constant
        {"#1a7f37", "#8fdc8f", false, false},  // String
        {"#6e7781", "#8b949e", false, true},   // Comment
        {"#0b5cad", "#7cc4ff", false, false},  // Number
        {"#7a3ec8", "#d2a8ff", false, false},  // Function
        {"#b35900", "#f0a35e", false, false},  // Preprocessor
        {"#9a4f00", "#ffb86b", false, false},  // Variable
        {"#0b5cad", "#7cc4ff", false, false},  // Key
        {"#0b5cad", "#7cc4ff", true, false},   // Heading
        {nullptr, nullptr, false, true},       // Emphasis
        {nullptr, nullptr, true, false},       // Strong
        {"#0b5cad", "#7cc4ff", false, false},  // Link
        {"#1a7f37", "#8fdc8f", false, false},  // CodeSpan
    };
    for (int i = 0; i < CategoryCount; ++i) {
        QTextCharFormat f;
        const char* color = dark_ ? styles[i].dark : styles[i].light;
        if (color) f.setForeground(QColor(QLatin1String(color)));
        if (styles[i].bold) f.setFontWeight(QFont::Bold);
        if (styles[i].italic) f.setFontItalic(true);
        formats_[i] = f;
    }
}

void BuiltinHighlighter::highlightBlock(const QString& text) {
    setCurrentBlockState(Normal);
    if (!language_) return;
    if (language_->markdown) highlightMarkdown(text);
    else highlightCode(text);
}

// Returns the index just past the closing quote, or -1 if the line ends first.
int BuiltinHighlighter::scanString(const QString& text, int from, QChar quote) const {
    for (int i = from; i < text.size(); ++i) {
        if (text[i] == u'\\') {
            ++i;
            continue;
        }
        if (text[i] == quote) return i + 1;
    }
    return -1;
}

void BuiltinHighlighter::highlightCode(const QString& text) {
    const SyntaxLanguage& lang = *language_;
    const int n = int(text.size());
    int i = 0;
    const int prev = std::max(0, previousBlockState());

    // Constructs that continue from the previous line.
    if (prev == InBlockComment) {
        const int end = text.indexOf(lang.blockCommentEnd);
        if (end < 0) {
            setFormat(0, n, formats_[Comment]);
            setCurrentBlockState(InBlockComment);
            return;
        }
        i = end + int(lang.blockCommentEnd.size());
        setFormat(0, i, formats_[Comment]);
    } else if (prev == InTripleDouble || prev == InTripleSingle) {
        const QString delim = prev == InTripleDouble ? QStringLiteral("\"\"\"") : QStringLiteral("'''");
        const int end = text.indexOf(delim);
        if (end < 0) {
            setFormat(0, n, formats_[String]);
            setCurrentBlockState(prev);
            return;
        }
        i = end + 3;
        setFormat(0, i, formats_[String]);
    } else if (prev == InTemplate) {
        const int end = scanString(text, 0, u'`');
        if (end < 0) {
            setFormat(0, n, formats_[String]);
            setCurrentBlockState(InTemplate);
            return;
        }
        i = end;
        setFormat(0, i, formats_[String]);
    }

    if (lang.preprocessor && i == 0) {
        const int first = nextNonSpace(text, 0);
        if (first < n && text[first] == u'#') {
            const int comment = text.indexOf(QStringLiteral("//"), first);
            setFormat(first, (comment < 0 ? n : comment) - first, formats_[Preprocessor]);
            if (comment >= 0) setFormat(comment, n - comment, formats_[Comment]);
            return;
        }
    }

    while (i < n) {
        const QChar c = text[i];
        bool lineComment = false;
        for (const QString& lc : lang.lineComments) {
            // In shells '#' starts a comment only at a word boundary ($#, ${#a} are not comments).
            if (startsAt(text, i, lc) && (!lang.shellVariables || i == 0 || text[i - 1].isSpace())) {
                lineComment = true;
                break;
            }
        }
        if (lineComment) {
            setFormat(i, n - i, formats_[Comment]);
            return;
        }
        if (startsAt(text, i, lang.blockCommentStart)) {
            const int end = text.indexOf(lang.blockCommentEnd, i + int(lang.blockCommentStart.size()));
            if (end < 0) {
                setFormat(i, n - i, formats_[Comment]);
                setCurrentBlockState(InBlockComment);
                return;
            }
            const int stop = end + int(lang.blockCommentEnd.size());
            setFormat(i, stop - i, formats_[Comment]);
            i = stop;
            continue;
        }
        if (lang.tripleQuotes && (startsAt(text, i, QStringLiteral("\"\"\"")) || startsAt(text, i, QStringLiteral("'''")))) {
            const QString delim = text.mid(i, 3);
            const int end = text.indexOf(delim, i + 3);
            if (end < 0) {
                setFormat(i, n - i, formats_[String]);
                setCurrentBlockState(delim == u"\"\"\"" ? InTripleDouble : InTripleSingle);
                return;
            }
            setFormat(i, end + 3 - i, formats_[String]);
            i = end + 3;
            continue;
        }
        if (lang.templateStrings && c == u'`') {
            const int end = scanString(text, i + 1, u'`');
            if (end < 0) {
                setFormat(i, n - i, formats_[String]);
                setCurrentBlockState(InTemplate);
                return;
            }
            setFormat(i, end - i, formats_[String]);
            i = end;
            continue;
        }
        if (lang.stringQuotes.contains(c)) {
            int end = scanString(text, i + 1, c);
            if (end < 0) end = n;  // unterminated: colour to the end of the line
            const bool key = lang.jsonKeys && nextNonSpace(text, end) < n && text[nextNonSpace(text, end)] == u':';
            setFormat(i, end - i, formats_[key ? Key : String]);
            i = end;
            continue;
        }
        if (lang.shellVariables && c == u'$' && i + 1 < n) {
            int end = i + 1;
            if (text[end] == u'{') {
                const int close = text.indexOf(u'}', end);
                end = close < 0 ? n : close + 1;
            } else if (isIdentStart(text[end])) {
                while (end < n && isIdentChar(text[end])) ++end;
            } else if (text[end].isDigit() || QStringLiteral("@#?*$!-").contains(text[end])) {
                ++end;
            }
            if (end > i + 1) {
                setFormat(i, end - i, formats_[Variable]);
                i = end;
                continue;
            }
        }
        if (c.isDigit() && (i == 0 || !isIdentChar(text[i - 1]))) {
            int end = i + 1;
            while (end < n && (text[end].isLetterOrNumber() || text[end] == u'.' || text[end] == u'\'' ||
                               text[end] == u'_'))
                ++end;
            setFormat(i, end - i, formats_[Number]);
            i = end;
            continue;
        }
        if (c == u'@' && lang.id == u"python" && i + 1 < n && isIdentStart(text[i + 1])) {
            int end = i + 1;
            while (end < n && (isIdentChar(text[end]) || text[end] == u'.')) ++end;
            setFormat(i, end - i, formats_[Preprocessor]);
            i = end;
            continue;
        }
        if (isIdentStart(c)) {
            int end = i + 1;
            while (end < n && (isIdentChar(text[end]) || (lang.shellVariables && text[end] == u'-'))) ++end;
            const QString word = text.mid(i, end - i);
            if (lang.keywords.contains(word)) setFormat(i, end - i, formats_[Keyword]);
            else if (lang.types.contains(word)) setFormat(i, end - i, formats_[Type]);
            else if (lang.constants.contains(word)) setFormat(i, end - i, formats_[Constant]);
            else if (!lang.jsonKeys) {
                const int next = nextNonSpace(text, end);
                if (next < n && text[next] == u'(') setFormat(i, end - i, formats_[Function]);
            }
            i = end;
            continue;
        }
        ++i;
    }
}

void BuiltinHighlighter::highlightMarkdown(const QString& text) {
    const int n = int(text.size());
    const QString trimmed = text.trimmed();
    const bool fence = trimmed.startsWith(QStringLiteral("```")) || trimmed.startsWith(QStringLiteral("~~~"));
    if (previousBlockState() == InFence) {
        setFormat(0, n, formats_[CodeSpan]);
        if (!fence) setCurrentBlockState(InFence);
        return;
    }
    if (fence) {
        setFormat(0, n, formats_[CodeSpan]);
        setCurrentBlockState(InFence);
        return;
    }
    int i = nextNonSpace(text, 0);
    if (i < n && text[i] == u'#') {
        setFormat(0, n, formats_[Heading]);
        return;
    }
    if (i < n && text[i] == u'>') {
        setFormat(0, n, formats_[Comment]);
        return;
    }
    // List markers: "- ", "* ", "+ ", "1. "
    int marker = i;
    if (marker < n && QStringLiteral("-*+").contains(text[marker]) && marker + 1 < n && text[marker + 1] == u' ') {
        setFormat(marker, 1, formats_[Keyword]);
        i = marker + 2;
    } else {
        while (marker < n && text[marker].isDigit()) ++marker;
        if (marker > i && marker + 1 < n && text[marker] == u'.' && text[marker + 1] == u' ') {
            setFormat(i, marker + 1 - i, formats_[Keyword]);
            i = marker + 2;
        }
    }
    markdownInline(text, i);
}

void BuiltinHighlighter::markdownInline(const QString& text, int i) {
    const int n = int(text.size());
    while (i < n) {
        const QChar c = text[i];
        if (c == u'`') {
            const int end = text.indexOf(u'`', i + 1);
            if (end > i) {
                setFormat(i, end + 1 - i, formats_[CodeSpan]);
                i = end + 1;
                continue;
            }
        }
        if (startsAt(text, i, QStringLiteral("**")) || startsAt(text, i, QStringLiteral("__"))) {
            const int end = text.indexOf(text.mid(i, 2), i + 2);
            if (end > i + 2) {
                setFormat(i, end + 2 - i, formats_[Strong]);
                i = end + 2;
                continue;
            }
        }
        if ((c == u'*' || c == u'_') && i + 1 < n && !text[i + 1].isSpace()) {
            const int end = text.indexOf(c, i + 1);
            if (end > i + 1) {
                setFormat(i, end + 1 - i, formats_[Emphasis]);
                i = end + 1;
                continue;
            }
        }
        if (c == u'[') {
            const int close = text.indexOf(QStringLiteral("]("), i + 1);
            const int end = close < 0 ? -1 : text.indexOf(u')', close + 2);
            if (end > 0) {
                setFormat(i, end + 1 - i, formats_[Link]);
                i = end + 1;
                continue;
            }
        }
        ++i;
    }
}

} // namespace weir::desktop
