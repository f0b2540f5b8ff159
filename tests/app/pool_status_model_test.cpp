// The pool monitor's model: a minute of history, chart polygons scaled into
// the plot, current values and counters, per-request rows, and the pressure
// banner (preemptions, refusals, nearly full pools, integrity violations).
#include <QSignalSpy>
#include <cmath>
#include <QTest>

#include "engine_host/ClientTags.h"
#include "monitor/PoolStatusModel.h"

using namespace weir::desktop;

namespace {
weir::CacheStatus status(int64_t fullOwned, int64_t fullCached, int64_t windowOwned, int64_t windowCached) {
    weir::CacheStatus s;
    s.full.kind = weir::PoolKind::Full;
    s.window.kind = weir::PoolKind::Window;
    s.full.capacityTokens = 1000;
    s.window.capacityTokens = 400;
    s.full.ownedTokens = fullOwned;
    s.full.cachedTokens = fullCached;
    s.full.freeTokens = 1000 - fullOwned - fullCached;
    s.window.ownedTokens = windowOwned;
    s.window.cachedTokens = windowCached;
    s.window.freeTokens = 400 - windowOwned - windowCached;
    s.window.floorTokens = 300;
    return s;
}
} // namespace

class PoolStatusModelTest : public QObject {
    Q_OBJECT
private slots:
    // An idle engine repeats one snapshot: views are told only when a level
    // or a number changes, so an idle monitor draws nothing, even while a
    // change is still in the chart's minute (it stood still only once the
    // change had scrolled out, four redraws a second until then).
    void repeatedSnapshotsDoNotRedraw() {
        PoolStatusModel m;
        QSignalSpy updated(&m, &PoolStatusModel::updated);
        m.addSnapshot(status(0, 100, 0, 0), 0.0);
        QCOMPARE(updated.count(), 1);
        for (int i = 1; i <= 40; ++i) m.addSnapshot(status(0, 100, 0, 0), i * 0.25);
        QCOMPARE(updated.count(), 1);
        QCOMPARE(m.sampleCount(), 41);  // the history still moves on

        // A change is drawn, and so is the return to the earlier level; the
        // flat minute after it is not.
        m.addSnapshot(status(50, 100, 10, 0), 10.25);
        QCOMPARE(updated.count(), 2);
        m.addSnapshot(status(0, 100, 0, 0), 10.5);
        QCOMPARE(updated.count(), 3);
        for (double t = 10.75; t <= 80; t += 0.25) m.addSnapshot(status(0, 100, 0, 0), t);
        QCOMPARE(updated.count(), 3);

        // The next change scrolls the chart to the present: its right edge
        // is the new sample, the flat samples between are in it.
        m.addSnapshot(status(0, 200, 0, 0), 81);
        QCOMPARE(updated.count(), 4);
        const QPolygonF cached = m.line(QStringLiteral("full"), 2, 600, 100);
        QCOMPARE(cached.last().x(), 600.0);
        QVERIFY(std::abs(cached.last().y() - 80) < 0.01);  // 20% of the pool (a float fraction)
        QVERIFY(cached.size() > 200);

        // A request running is always news.
        auto busy = status(0, 200, 0, 0);
        busy.running = 1;
        m.addSnapshot(busy, 82);
        QCOMPARE(updated.count(), 5);
    }

    void currentValuesAndCounters() {
        PoolStatusModel m;
        auto s = status(250, 100, 200, 0);
        s.preemptions = 0;
        s.prefixHitTokens = 1234;
        s.running = 2;
        s.waiting = 1;
        weir::RequestStatus r;
        r.id = 5;
        r.tag = conversationTag(12);
        r.state = weir::RequestState::Decode;
        r.fullTokens = 250;
        r.windowTokens = 100;
        s.requests.push_back(r);
        QSignalSpy updated(&m, &PoolStatusModel::updated);
        m.addSnapshot(s, 0.0);
        QCOMPARE(updated.count(), 1);
        QCOMPARE(m.full().value("used").toLongLong(), 250);
        QCOMPARE(m.full().value("usedFraction").toDouble(), 0.25);
        QCOMPARE(m.window().value("floor").toLongLong(), 300);
        QCOMPARE(m.counters().value("prefixHitTokens").toULongLong(), 1234u);
        QCOMPARE(m.counters().value("waiting").toInt(), 1);
        QCOMPARE(m.requests()->rowCount(), 1);
        const auto idx = m.requests()->index(0);
        QCOMPARE(m.requests()->data(idx, RequestUsageModel::ConversationIdRole).toLongLong(), 12);
        QCOMPARE(m.requests()->data(idx, RequestUsageModel::FullShareRole).toDouble(), 0.25);
        QCOMPARE(m.requests()->data(idx, RequestUsageModel::WindowShareRole).toDouble(), 0.25);
    }

    void chartPolygons() {
        PoolStatusModel m;
        m.addSnapshot(status(0, 0, 0, 0), 0.0);
        m.addSnapshot(status(500, 250, 0, 0), 30.0);
        m.addSnapshot(status(1000, 0, 0, 0), 60.0);
        // In-use line of the full pool in a 600 x 100 box: time 0..60 s maps to x 0..600.
        const QPolygonF used = m.line(QStringLiteral("full"), 1, 600, 100);
        QCOMPARE(used.size(), 3);
        QCOMPARE(used[0], QPointF(0, 100));
        QCOMPARE(used[1], QPointF(300, 50));
        QCOMPARE(used[2], QPointF(600, 0));
        const QPolygonF top = m.line(QStringLiteral("full"), 2, 600, 100);
        QCOMPARE(top[1], QPointF(300, 25));  // in use + cached = 75%
        // The cached band: the top edge forward, the in-use edge back, closed.
        const QPolygonF band = m.band(QStringLiteral("full"), 1, 2, 600, 100);
        QCOMPARE(band.size(), 7);
        QCOMPARE(band.first(), band.last());
        QCOMPARE(band[3], used[2]);
        QCOMPARE(band[4], used[1]);

        // Samples older than a minute drop out (one is kept for the left edge).
        // (samples at 30 and 60 s stay: 60 is inside the minute, 30 draws its left edge).
        m.addSnapshot(status(0, 0, 0, 0), 100.0);
        QCOMPARE(m.sampleCount(), 3);
        QCOMPARE(m.line(QStringLiteral("full"), 1, 600, 100).first().x(), 0.0);  // clamped to the left edge
        QVERIFY(m.updatesPerSecond() > 0);
    }

    void chartZoomsAndStretches() {
        PoolStatusModel m;
        QCOMPARE(m.viewSeconds(), 10.0);  // nothing yet: the shortest span
        m.addSnapshot(status(0, 0, 0, 0), 0.0);
        m.addSnapshot(status(20, 10, 0, 0), 4.0);  // full pool: 30 of 1000 tokens (3%)
        QCOMPARE(m.viewSeconds(), 10.0);            // 4 s of history still spans 10 s
        m.addSnapshot(status(30, 0, 0, 0), 20.0);
        QCOMPARE(m.viewSeconds(), 20.0);            // then the history itself, up to a minute
        // 30 of 1000 tokens at most: the chart tops out at 50 tokens (30 < 80% of 50), 1/20 of the pool.
        QCOMPARE(m.viewTop(QStringLiteral("full")), 0.05);
        const QPolygonF used = m.line(QStringLiteral("full"), 1, 200, 100, 0.05);
        QCOMPARE(used[2].x(), 200.0);
        QVERIFY(std::fabs(used[2].y() - 40.0) < 1e-3);  // 3% of a chart topping out at 5%
        QCOMPARE(used[1].x(), 40.0);  // 4 s of a 20 s span
        // The window pool (400 tokens) was never used: the deepest zoom, 1% of it
        // rounded up to a round number of tokens (4 -> 5).
        QCOMPARE(m.viewTop(QStringLiteral("window")), 5.0 / 400.0);
        // A busy pool is shown whole.
        m.addSnapshot(status(900, 0, 0, 0), 21.0);
        QCOMPARE(m.viewTop(QStringLiteral("full")), 1.0);
        QCOMPARE(m.line(QStringLiteral("full"), 1, 200, 100, 0.05).last().y(), 0.0);  // clamped at the top
    }

    void pressureBanner() {
        PoolStatusModel m;
        QSignalSpy changed(&m, &PoolStatusModel::pressureChanged);
        m.addSnapshot(status(100, 0, 100, 0), 0.0);
        QVERIFY(m.pressure().isEmpty());

        auto s = status(100, 0, 380, 0);  // window 95% used, little cached
        m.addSnapshot(s, 1.0);
        QVERIFY(m.pressure().contains(QStringLiteral("window pool is nearly full")));
        QVERIFY(!m.pressureIsError());

        s.preemptions = 2;
        m.addSnapshot(s, 2.0);
        QVERIFY(m.pressure().contains(QStringLiteral("2 requests preempted")));

        m.dismissPressure();
        QVERIFY(m.pressure().isEmpty());
        m.addSnapshot(s, 3.0);
        QVERIFY(m.pressure().isEmpty());  // dismissed until it goes away

        // Old preemptions age out; a violation is an error.
        auto calm = status(100, 0, 100, 0);
        calm.preemptions = 2;
        m.addSnapshot(calm, 30.0);
        m.addSnapshot(calm, 31.0);
        QVERIFY(m.pressure().isEmpty());
        calm.violations = 1;
        calm.violationDetails = {"window page 17 owned twice"};
        m.addSnapshot(calm, 32.0);
        QVERIFY(m.pressureIsError());
        QVERIFY(m.pressure().contains(QStringLiteral("window page 17 owned twice")));
        QVERIFY(changed.count() >= 4);
    }
};

QTEST_GUILESS_MAIN(PoolStatusModelTest)
#include "pool_status_model_test.moc"
