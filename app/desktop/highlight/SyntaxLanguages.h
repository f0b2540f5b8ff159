#pragma once
// What the built-in highlighter knows about each language: comment and string
// syntax, keyword sets, and the names a code fence may use for it.
#include <QSet>
#include <QString>
#include <QStringList>

namespace weir::desktop {

struct SyntaxLanguage {
    QString id;                 // "cpp", "python", "js", "json", "bash", "markdown"
    QString displayName;        // "C++", "Python", ...
    QStringList lineComments;   // "//", "#"
    QString blockCommentStart, blockCommentEnd;
    QString stringQuotes;       // characters that open a one-line string
    bool tripleQuotes = false;  // Python """...""" and '''...''' span lines
    bool templateStrings = false;  // JS `...${}...` spans lines
    bool preprocessor = false;  // C: '#' at the start of a line
    bool shellVariables = false;   // $name, ${name}
    bool jsonKeys = false;      // "key": gets its own colour
    bool markdown = false;      // headings, emphasis, inline code, fences
    QSet<QString> keywords, types, constants;
};

// The language for a fence info word ("c++", "py", "tsx", ...); null if unknown.
const SyntaxLanguage* findSyntaxLanguage(const QString& fenceName);
// A readable label for a fence info word, known to the highlighter or not.
QString languageDisplayName(const QString& fenceName);

} // namespace weir::desktop
