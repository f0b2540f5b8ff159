#pragma once
// The styled rich text a Markdown reply is shown as:
//   MarkdownText { textFormat: TextEdit.RichText
//                  text: { styler.revision; return styler.html(markdown) }
//                  MarkdownStyler { id: styler; borderColor: ...; ... } }
// keepLineBreaks() then styledHtml(): the styling is done on a document of our
// own before the TextEdit gets it, because a TextEdit does not redraw what
// changes in its document's formats afterwards. revision changes with the style.
#include <QColor>
#include <QObject>
#include <QtQml/qqmlregistration.h>

#include "markdown/DocumentStyle.h"

namespace weir::desktop {

class MarkdownStyler : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QColor borderColor READ borderColor WRITE setBorderColor NOTIFY styleChanged)
    Q_PROPERTY(QColor headerBackground READ headerBackground WRITE setHeaderBackground NOTIFY styleChanged)
    Q_PROPERTY(QColor codeBackground READ codeBackground WRITE setCodeBackground NOTIFY styleChanged)
    Q_PROPERTY(QString monospaceFamily READ monospaceFamily WRITE setMonospaceFamily NOTIFY styleChanged)
    Q_PROPERTY(qreal blockSpacing READ blockSpacing WRITE setBlockSpacing NOTIFY styleChanged)
    Q_PROPERTY(qreal fontPixelSize READ fontPixelSize WRITE setFontPixelSize NOTIFY styleChanged)
    Q_PROPERTY(int revision READ revision NOTIFY styleChanged)

public:
    explicit MarkdownStyler(QObject* parent = nullptr);

    QColor borderColor() const { return style_.border; }
    void setBorderColor(const QColor& c) { set(style_.border, c); }
    QColor headerBackground() const { return style_.headerBackground; }
    void setHeaderBackground(const QColor& c) { set(style_.headerBackground, c); }
    QColor codeBackground() const { return style_.codeBackground; }
    void setCodeBackground(const QColor& c) { set(style_.codeBackground, c); }
    QString monospaceFamily() const { return style_.monospaceFamily; }
    void setMonospaceFamily(const QString& f) { set(style_.monospaceFamily, f); }
    qreal blockSpacing() const { return style_.blockSpacing; }
    void setBlockSpacing(qreal px) { set(style_.blockSpacing, px); }
    qreal fontPixelSize() const { return style_.fontPixelSize; }
    void setFontPixelSize(qreal px) { set(style_.fontPixelSize, px); }
    int revision() const { return revision_; }

    // Markdown (single newlines kept as line breaks) as styled HTML.
    Q_INVOKABLE QString html(const QString& markdown) const;

signals:
    void styleChanged();

private:
    template <typename T>
    void set(T& field, const T& value) {
        if (field == value) return;
        field = value;
        ++revision_;
        emit styleChanged();
    }

    DocumentStyle style_;
    int revision_ = 0;
};

} // namespace weir::desktop
