#pragma once
// A conversation's title from its first message, as the sidebar shows it:
// the words of the first line with text, without Markdown syntax (heading
// and quote markers, list bullets, emphasis, code ticks, link targets,
// fences), cut at a word near 48 characters.
#include <QString>

namespace weir::desktop {

QString titleFromMessage(const QString& text);

} // namespace weir::desktop
