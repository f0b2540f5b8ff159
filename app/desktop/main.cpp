// The Weir desktop app. Everything lives in the weir_desktop library; this
// only starts it with the real engine. SIGTERM and SIGINT quit it like the
// window's close does, so the quit-time cleanup runs (settings saved, the
// endpoint's streams ended properly, the database closed).
#include <QGuiApplication>

#include "DesktopApp.h"
#include "app/server/quit_on_signal.h"

int main(int argc, char** argv) {
    QGuiApplication::setApplicationName(QStringLiteral("Weir"));
    QGuiApplication::setOrganizationName(QStringLiteral("Weir"));
    QGuiApplication::setApplicationVersion(QStringLiteral(WEIR_VERSION));
    QGuiApplication app(argc, argv);
    weir::server::quitOnTerminationSignals(app);
    weir::desktop::DesktopApp desktop(weir::desktop::realEngineFactory());
    if (!desktop.start(app.arguments())) return 1;
    return app.exec();
}
