#pragma once
// Attaches syntax highlighting to a QML TextEdit's document:
//   CodeHighlighter { document: edit.textDocument; language: "python"; dark: Theme.dark }
// Uses KF6 SyntaxHighlighting when the build found it, else BuiltinHighlighter.
#include <QObject>
#include <QPointer>
#include <QQuickTextDocument>
#include <QSyntaxHighlighter>
#include <QtQml/qqmlregistration.h>
#include <memory>

namespace weir::desktop {

class CodeHighlighter : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY documentChanged)
    Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
    Q_PROPERTY(bool dark READ dark WRITE setDark NOTIFY darkChanged)
    Q_PROPERTY(QString displayName READ displayName NOTIFY languageChanged)
    Q_PROPERTY(bool highlighting READ highlighting NOTIFY languageChanged)

public:
    explicit CodeHighlighter(QObject* parent = nullptr);
    ~CodeHighlighter() override;

    QQuickTextDocument* document() const { return document_; }
    void setDocument(QQuickTextDocument* document);
    QString language() const { return language_; }
    void setLanguage(const QString& language);
    bool dark() const { return dark_; }
    void setDark(bool dark);
    QString displayName() const;
    bool highlighting() const;  // the language is known to the highlighter

    // "KF6 SyntaxHighlighting <version>" or "built-in (C/C++, Python, ...)".
    static QString backendName();

signals:
    void documentChanged();
    void languageChanged();
    void darkChanged();

private:
    void rebuild();
    void apply();

    QPointer<QQuickTextDocument> document_;
    QString language_;
    bool dark_ = false;
    // A child of the QTextDocument, which may be destroyed before or after us.
    QPointer<QSyntaxHighlighter> highlighter_;
};

} // namespace weir::desktop
