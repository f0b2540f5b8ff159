#pragma once
// The PATH of the user's login shell. A desktop app started from a launcher
// gets a short PATH without ~/.local/bin, nvm's or uv's folders, so npx and
// uvx are "not found"; MCP servers are started with this one instead. Runs
// `$SHELL -lc 'printf %s "$PATH"'` once, asynchronously, and falls back to
// the app's own PATH when the shell fails or takes more than 5 s.
#include <QObject>
#include <QString>
#include <functional>

namespace weir::desktop {

void fetchLoginPath(QObject* context, std::function<void(const QString& path)> done);

} // namespace weir::desktop
