// validateEngineOptions: every numeric option has a range, and the message
// names the flag and the value. Engine's constructor refuses the same options
// before it touches the model file.
#include <QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "weir/engine.h"
#include "weir/types/engine_limits.h"
#include "weir/base/error.h"

using namespace weir;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

} // namespace

class EngineLimitsTest : public QObject {
    Q_OBJECT
private slots:
    void defaultsAreValid() { QCOMPARE(validateEngineOptions(EngineOptions{}), std::string()); }

    void threadsAtMostFourPerHardwareThread() {
        const int32_t hw = int32_t(std::max(1u, std::thread::hardware_concurrency()));
        QCOMPARE(EngineLimits::maxThreads(), hw * 4);
        EngineOptions o;
        o.threads = hw * 4;
        QCOMPARE(validateEngineOptions(o), std::string());
        o.threads = hw * 4 + 1;
        std::string m = validateEngineOptions(o);
        QVERIFY2(has(m, "--threads") && has(m, "(got " + std::to_string(hw * 4 + 1) + ")"), m.c_str());
        o.threads = std::numeric_limits<int32_t>::max();  // used to hang at start
        QVERIFY(has(validateEngineOptions(o), "--threads"));
        o.threads = -1;  // used to be accepted
        m = validateEngineOptions(o);
        QVERIFY2(has(m, "--threads") && has(m, "(got -1)"), m.c_str());
    }

    void pageSizeIsAPowerOfTwoWithinLimits_data() {
        QTest::addColumn<int>("pageSize");
        QTest::addColumn<bool>("valid");
        QTest::newRow("1") << 1 << true;
        QTest::newRow("16") << 16 << true;
        QTest::newRow("1024") << 1024 << true;
        QTest::newRow("0") << 0 << false;
        QTest::newRow("-16") << -16 << false;
        QTest::newRow("24") << 24 << false;
        QTest::newRow("2048") << 2048 << false;
        QTest::newRow("2^30") << (1 << 30) << false;
    }
    void pageSizeIsAPowerOfTwoWithinLimits() {
        QFETCH(int, pageSize);
        QFETCH(bool, valid);
        EngineOptions o;
        o.pageSize = pageSize;
        const std::string m = validateEngineOptions(o);
        if (valid) {
            QCOMPARE(m, std::string());
        } else {
            QVERIFY2(has(m, "--page-size must be a power of two from 1 to 1024"), m.c_str());
            QVERIFY2(has(m, "(got " + std::to_string(pageSize) + ")"), m.c_str());
        }
    }

    void everyOtherOptionHasARange_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<qint64>("bad");
        QTest::newRow("max running 0") << "--max-running-requests" << qint64(0);
        QTest::newRow("max running huge") << "--max-running-requests" << qint64(1025);
        QTest::newRow("prefill 0") << "--prefill-chunk" << qint64(0);
        QTest::newRow("prefill huge") << "--prefill-chunk" << qint64(65537);
        QTest::newRow("reserve negative") << "--kv-reserve-tokens" << qint64(-1);
        QTest::newRow("reserve huge") << "--kv-reserve-tokens" << (qint64(1) << 40);
        QTest::newRow("swa tokens negative") << "--swa-tokens" << qint64(-5);
        QTest::newRow("swa tokens huge") << "--swa-tokens" << (qint64(1) << 62);
        QTest::newRow("retain gap 0") << "--retain-gap" << qint64(0);
        QTest::newRow("max context negative") << "--max-context" << qint64(-1);
        QTest::newRow("max waiting negative") << "--max-waiting" << qint64(-1);
    }
    void everyOtherOptionHasARange() {
        QFETCH(QString, flag);
        QFETCH(qint64, bad);
        EngineOptions o;
        const std::string f = flag.toStdString();
        if (f == "--max-running-requests") o.maxRunningRequests = int32_t(bad);
        if (f == "--prefill-chunk") o.prefillChunk = int32_t(bad);
        if (f == "--kv-reserve-tokens") o.kvReserveTokens = bad;
        if (f == "--swa-tokens") o.swaTokens = bad;
        if (f == "--retain-gap") o.retainGap = int32_t(bad);
        if (f == "--max-context") o.maxContext = int32_t(bad);
        if (f == "--max-waiting") o.maxWaiting = int32_t(bad);
        const std::string m = validateEngineOptions(o);
        QVERIFY2(m.rfind(f + " must be from ", 0) == 0, m.c_str());
        QVERIFY2(has(m, "(got " + std::to_string(bad) + ")"), m.c_str());
    }

    void ratioIsFiniteAndAtMostOne() {
        EngineOptions o;
        for (double r : {0.0, 0.25, 1.0}) {
            o.swaFullTokensRatio = r;
            QCOMPARE(validateEngineOptions(o), std::string());
        }
        for (double r : {-0.5, 1.5, 1e300, std::nan(""), std::numeric_limits<double>::infinity()}) {
            o.swaFullTokensRatio = r;
            QVERIFY2(has(validateEngineOptions(o), "--swa-full-tokens-ratio must be from 0 to 1"), std::to_string(r).c_str());
        }
    }

    // The options are checked before the model file is opened.
    void engineRefusesBeforeLoading() {
        EngineOptions o;
        o.modelPath = "/nonexistent/model.gguf";
        o.pageSize = 24;
        bool threw = false;
        try {
            Engine engine(o);
        } catch (const Error& e) {
            threw = true;
            QVERIFY2(has(e.what(), "--page-size"), e.what());
        }
        QVERIFY(threw);
    }
};

QTEST_GUILESS_MAIN(EngineLimitsTest)
#include "engine_limits_test.moc"
