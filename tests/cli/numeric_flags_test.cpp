// Every numeric weir-cli flag is range-checked before anything is loaded: a
// bad value ends the command with exit code 1 and a message naming the flag
// and the value. Before, values were truncated from 64 to 32 bits, negative
// thread counts were accepted and --threads 2147483647 hung at start. The
// model path does not exist, so a flag that slipped through shows up as a
// model error instead of the expected message. A value past its type names
// the flag's own range, and an option given twice is named, not "unknown".
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <thread>

namespace {

QString cliPath() { return qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli"; }

} // namespace

class NumericFlagsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!QFileInfo(cliPath()).isExecutable()) QSKIP("weir-cli not built (WEIR_BIN_DIR)");
    }

    void badValueIsNamed_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        const QString hw4 = QString::number(std::max(1u, std::thread::hardware_concurrency()) * 4);
        QTest::newRow("negative threads") << QStringList{"serve", "--threads", "-1"}
                                          << "--threads must be from 0 to " + hw4;
        QTest::newRow("threads that used to hang") << QStringList{"serve", "--threads", "2147483647"}
                                                   << "(got 2147483647)";
        QTest::newRow("page size not a power of two") << QStringList{"soak", "--page-size", "24"}
                                                      << "--page-size must be a power of two from 1 to 1024 (got 24)";
        QTest::newRow("page size zero") << QStringList{"serve", "--page-size", "0"} << "--page-size must be a power of two";
        QTest::newRow("64-bit value for a 32-bit option")
            << QStringList{"bench-concurrency", "--max-context", "4294967297"}
            << "--max-context must be from 0 to 1073741824, 0 = the model's (got 4294967297)";
        QTest::newRow("below 32 bits") << QStringList{"serve", "--draft-tokens", "-4294967297"}
                                       << "--draft-tokens must be from 1 to 64 (got -4294967297)";
        QTest::newRow("past 64 bits") << QStringList{"serve", "--kv-reserve-tokens", "99999999999999999999"}
                                      << "--kv-reserve-tokens must be from 0 to 1073741824, 0 = from the context "
                                         "(got 99999999999999999999)";
        QTest::newRow("repeated flag") << QStringList{"serve", "--port", "1", "--port", "2"}
                                       << "option --port is given more than once";
        QTest::newRow("repeated flag with =") << QStringList{"serve", "--threads=1", "--threads", "2"}
                                              << "option --threads is given more than once";
        QTest::newRow("repeated switch") << QStringList{"serve", "--check-integrity", "--check-integrity"}
                                         << "option --check-integrity is given more than once";
        QTest::newRow("reserve over the pool limit") << QStringList{"serve", "--kv-reserve-tokens", "1099511627776"}
                                                     << "--kv-reserve-tokens must be from 0 to 1073741824";
        QTest::newRow("ratio nan") << QStringList{"serve", "--swa-full-tokens-ratio", "nan"}
                                   << "--swa-full-tokens-ratio must be from";
        QTest::newRow("ratio above one") << QStringList{"serve", "--swa-full-tokens-ratio", "2"}
                                         << "--swa-full-tokens-ratio must be from 0 to 1";
        QTest::newRow("empty value") << QStringList{"serve", "--threads="} << "option --threads expects a whole number";
        QTest::newRow("trailing junk") << QStringList{"serve", "--max-waiting", "12abc"}
                                       << "option --max-waiting expects a whole number";
        QTest::newRow("generate threads") << QStringList{"generate", "-p", "hi", "--threads", "-2"}
                                          << "option --threads must be from 0 to " + hw4 + " (got -2)";
        QTest::newRow("bench prefill") << QStringList{"bench", "--pp", "0"} << "option --pp must be from 1";
        QTest::newRow("serve port") << QStringList{"serve", "--port", "70000"}
                                    << "option --port must be from 0 to 65535 (got 70000)";
        QTest::newRow("soak conversations") << QStringList{"soak", "--conversations", "0"}
                                            << "option --conversations must be from 1";
    }
    void badValueIsNamed() {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        args << "-m" << "/nonexistent/weir-flags-test.gguf";
        QProcess p;
        p.start(cliPath(), args);
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(p.exitCode() == 1, qPrintable(QString::number(p.exitCode()) + ": " + err));
        QVERIFY2(err.contains(expected), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(NumericFlagsTest)
#include "numeric_flags_test.moc"
