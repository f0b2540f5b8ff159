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
    int i = continueBlock(text);
    if (i == kLineDone || highlightPreprocessorLine(text, i)) return;
    const int n = int(text.size());
    while (i < n) {
        int next = i;
        for (auto scan : {&BuiltinHighlighter::scanComment, &BuiltinHighlighter::scanQuoted,
                          &BuiltinHighlighter::scanShellVariable, &BuiltinHighlighter::scanNumber,
                          &BuiltinHighlighter::scanDecorator, &BuiltinHighlighter::scanWord}) {
            next = (this->*scan)(text, i);
            if (next != i) break;
        }
        if (next == kLineDone) return;
        i = next == i ? i + 1 : next;
    }
}

// Constructs that continue from the previous line: a block comment, a
// triple-quoted or template string.
int BuiltinHighlighter::continueBlock(const QString& text) {
    const SyntaxLanguage& lang = *language_;
    const int n = int(text.size());
    const int prev = std::max(0, previousBlockState());
    int end = 0;
    Category category = String;
    if (prev == InBlockComment) {
        category = Comment;
        end = text.indexOf(lang.blockCommentEnd);
        if (end >= 0) end += int(lang.blockCommentEnd.size());
    } else if (prev == InTripleDouble || prev == InTripleSingle) {
        end = text.indexOf(prev == InTripleDouble ? QStringLiteral("\"\"\"") : QStringLiteral("'''"));
        if (end >= 0) end += 3;
    } else if (prev == InTemplate) {
        end = scanString(text, 0, u'`');
    } else {
        return 0;
    }
    if (end < 0) {
        setFormat(0, n, formats_[category]);
        setCurrentBlockState(prev);
        return kLineDone;
    }
    setFormat(0, end, formats_[category]);
    return end;
}

// A preprocessor line (C, C++) from its first '#', with a trailing // comment.
bool BuiltinHighlighter::highlightPreprocessorLine(const QString& text, int from) {
    if (!language_->preprocessor || from != 0) return false;
    const int n = int(text.size());
    const int first = nextNonSpace(text, 0);
    if (first >= n || text[first] != u'#') return false;
    const int comment = text.indexOf(QStringLiteral("//"), first);
    setFormat(first, (comment < 0 ? n : comment) - first, formats_[Preprocessor]);
    if (comment >= 0) setFormat(comment, n - comment, formats_[Comment]);
    return true;
}

int BuiltinHighlighter::scanComment(const QString& text, int i) {
    const SyntaxLanguage& lang = *language_;
    const int n = int(text.size());
    for (const QString& lc : lang.lineComments) {
        // In shells '#' starts a comment only at a word boundary ($#, ${#a} are not comments).
        if (startsAt(text, i, lc) && (!lang.shellVariables || i == 0 || text[i - 1].isSpace())) {
            setFormat(i, n - i, formats_[Comment]);
            return kLineDone;
        }
    }
    if (!startsAt(text, i, lang.blockCommentStart)) return i;
    const int end = text.indexOf(lang.blockCommentEnd, i + int(lang.blockCommentStart.size()));
    if (end < 0) {
        setFormat(i, n - i, formats_[Comment]);
        setCurrentBlockState(InBlockComment);
        return kLineDone;
    }
    const int stop = end + int(lang.blockCommentEnd.size());
    setFormat(i, stop - i, formats_[Comment]);
    return stop;
}

// Triple-quoted, template and plain strings (a JSON string before ':' is a key).
int BuiltinHighlighter::scanQuoted(const QString& text, int i) {
    const SyntaxLanguage& lang = *language_;
    const int n = int(text.size());
    const QChar c = text[i];
    if (lang.tripleQuotes && (startsAt(text, i, QStringLiteral("\"\"\"")) || startsAt(text, i, QStringLiteral("'''")))) {
        const QString delim = text.mid(i, 3);
        const int end = text.indexOf(delim, i + 3);
        if (end < 0) {
            setFormat(i, n - i, formats_[String]);
            setCurrentBlockState(delim == u"\"\"\"" ? InTripleDouble : InTripleSingle);
            return kLineDone;
        }
        setFormat(i, end + 3 - i, formats_[String]);
        return end + 3;
    }
    if (lang.templateStrings && c == u'`') {
        const int end = scanString(text, i + 1, u'`');
        if (end < 0) {
            setFormat(i, n - i, formats_[String]);
            setCurrentBlockState(InTemplate);
            return kLineDone;
        }
        setFormat(i, end - i, formats_[String]);
        return end;
    }
    if (!lang.stringQuotes.contains(c)) return i;
    int end = scanString(text, i + 1, c);
    if (end < 0) end = n;  // unterminated: colour to the end of the line
    const bool key = lang.jsonKeys && nextNonSpace(text, end) < n && text[nextNonSpace(text, end)] == u':';
    setFormat(i, end - i, formats_[key ? Key : String]);
    return end;
}

int BuiltinHighlighter::scanShellVariable(const QString& text, int i) {
    const int n = int(text.size());
    if (!language_->shellVariables || text[i] != u'$' || i + 1 >= n) return i;
    int end = i + 1;
    if (text[end] == u'{') {
        const int close = text.indexOf(u'}', end);
        end = close < 0 ? n : close + 1;
    } else if (isIdentStart(text[end])) {
        while (end < n && isIdentChar(text[end])) ++end;
    } else if (text[end].isDigit() || QStringLiteral("@#?*$!-").contains(text[end])) {
        ++end;
    }
    if (end == i + 1) return i;
    setFormat(i, end - i, formats_[Variable]);
    return end;
}

int BuiltinHighlighter::scanNumber(const QString& text, int i) {
    const int n = int(text.size());
    if (!text[i].isDigit() || (i > 0 && isIdentChar(text[i - 1]))) return i;
    int end = i + 1;
    while (end < n &&
           (text[end].isLetterOrNumber() || text[end] == u'.' || text[end] == u'\'' || text[end] == u'_'))
        ++end;
    setFormat(i, end - i, formats_[Number]);
    return end;
}

// A Python decorator: '@' and a dotted name.
int BuiltinHighlighter::scanDecorator(const QString& text, int i) {
    const int n = int(text.size());
    if (text[i] != u'@' || language_->id != u"python" || i + 1 >= n || !isIdentStart(text[i + 1])) return i;
    int end = i + 1;
    while (end < n && (isIdentChar(text[end]) || text[end] == u'.')) ++end;
    setFormat(i, end - i, formats_[Preprocessor]);
    return end;
}

// A keyword, type, constant, or a name followed by '(' (a call).
int BuiltinHighlighter::scanWord(const QString& text, int i) {
    const SyntaxLanguage& lang = *language_;
    const int n = int(text.size());
    if (!isIdentStart(text[i])) return i;
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
    return end;
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
