// The Weir desktop app. Everything lives in the weir_desktop library; this
// only starts it with the real engine.
#include <QGuiApplication>

#include "DesktopApp.h"

int main(int argc, char** argv) {
    QGuiApplication::setApplicationName(QStringLiteral("Weir"));
    QGuiApplication::setOrganizationName(QStringLiteral("Weir"));
    QGuiApplication::setApplicationVersion(QStringLiteral(WEIR_VERSION));
    QGuiApplication app(argc, argv);
    weir::desktop::DesktopApp desktop(weir::desktop::realEngineFactory());
    if (!desktop.start(app.arguments())) return 1;
    return app.exec();
}
