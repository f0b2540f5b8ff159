// Switching models again and again must not make the app grow: every load
// keeps only its own model, pools and buffers. The real engine, through the
// app's EngineHost and the engine settings a fresh data folder has, switches
// between the two models in models/ (skipped without them) and the resident
// set after the last switch is compared with the one after the first.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "engine_host/EngineBackend.h"
#include "engine_host/EngineHost.h"
#include "settings/AppSettings.h"

using namespace weir::desktop;

namespace {

// The process's resident set in MiB, from /proc/self/status (VmRSS, kB).
double residentMiB() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return -1;
}

QString modelFile(const char* name) {
    return QDir(qEnvironmentVariable("WEIR_SOURCE_DIR", QStringLiteral("."))).filePath(QStringLiteral("models/") + QLatin1String(name));
}

} // namespace

class ModelSwitchMemoryTest : public QObject {
    Q_OBJECT
private slots:
    void tenSwitchesStayFlat() {
        const QStringList models{modelFile("gemma-3-270m-q4_k_m.gguf"), modelFile("smollm2-135m-instruct-q4_1.gguf")};
        for (const QString& m : models)
            if (!QFileInfo::exists(m)) QSKIP(qPrintable(QStringLiteral("SKIPPED: %1 is not there").arg(m)));
        QTemporaryDir data;
        AppSettings settings(data.path(), models[0]);
        EngineHost host(realEngineFactory());
        host.setEngineOptions(settings.engineOptions());
        auto loadAndWait = [&](const QString& path) {
            host.load(path);
            QTRY_VERIFY_WITH_TIMEOUT(host.state() != EngineHost::Loading && host.modelPath() == path, 120000);
            QVERIFY2(host.state() == EngineHost::Ready, qPrintable(host.errorString()));
        };
        const double atStart = residentMiB();
        loadAndWait(models[0]);
        const double firstModel = residentMiB();
        loadAndWait(models[1]);
        const double afterFirstSwitch = residentMiB();
        QList<double> rss;
        for (int i = 0; i < 10; ++i) {
            loadAndWait(models[i % 2]);
            if (QTest::currentTestFailed()) return;
            rss << residentMiB();
        }
        // Compare like with like: the last load is models[1], as after the first switch.
        const double last = rss.last();
        QStringList line;
        for (double r : rss) line << QString::number(r, 'f', 0);
        qInfo().noquote() << QStringLiteral("RSS MiB: start %1, first model %2, after the first switch %3, then %4")
                                 .arg(atStart, 0, 'f', 0).arg(firstModel, 0, 'f', 0).arg(afterFirstSwitch, 0, 'f', 0)
                                 .arg(line.join(QStringLiteral(", ")));
        QVERIFY2(last < afterFirstSwitch * 1.10,
                 qPrintable(QStringLiteral("grew from %1 to %2 MiB over ten switches").arg(afterFirstSwitch).arg(last)));
        host.unload();
    }
};

QTEST_MAIN(ModelSwitchMemoryTest)
#include "model_switch_memory_test.moc"
