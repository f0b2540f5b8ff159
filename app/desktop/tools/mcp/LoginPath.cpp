#include "tools/mcp/LoginPath.h"

#include <QProcess>
#include <QTimer>

namespace weir::desktop {

void fetchLoginPath(QObject* context, std::function<void(const QString&)> done) {
    const QString fallback = qEnvironmentVariable("PATH");
    const QString shell = qEnvironmentVariable("SHELL", QStringLiteral("/bin/sh"));
    auto* p = new QProcess(context);
    auto finish = std::make_shared<std::function<void(const QString&)>>(std::move(done));
    auto once = [p, finish](const QString& path) {
        if (!*finish) return;
        auto f = std::exchange(*finish, nullptr);
        p->disconnect();
        if (p->state() != QProcess::NotRunning) p->kill();
        p->deleteLater();
        f(path);
    };
    QObject::connect(p, &QProcess::finished, context, [p, once, fallback](int code, QProcess::ExitStatus status) {
        const QString path = QString::fromUtf8(p->readAllStandardOutput()).trimmed();
        once(status == QProcess::NormalExit && code == 0 && !path.isEmpty() ? path : fallback);
    });
    QObject::connect(p, &QProcess::errorOccurred, context, [once, fallback](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) once(fallback);
    });
    QTimer::singleShot(5000, p, [once, fallback] { once(fallback); });
    p->setStandardInputFile(QProcess::nullDevice());
    p->start(shell, {QStringLiteral("-lc"), QStringLiteral("printf %s \"$PATH\"")});
}

} // namespace weir::desktop
