// The app's log file: lines go to FILE until it would pass its size, then the
// files shift (FILE -> FILE.1 -> FILE.2 ...) and the oldest beyond the count
// is dropped; every Qt message (any category, any thread) reaches it through
// the installed handler, with time, level and category.
#include <QtTest>

#include <QFile>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QThread>

#include "app/logging/log_categories.h"
#include "app/logging/rotating_log_file.h"

using weir::logging::RotatingLogFile;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class RotatingLogFileTest : public QObject {
    Q_OBJECT
private slots:
    void rotatesAtTheSizeAndKeepsNFiles() {
        QTemporaryDir dir;
        RotatingLogFile log(dir.filePath("logs/weir.log"), {1000, 3});
        QVERIFY(log.open());
        // 100-byte lines (99 + newline): ten fill a file, 45 lines make five files' worth.
        for (int i = 0; i < 45; ++i) log.append(QStringLiteral("line %1 ").arg(i, 3, 10, QLatin1Char('0')).leftJustified(99, 'x'));
        const QStringList files = log.existingFiles();
        QCOMPARE(files, (QStringList{dir.filePath("logs/weir.log"), dir.filePath("logs/weir.log.1"),
                                     dir.filePath("logs/weir.log.2")}));
        QVERIFY(!QFile::exists(dir.filePath("logs/weir.log.3")));
        for (const QString& f : files) QVERIFY2(QFileInfo(f).size() <= 1000, qPrintable(f));
        // Newest in FILE, the ones before in .1 and .2; lines 0..14 are gone.
        QVERIFY(readAll(files[0]).startsWith("line 040 "));
        QVERIFY(readAll(files[0]).contains("line 044 "));
        QVERIFY(readAll(files[1]).startsWith("line 030 "));
        QVERIFY(readAll(files[2]).startsWith("line 020 "));
        QCOMPARE(readAll(files[2]).count('\n'), 10);
    }

    void keepsWhatAnEarlierRunWrote() {
        QTemporaryDir dir;
        {
            RotatingLogFile log(dir.filePath("weir.log"), {});
            QVERIFY(log.open());
            log.append(QStringLiteral("first run"));
        }
        RotatingLogFile log(dir.filePath("weir.log"), {});
        QVERIFY(log.open());
        log.append(QStringLiteral("second run"));
        QCOMPARE(readAll(dir.filePath("weir.log")), QByteArray("first run\nsecond run\n"));
    }

    void aLineLongerThanAFileIsCut() {
        QTemporaryDir dir;
        RotatingLogFile log(dir.filePath("weir.log"), {300, 2});
        QVERIFY(log.open());
        log.append(QString(1000, QChar(0x00e9)));  // é: two bytes each in UTF-8
        const QByteArray bytes = readAll(dir.filePath("weir.log"));
        QVERIFY(bytes.size() <= 300);
        QVERIFY(bytes.endsWith('\n'));
        QCOMPARE(QString::fromUtf8(bytes.chopped(1)), QString((bytes.size() - 1) / 2, QChar(0x00e9)));
    }

    void unopenableFolderIsNamed() {
        QTemporaryDir dir;
        QFile blocker(dir.filePath("file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        RotatingLogFile log(dir.filePath("file/logs/weir.log"), {});
        QString error;
        QVERIFY(!log.open(&error));
        QVERIFY2(error.contains(dir.filePath("file/logs")), qPrintable(error));
    }

    void everyQtMessageReachesTheFile() {
        QTemporaryDir dir;
        RotatingLogFile log(dir.filePath("weir.log"), {});
        QVERIFY(log.open());
        weir::logging::installLogFileHandler(&log);
        qCInfo(weir::logging::lcServer) << "from the test thread";
        QThread* t = QThread::create([] { qCWarning(weir::logging::lcStorage) << "from another thread"; });
        t->start();
        QVERIFY(t->wait(10000));
        delete t;
        weir::logging::uninstallLogFileHandler(&log);
        qCInfo(weir::logging::lcServer) << "after uninstalling";
        const QString text = QString::fromUtf8(readAll(dir.filePath("weir.log")));
        const QRegularExpression info(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3} info weir\\.server: from the test thread$"),
                                      QRegularExpression::MultilineOption);
        QVERIFY2(info.match(text).hasMatch(), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral(" warning weir.storage: from another thread\n")), qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("after uninstalling")));
    }
};

QTEST_GUILESS_MAIN(RotatingLogFileTest)
#include "rotating_log_file_test.moc"
