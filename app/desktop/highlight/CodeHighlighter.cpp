#include "highlight/CodeHighlighter.h"

#include <QTextDocument>

#include "highlight/BuiltinHighlighter.h"
#include "highlight/SyntaxLanguages.h"

#ifdef WEIR_HAVE_KF6_SYNTAX
#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>
#endif

namespace weir::desktop {

#ifdef WEIR_HAVE_KF6_SYNTAX
namespace {
KSyntaxHighlighting::Repository& repository() {
    static KSyntaxHighlighting::Repository repo;
    return repo;
}
} // namespace
#endif

CodeHighlighter::CodeHighlighter(QObject* parent) : QObject(parent) {}

CodeHighlighter::~CodeHighlighter() {
    // The document may outlive us; it must not keep our highlighter.
    delete highlighter_.data();
}

QString CodeHighlighter::backendName() {
#ifdef WEIR_HAVE_KF6_SYNTAX
    return QStringLiteral("KF6 SyntaxHighlighting");
#else
    return QStringLiteral("built-in highlighter (C/C++, Python, JavaScript/TypeScript, JSON, Bash, Markdown)");
#endif
}

void CodeHighlighter::setDocument(QQuickTextDocument* document) {
    if (document == document_) return;
    document_ = document;
    rebuild();
    emit documentChanged();
}

void CodeHighlighter::setLanguage(const QString& language) {
    if (language == language_) return;
    language_ = language;
    apply();
    emit languageChanged();
}

void CodeHighlighter::setDark(bool dark) {
    if (dark == dark_) return;
    dark_ = dark;
    apply();
    emit darkChanged();
}

QString CodeHighlighter::displayName() const { return languageDisplayName(language_); }

bool CodeHighlighter::highlighting() const {
#ifdef WEIR_HAVE_KF6_SYNTAX
    return repository().definitionForName(language_).isValid() ||
           repository().definitionForFileName(QStringLiteral("x.") + language_).isValid();
#else
    return findSyntaxLanguage(language_) != nullptr;
#endif
}

void CodeHighlighter::rebuild() {
    delete highlighter_.data();
    if (!document_ || !document_->textDocument()) return;
    QTextDocument* doc = document_->textDocument();
#ifdef WEIR_HAVE_KF6_SYNTAX
    highlighter_ = new KSyntaxHighlighting::SyntaxHighlighter(doc);
#else
    highlighter_ = new BuiltinHighlighter(doc);
#endif
    apply();
}

void CodeHighlighter::apply() {
    if (!highlighter_) return;
#ifdef WEIR_HAVE_KF6_SYNTAX
    auto* h = static_cast<KSyntaxHighlighting::SyntaxHighlighter*>(highlighter_.data());
    auto def = repository().definitionForName(language_);
    if (!def.isValid()) def = repository().definitionForFileName(QStringLiteral("x.") + language_);
    h->setTheme(repository().defaultTheme(dark_ ? KSyntaxHighlighting::Repository::DarkTheme
                                                : KSyntaxHighlighting::Repository::LightTheme));
    h->setDefinition(def);
    h->rehighlight();
#else
    auto* h = static_cast<BuiltinHighlighter*>(highlighter_.data());
    h->setDark(dark_);
    h->setLanguage(language_);
#endif
}

} // namespace weir::desktop
