// The settings page's sizing check. Expected floors are the worked examples
// in the KV pool notes (shared/reference/kv-pools.md), computed there by hand
// from the formula, not by this code.
#include <QSignalSpy>
#include <QTest>

#include "monitor/SizingAdvisor.h"

using namespace weir::desktop;

class SizingAdvisorTest : public QObject {
    Q_OBJECT
    void configure(SizingAdvisor& a, int window, int chunk, int maxRunning, qint64 windowPool) {
        a.setModelInfo({{"slidingWindow", window}, {"fullLayers", 3}, {"slidingLayers", 15}, {"kvHeads", 1},
                        {"headDimK", 256}, {"contextLength", 32768}});
        a.setProperty("pageSize", 16);
        a.setProperty("retainGap", 1);
        a.setProperty("chunksInFlight", 2);
        a.setProperty("prefillChunk", chunk);
        a.setProperty("maxRunning", maxRunning);
        a.setProperty("windowPoolTokens", windowPool);
    }
private slots:
    void floorsFromTheNotes_data() {
        QTest::addColumn<int>("chunk");
        QTest::addColumn<qint64>("floor");
        // W 1024, P 16, E = D = 1, K 2, R 4 (the notes' example).
        QTest::newRow("C 2048") << 2048 << qint64(8352);
        QTest::newRow("C 8192") << 8192 << qint64(20640);
    }
    void floorsFromTheNotes() {
        QFETCH(int, chunk);
        QFETCH(qint64, floor);
        SizingAdvisor a;
        configure(a, 1024, chunk, 4, 0);
        QVERIFY(a.applicable());
        QCOMPARE(a.windowFloor(), floor);
        QCOMPARE(a.perRequestTokens(), qint64(1024 + 16 + 1 + 16));
        QVERIFY(!a.windowBelowFloor());  // automatic size = the floor
        QCOMPARE(a.effectiveWindowTokens(), floor);
        // Terms: 7 rows, and the per-request x R row is R times the per-request sum.
        const QVariantList terms = a.windowTerms();
        QCOMPARE(terms.size(), 7);
        qint64 perRequest = 0;
        for (int i = 0; i < 4; ++i) perRequest += terms[i].toMap().value("tokens").toLongLong();
        QCOMPARE(perRequest, a.perRequestTokens());
        QCOMPARE(terms[4].toMap().value("tokens").toLongLong(), 4 * perRequest);
    }

    void belowFloorOffersBothWaysOut() {
        SizingAdvisor a;
        // The peer's failure: a 9176-token window pool for 4 requests (notes).
        configure(a, 1024, 2048, 4, 9176);
        QVERIFY(!a.windowBelowFloor());  // 9176 >= 8352: fits
        configure(a, 1024, 8192, 4, 9176);
        QVERIFY(a.windowBelowFloor());   // 9176 < 20640
        // Largest R the configured pool serves: floor((S - K*C - P) / per_request).
        QCOMPARE(a.largestMaxRunning(), int((9176 - 2 * 8192 - 16) < 0 ? 0 : (9176 - 2 * 8192 - 16) / 1057));
        configure(a, 1024, 512, 8, 6000);
        QVERIFY(a.windowBelowFloor());
        QCOMPARE(a.largestMaxRunning(), (6000 - 1024 - 16) / 1057);  // = 4
        a.setProperty("maxRunning", a.largestMaxRunning());
        QVERIFY(!a.windowBelowFloor());
    }

    void modelWithoutSlidingLayers() {
        SizingAdvisor a;
        a.setModelInfo({{"slidingWindow", 0}, {"fullLayers", 16}, {"slidingLayers", 0}});
        QVERIFY(!a.applicable());
        QVERIFY(!a.windowBelowFloor());
        QCOMPARE(a.windowFloor(), 0);
    }

    void fullPoolMustHoldOneLongestRequest() {
        SizingAdvisor a;
        configure(a, 512, 512, 4, 0);
        a.setProperty("maxContext", 4000);
        QCOMPARE(a.fullFloor(), qint64(4000 + 16));  // 4000 rounded up to a page, plus one page
        a.setProperty("fullPoolTokens", 2048);
        QVERIFY(a.fullBelowFloor());
        a.setProperty("fullPoolTokens", 8192);
        QVERIFY(!a.fullBelowFloor());
    }

    void bytesFollowTheKvDtype() {
        SizingAdvisor a;
        configure(a, 512, 512, 4, 0);
        // K and V rows of 1 head x 256 dims: f16 = 2 x 512 bytes per layer.
        QCOMPARE(a.windowBytesPerToken(), 15.0 * 2 * 512);
        a.setProperty("kvDtype", QStringLiteral("q8_0"));
        QCOMPARE(a.windowBytesPerToken(), 15.0 * 2 * (256 / 32 * 34));
    }
};

QTEST_GUILESS_MAIN(SizingAdvisorTest)
#include "sizing_advisor_test.moc"
