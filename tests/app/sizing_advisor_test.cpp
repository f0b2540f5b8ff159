// The settings page's sizing check. Expected floors are worked by hand from
// the formula stated in weir/types/pool_sizing.h, not computed by this code.
#include <QLocale>
#include <QTest>

#include "monitor/SizingAdvisor.h"

using namespace weir::desktop;

class SizingAdvisorTest : public QObject {
    Q_OBJECT
    // Gemma-3-like: 18 layers, 5 sliding then 1 full, 1 KV head of 256 dims.
    void configure(SizingAdvisor& a, int window, int chunk, int maxRunning, qint64 windowPool) {
        a.setModelInfo({{"slidingWindow", window}, {"layerPattern", "SSSSSFSSSSSFSSSSSF"}, {"kvHeads", 1},
                        {"headDimK", 256}, {"contextLength", 32768}});
        a.setProperty("pageSize", 16);
        a.setProperty("retainGap", 1);
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
        QCOMPARE(a.chunksInFlight(), 2);
        QCOMPARE(a.windowFloor(), floor);
        QCOMPARE(a.perRequestTokens(), qint64(1024 + 16 + 1 + 16));
        QVERIFY(!a.windowBelowFloor());  // automatic size = the floor
        QCOMPARE(a.effectiveWindowTokens(), floor);
        QVERIFY(a.problems().isEmpty());
        // Terms: four per-request parts that add up, then R x that, K x C, P.
        const QVariantList terms = a.windowTerms();
        QCOMPARE(terms.size(), 7);
        qint64 perRequest = 0;
        for (const QVariant& t : terms)
            if (t.toMap().value("part").toBool()) perRequest += t.toMap().value("tokens").toLongLong();
        QCOMPARE(perRequest, a.perRequestTokens());
        QCOMPARE(terms[4].toMap().value("tokens").toLongLong(), 4 * perRequest);
        QCOMPARE(terms[5].toMap().value("tokens").toLongLong(), qint64(2 * chunk));
    }

    void belowFloorOffersBothWaysOut() {
        SizingAdvisor a;
        // The peer's failure: a 9176-token window pool for 4 requests (notes).
        configure(a, 1024, 2048, 4, 9176);
        QVERIFY(!a.windowBelowFloor());  // 9176 >= 8352 (9184 after rounding up to pages)
        configure(a, 1024, 8192, 4, 9176);
        QVERIFY(a.windowBelowFloor());   // < 20640
        QCOMPARE(a.largestMaxRunning(), 0);  // 9184 - 16384 - 16 < 0: not even one
        QVERIFY(a.problems().contains(QStringLiteral("window KV pool too small")));
        // The app's words name the conversations and the tokens; no flags, no floor formula.
        QCOMPARE(a.refusal(), QStringLiteral("The window pool is too small for 4 conversations at once: it needs at least %1 tokens.")
                                  .arg(QLocale().toString(a.windowFloor())));

        configure(a, 1024, 512, 8, 6000);
        QVERIFY(a.windowBelowFloor());
        QCOMPARE(a.largestMaxRunning(), 4);  // floor((6000 - 1024 - 16) / 1057) = 4
        a.setProperty("maxRunning", a.largestMaxRunning());
        QVERIFY(!a.windowBelowFloor());
        QVERIFY(a.problems().isEmpty());
        QVERIFY(a.refusal().isEmpty());
    }

    void modelWithoutSlidingLayers() {
        SizingAdvisor a;
        a.setModelInfo({{"slidingWindow", 0}, {"layerPattern", "FFFF"}, {"kvHeads", 8}, {"headDimK", 64},
                        {"contextLength", 4096}});
        QVERIFY(a.hasModel());
        QVERIFY(!a.applicable());
        QVERIFY(!a.windowBelowFloor());
        QCOMPARE(a.windowFloor(), 0);
        QCOMPARE(a.effectiveWindowTokens(), 0);
    }

    void fullPool() {
        SizingAdvisor a;
        configure(a, 512, 512, 4, 0);
        a.setProperty("maxContext", 4001);
        QCOMPARE(a.fullFloor(), qint64(4016));                 // ceil_16(4001)
        QCOMPARE(a.effectiveFullTokens(), qint64(4 * 4016));   // automatic: R x floor
        a.setProperty("fullPoolTokens", 2048);
        QVERIFY(a.fullBelowFloor());
        QVERIFY(a.problems().contains(QStringLiteral("full KV pool too small")));
        QVERIFY2(a.refusal().startsWith(QStringLiteral("The full pool is too small")) && !a.refusal().contains(u'-'),
                 qPrintable(a.refusal()));
        a.setProperty("fullPoolTokens", 8192);
        QVERIFY(!a.fullBelowFloor());
    }

    void bytesAndDtypes() {
        SizingAdvisor a;
        configure(a, 512, 512, 4, 0);
        // K and V rows of 1 head x 256 dims: f16 = 2 x 512 bytes per layer; 15 sliding, 3 full.
        QCOMPARE(a.windowBytesPerToken(), 15.0 * 2 * 512);
        QCOMPARE(a.fullBytesPerToken(), 3.0 * 2 * 512);
        QCOMPARE(a.windowBytes(), a.windowBytesPerToken() * double(a.effectiveWindowTokens()));
        a.setProperty("kvDtype", QStringLiteral("q8_0"));
        QCOMPARE(a.windowBytesPerToken(), 15.0 * 2 * (256 / 32 * 34));
        a.setProperty("kvDtype", QStringLiteral("fp8_e4m3"));  // one byte per element
        QCOMPARE(a.windowBytesPerToken(), 15.0 * 2 * 256);
        QVERIFY(a.problems().isEmpty());
    }

    // The engine's own range check (validateEngineOptions), with or without a
    // model: before, a page size of 24 or 9999 threads passed the page.
    void optionsOutOfRangeAreTheEnginesRefusal() {
        SizingAdvisor a;
        a.setProperty("pageSize", 24);
        QVERIFY2(a.problems().contains(QStringLiteral("--page-size must be a power of two")), qPrintable(a.problems()));
        QVERIFY2(a.refusal().startsWith(QStringLiteral("Page size must be a power of two")), qPrintable(a.refusal()));
        a.setProperty("pageSize", 16);
        QVERIFY(a.problems().isEmpty());
        a.setProperty("threads", 9999);
        QVERIFY2(a.problems().startsWith(QStringLiteral("--threads must be from 0 to")), qPrintable(a.problems()));
        a.setProperty("threads", -1);
        QVERIFY(a.problems().contains(QStringLiteral("(got -1)")));
        a.setProperty("threads", 0);
        configure(a, 1024, 2048, 4, 0);
        QVERIFY(a.problems().isEmpty());
        a.setProperty("retainGap", 0);
        QVERIFY2(a.problems().startsWith(QStringLiteral("--retain-gap must be from 1")), qPrintable(a.problems()));
        QVERIFY2(a.refusal().startsWith(QStringLiteral("Release gap must be from 1")), qPrintable(a.refusal()));
    }

    void noModelNoVerdict() {
        SizingAdvisor a;
        QVERIFY(!a.hasModel());
        QVERIFY(!a.applicable());
        QVERIFY(a.problems().isEmpty());
        QVERIFY(!a.fullBelowFloor());
    }
};

QTEST_GUILESS_MAIN(SizingAdvisorTest)
#include "sizing_advisor_test.moc"
