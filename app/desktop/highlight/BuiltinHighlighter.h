#pragma once
// Weir's own syntax highlighter, used when KF6 SyntaxHighlighting is not
// available (Debian 12 has none): a small scanner per block that knows
// comments, strings (including ones that span lines), numbers, keywords,
// types, constants and calls for C/C++, Python, JavaScript/TypeScript, JSON,
// Bash and Markdown.
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include "highlight/SyntaxLanguages.h"

namespace weir::desktop {

class BuiltinHighlighter : public QSyntaxHighlighter {
public:
    enum Category { Keyword, Type, Constant, String, Comment, Number, Function, Preprocessor, Variable, Key,
                    Heading, Emphasis, Strong, Link, CodeSpan, CategoryCount };

    explicit BuiltinHighlighter(QTextDocument* document);

    // Unknown languages are left plain. Rehighlights the document.
    void setLanguage(const QString& fenceName);
    void setDark(bool dark);
    bool hasLanguage() const { return language_ != nullptr; }
    const QTextCharFormat& format(Category c) const { return formats_[c]; }

protected:
    void highlightBlock(const QString& text) override;

private:
    void highlightCode(const QString& text);
    // The code scanners: each colours one construct starting at `i` and
    // returns where scanning goes on: past it, kLineDone when it ran to the
    // end of the line (the block state set for the next one), or `i` itself
    // when no such construct starts there.
    static constexpr int kLineDone = -1;
    int continueBlock(const QString& text);
    bool highlightPreprocessorLine(const QString& text, int from);
    int scanComment(const QString& text, int i);
    int scanQuoted(const QString& text, int i);
    int scanShellVariable(const QString& text, int i);
    int scanNumber(const QString& text, int i);
    int scanDecorator(const QString& text, int i);
    int scanWord(const QString& text, int i);
    void highlightMarkdown(const QString& text);
    void markdownInline(const QString& text, int from);
    int scanString(const QString& text, int from, QChar quote) const;
    void updateFormats();

    const SyntaxLanguage* language_ = nullptr;
    bool dark_ = false;
    QTextCharFormat formats_[CategoryCount];
};

} // namespace weir::desktop
