// Help as a user asks for it: `weir-cli --help`, `weir-cli COMMAND --help`
// (also -h, after other options, and `weir-cli help COMMAND`) and
// `weir --help` print usage on stdout and exit 0 without doing anything
// else; `weir --help` works without a display. Before, `weir-cli generate
// --help` was "unknown argument" and `weir --help` aborted with no display.
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QtTest>

namespace {

QString binary(const char* name) { return qEnvironmentVariable("WEIR_BIN_DIR") + "/" + name; }

struct Run {
    int code = -1;
    QString out, err;
};

Run run(const QString& program, const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit) return r;
    r.code = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The command names `weir-cli --help` lists.
QStringList listedCommands(const QString& help) {
    QStringList names;
    const QString list = help.section(QStringLiteral("commands:\n"), 1).section(QStringLiteral("\n\n"), 0, 0);
    for (const QString& line : list.split('\n', Qt::SkipEmptyParts)) names << line.trimmed().section(' ', 0, 0);
    return names;
}

} // namespace

class HelpTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!QFileInfo(binary("weir-cli")).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
    }

    void cliHelpListsEveryCommand() {
        const Run r = run(binary("weir-cli"), {"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("usage: weir-cli COMMAND"));
        const QStringList names = listedCommands(r.out);
        for (const char* expected : {"bench", "bench-concurrency", "chat-template", "generate", "inspect",
                                     "make-synthetic", "soak", "serve"})
            QVERIFY2(names.contains(QString::fromLatin1(expected)), qPrintable(names.join(',')));
        QVERIFY(r.out.contains("models are looked for in:"));
        QCOMPARE(run(binary("weir-cli"), {"-h"}).code, 0);
        QCOMPARE(run(binary("weir-cli"), {"help"}).code, 0);
        // No command at all is a usage error.
        const Run none = run(binary("weir-cli"), {});
        QCOMPARE(none.code, 2);
        QVERIFY(none.err.startsWith("usage: weir-cli COMMAND"));
    }

    void eachCommandHasItsHelp_data() {
        QTest::addColumn<QString>("command");
        for (const QString& name : listedCommands(run(binary("weir-cli"), {"--help"}).out))
            QTest::newRow(qPrintable(name)) << name;
    }
    void eachCommandHasItsHelp() {
        QFETCH(QString, command);
        for (const QStringList& args : {QStringList{command, "--help"}, QStringList{command, "-h"}, QStringList{"help", command}}) {
            const Run r = run(binary("weir-cli"), args);
            QVERIFY2(r.code == 0, qPrintable(args.join(' ') + ": " + QString::number(r.code) + " " + r.err));
            QVERIFY2(r.out.startsWith("usage: weir-cli " + command + " [options]\n"), qPrintable(r.out));
            QVERIFY(r.out.count('\n') >= 3);
            QCOMPARE(r.err, QString());
        }
        const bool engineFlags = command == "serve" || command == "soak" || command == "bench-concurrency";
        QCOMPARE(run(binary("weir-cli"), {command, "--help"}).out.contains("engine flags:\n  [-m FILE] [--device cpu|cuda|cuda:N] [--threads N]"), engineFlags);
    }

    void helpAfterOtherOptionsRunsNothing() {
        // The model does not exist: running the command would fail loading it.
        const Run r = run(binary("weir-cli"), {"generate", "-m", "/nonexistent/model.gguf", "-p", "hi", "--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("usage: weir-cli generate [options]"));
        QVERIFY(r.out.contains("-p TEXT"));
    }

    void unknownCommandIsNamed() {
        const Run r = run(binary("weir-cli"), {"help", "frobnicate"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("unknown command 'frobnicate'"));
        QCOMPARE(run(binary("weir-cli"), {"frobnicate", "--help"}).code, 2);
    }

    void appHelpWithoutADisplay() {
        if (!QFileInfo(binary("weir")).isExecutable()) QSKIP("weir not built");
        // The xcb platform with no display: creating the QGuiApplication would abort.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        env.insert("QT_QPA_PLATFORM", "xcb");
        for (const char* flag : {"--help", "-h"}) {
            const Run r = run(binary("weir"), {flag}, env);
            QVERIFY2(r.code == 0, qPrintable(QString::number(r.code) + r.err));
            QVERIFY2(r.out.startsWith("Usage: weir [options] [file]\n"), qPrintable(r.out));
            for (const char* option : {"--model <file>", "--no-model", "--data-dir <dir>", "--quit-after <seconds>"})
                QVERIFY2(r.out.contains(QLatin1String(option)), option);
        }
        const Run v = run(binary("weir"), {"--version"}, env);
        QCOMPARE(v.code, 0);
        QVERIFY(QRegularExpression(QStringLiteral("^Weir \\d+\\.\\d+\\.\\d+\n$")).match(v.out).hasMatch());
    }
};

QTEST_GUILESS_MAIN(HelpTest)
#include "help_test.moc"
