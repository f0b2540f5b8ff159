// The shipped app (bin/weir, offscreen, no model) quits the normal way on
// SIGTERM and SIGINT: exit code 0, not killed by the signal, and its quit-time
// cleanup ran (the database was closed, so SQLite folded its write-ahead log
// back into the file and removed it).
#include <QtTest>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <csignal>

class QuitOnSignalTest : public QObject {
    Q_OBJECT

    void quitsCleanlyOn(int signo) {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        app.setProcessEnvironment(env);
        app.setProgram(qEnvironmentVariable("WEIR_BIN_DIR") + QStringLiteral("/weir"));
        app.setArguments({QStringLiteral("--no-model"), QStringLiteral("--data-dir"), data.path()});
        app.start();
        QVERIFY(app.waitForStarted(30000));
        // The database is opened after the signals are hooked: once it
        // exists, a signal is the app's to handle.
        const QString db = data.filePath(QStringLiteral("weir.sqlite3"));
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(db + QStringLiteral("-wal")), 60000);
        ::kill(pid_t(app.processId()), signo);
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.exitCode(), 0);
        QVERIFY(QFile::exists(db));
        QVERIFY2(!QFile::exists(db + QStringLiteral("-wal")), "the database was not closed");
    }

private slots:
    void sigtermQuitsNormally() { quitsCleanlyOn(SIGTERM); }
    void sigintQuitsNormally() { quitsCleanlyOn(SIGINT); }
};

QTEST_GUILESS_MAIN(QuitOnSignalTest)
#include "quit_on_signal_test.moc"
