// The Weir desktop app. Everything lives in the weir_desktop library; this
// only starts it with the real engine. --help and --version are answered
// before the QGuiApplication exists, so they work without a display.
// SIGTERM and SIGINT quit it like the window's close does, so the quit-time
// cleanup runs (settings saved, the endpoint's streams ended properly, the
// database closed).
#include <QGuiApplication>
#include <QIcon>
#include <QStringList>

#include "CommandLine.h"
#include "AppIcon.h"
#include "DesktopApp.h"
#include "weir/model_file.h"
#include "app/common/quit_on_signal.h"

int main(int argc, char** argv) {
    QGuiApplication::setApplicationName(QStringLiteral("Weir"));
    QGuiApplication::setOrganizationName(QStringLiteral("Weir"));
    QGuiApplication::setApplicationVersion(QStringLiteral(WEIR_VERSION));
    // Ties the window to io.github.weir.Weir.desktop (its icon and name on Wayland).
    QGuiApplication::setDesktopFileName(QStringLiteral(WEIR_APP_ID));
    QStringList raw;
    for (int i = 0; i < argc; ++i) raw << QString::fromLocal8Bit(argv[i]);
    if (const auto exitCode = weir::desktop::answerWithoutDisplay(raw)) return *exitCode;

    QGuiApplication app(argc, argv);
    QGuiApplication::setWindowIcon(weir::desktop::appIcon());
    weir::common::quitOnTerminationSignals(app);
    weir::desktop::DesktopApp desktop(weir::desktop::realEngineFactory(), nullptr, &weir::checkModelFile);
    if (!desktop.start(app.arguments())) return 1;
    return app.exec();
}
