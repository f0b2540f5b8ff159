#include "CommandLine.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <cstdio>

namespace weir::desktop {
namespace {

constexpr int kMaxQuitAfterSeconds = 24 * 3600;

struct Parser {
    QCommandLineParser parser;
    QCommandLineOption help = parser.addHelpOption();
    QCommandLineOption version = parser.addVersionOption();
    QCommandLineOption model{QStringLiteral("model"), QStringLiteral("GGUF model to load (default: the last one used, else the default model)."),
                             QStringLiteral("file")};
    QCommandLineOption noModel{QStringLiteral("no-model"), QStringLiteral("Start without loading a model.")};
    QCommandLineOption dataDir{QStringLiteral("data-dir"),
                               QStringLiteral("Folder for conversations, settings and logs (default: $WEIR_DATA_DIR, else "
                                              "$XDG_DATA_HOME/weir)."),
                               QStringLiteral("dir")};
    QCommandLineOption quitAfter{QStringLiteral("quit-after"),
                                 QStringLiteral("Quit by itself after this many seconds (1 to %1; for smoke tests).")
                                     .arg(kMaxQuitAfterSeconds),
                                 QStringLiteral("seconds")};
    Parser() {
        parser.setApplicationDescription(
            QStringLiteral("Weir: several conversations at once on one local model.\n"
                           "Models are looked for in $XDG_DATA_HOME/weir/models (~/.local/share/weir/models)."));
        parser.addOptions({model, noModel, dataDir, quitAfter});
        parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("A GGUF model to load (as --model)."),
                                     QStringLiteral("[file]"));
    }
};

} // namespace

std::optional<int> answerWithoutDisplay(const QStringList& rawArguments) {
    const bool wantsHelp = rawArguments.contains(QStringLiteral("--help")) || rawArguments.contains(QStringLiteral("-h")) ||
                           rawArguments.contains(QStringLiteral("--help-all"));
    const bool wantsVersion = rawArguments.contains(QStringLiteral("--version")) || rawArguments.contains(QStringLiteral("-v"));
    if (!wantsHelp && !wantsVersion) return std::nullopt;
    if (wantsHelp) {
        Parser p;
        // Without an application object Qt cannot name the program itself.
        const QString program = rawArguments.isEmpty() ? QStringLiteral("weir") : QFileInfo(rawArguments.first()).fileName();
        QString text = p.parser.helpText();
        text.replace(QStringLiteral("<executable_name>"), program);
        std::fputs(qPrintable(text), stdout);
    } else {
        std::printf("%s %s\n", qPrintable(QCoreApplication::applicationName()),
                    qPrintable(QCoreApplication::applicationVersion()));
    }
    return 0;
}

bool parseCommandLine(const QStringList& arguments, CommandLineOptions& out, QString* error) {
    Parser p;
    if (!p.parser.parse(arguments)) {
        if (error) *error = p.parser.errorText();
        return false;
    }
    // One file named without --model is the model to load ("Open with").
    const QStringList files = p.parser.positionalArguments();
    if (files.size() > 1 || (files.size() == 1 && p.parser.isSet(p.model))) {
        if (error) *error = QStringLiteral("unexpected argument '%1'").arg(files.last());
        return false;
    }
    out.model = files.isEmpty() ? p.parser.value(p.model) : files.first();
    out.noModel = p.parser.isSet(p.noModel);
    out.dataDir = p.parser.value(p.dataDir);
    if (p.parser.isSet(p.quitAfter)) {
        bool ok = false;
        const QString v = p.parser.value(p.quitAfter);
        const int s = v.toInt(&ok);
        if (!ok || s < 1 || s > kMaxQuitAfterSeconds) {
            if (error) *error = QStringLiteral("--quit-after must be a whole number of seconds from 1 to %1 (got '%2')")
                                    .arg(kMaxQuitAfterSeconds)
                                    .arg(v);
            return false;
        }
        out.quitAfterSeconds = s;
    }
    return true;
}

} // namespace weir::desktop
