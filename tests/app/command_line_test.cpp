// weir's command line: the options parse into CommandLineOptions, bad values
// are refused naming the option, and --help/--version are answered from the
// raw arguments (main() does so before a QGuiApplication exists).
#include <QtTest>

#include "CommandLine.h"

using weir::desktop::CommandLineOptions;
using weir::desktop::answerWithoutDisplay;
using weir::desktop::parseCommandLine;

class CommandLineTest : public QObject {
    Q_OBJECT
private slots:
    void parsesEveryOption() {
        CommandLineOptions o;
        QString error;
        QVERIFY2(parseCommandLine({"weir", "--model", "/m/a.gguf", "--data-dir", "/d", "--quit-after", "7"}, o, &error),
                 qPrintable(error));
        QCOMPARE(o.model, QStringLiteral("/m/a.gguf"));
        QCOMPARE(o.dataDir, QStringLiteral("/d"));
        QCOMPARE(o.quitAfterSeconds, 7);
        QVERIFY(!o.noModel);
        QVERIFY(parseCommandLine({"weir", "--no-model"}, o = {}, &error));
        QVERIFY(o.noModel);
        QCOMPARE(o.quitAfterSeconds, 0);
    }

    void aFileArgumentIsTheModel() {
        CommandLineOptions o;
        QVERIFY(parseCommandLine({"weir", "/m/b.gguf"}, o, nullptr));
        QCOMPARE(o.model, QStringLiteral("/m/b.gguf"));
        QString error;
        QVERIFY(!parseCommandLine({"weir", "--model", "/m/a.gguf", "/m/b.gguf"}, o = {}, &error));
        QCOMPARE(error, QStringLiteral("unexpected argument '/m/b.gguf'"));
        QVERIFY(!parseCommandLine({"weir", "/m/a.gguf", "/m/b.gguf"}, o = {}, &error));
    }

    void badValuesAreNamed_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("quit-after zero") << QStringList{"weir", "--quit-after", "0"}
                                         << "--quit-after must be a whole number of seconds from 1 to 86400 (got '0')";
        QTest::newRow("quit-after words") << QStringList{"weir", "--quit-after", "soon"} << "(got 'soon')";
        QTest::newRow("quit-after too long") << QStringList{"weir", "--quit-after", "86401"} << "from 1 to 86400";
        QTest::newRow("unknown option") << QStringList{"weir", "--bogus"} << "Unknown option 'bogus'.";
        QTest::newRow("missing value") << QStringList{"weir", "--model"} << "Missing value after '--model'.";
    }
    void badValuesAreNamed() {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        CommandLineOptions o;
        QString error;
        QVERIFY(!parseCommandLine(args, o, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void helpAndVersionNeedNoApplication() {
        // This test has no QGuiApplication either (QTEST_GUILESS_MAIN).
        QVERIFY(!answerWithoutDisplay({"weir", "--model", "x.gguf"}).has_value());
        QCOMPARE(answerWithoutDisplay({"weir", "--help"}), std::optional<int>(0));
        QCOMPARE(answerWithoutDisplay({"weir", "-h"}), std::optional<int>(0));
        QCOMPARE(answerWithoutDisplay({"weir", "--version"}), std::optional<int>(0));
    }
};

QTEST_GUILESS_MAIN(CommandLineTest)
#include "command_line_test.moc"
