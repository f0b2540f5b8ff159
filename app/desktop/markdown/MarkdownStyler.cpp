#include "markdown/MarkdownStyler.h"

#include "markdown/LineBreaks.h"

namespace weir::desktop {

MarkdownStyler::MarkdownStyler(QObject* parent) : QObject(parent) {}

QString MarkdownStyler::html(const QString& markdown) const {
    if (markdown.isEmpty()) return {};
    return styledHtml(keepLineBreaks(markdown), style_);
}

} // namespace weir::desktop
