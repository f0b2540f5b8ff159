#pragma once
// weir's command line, defined once: the help printed before any window
// exists (a QGuiApplication needs a display; --help and --version must not)
// and the parse DesktopApp::start does after Qt took its own options.
//   [--model] FILE  --no-model  --data-dir DIR  --quit-after SECONDS
#include <QString>
#include <QStringList>
#include <optional>

namespace weir::desktop {

struct CommandLineOptions {
    QString model;
    bool noModel = false;
    QString dataDir;
    int quitAfterSeconds = 0;  // 0: run until the window closes
};

// --help (-h, --help-all) or --version (-v) among the raw arguments: prints
// the answer on stdout and returns exit code 0; otherwise nothing.
std::optional<int> answerWithoutDisplay(const QStringList& rawArguments);

// Parses arguments (Qt's own options already removed). False, with the
// problem named in `error`, for an unknown option or a bad value.
bool parseCommandLine(const QStringList& arguments, CommandLineOptions& out, QString* error);

} // namespace weir::desktop
