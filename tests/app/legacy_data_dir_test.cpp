// Data an older Weir kept in ~/.local/share/Weir/Weir moves to the XDG
// folder on the first start that uses it, and never over data already there.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "storage/LegacyDataDir.h"

using weir::desktop::moveLegacyData;

namespace {

void write(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class LegacyDataDirTest : public QObject {
    Q_OBJECT
private slots:
    void movesEverythingIntoAFreshFolder() {
        QTemporaryDir root;
        const QString legacy = root.filePath("Weir/Weir"), data = root.filePath("weir");
        write(legacy + "/weir.sqlite3", "db");
        write(legacy + "/settings.ini", "[engine]");
        write(data + "/models/a.gguf", "model");  // the user put a model there first
        QCOMPARE(moveLegacyData(legacy, data), 2);
        QCOMPARE(read(data + "/weir.sqlite3"), QByteArray("db"));
        QCOMPARE(read(data + "/settings.ini"), QByteArray("[engine]"));
        QCOMPARE(read(data + "/models/a.gguf"), QByteArray("model"));
        QVERIFY(!QDir(legacy).exists());
    }

    void leavesAFolderInUseAlone() {
        QTemporaryDir root;
        const QString legacy = root.filePath("Weir/Weir"), data = root.filePath("weir");
        write(legacy + "/weir.sqlite3", "old");
        write(data + "/weir.sqlite3", "new");
        QCOMPARE(moveLegacyData(legacy, data), 0);
        QCOMPARE(read(data + "/weir.sqlite3"), QByteArray("new"));
        QCOMPARE(read(legacy + "/weir.sqlite3"), QByteArray("old"));
    }

    void nothingToMove() {
        QTemporaryDir root;
        QCOMPARE(moveLegacyData(root.filePath("Weir/Weir"), root.filePath("weir")), 0);
        QVERIFY(!QDir(root.filePath("weir")).exists());
    }
};

QTEST_GUILESS_MAIN(LegacyDataDirTest)
#include "legacy_data_dir_test.moc"
