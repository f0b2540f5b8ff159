// VectorPath and the SVG path data it draws (the app's icons and the pool
// monitor's chart): the path parser against hand-computed geometry, and the
// painted pixels of a stroke, a fill, a polyline and a dashed line.
#include <QImage>
#include <QPainter>
#include <QPolygonF>
#include <QSignalSpy>
#include <QTest>

#include "app/desktop/theme/SvgPathData.h"
#include "app/desktop/theme/VectorPath.h"

using weir::desktop::parseSvgPathData;
using weir::desktop::VectorPath;

namespace {

bool near(QPointF a, QPointF b, qreal tolerance = 1e-6) {
    return std::abs(a.x() - b.x()) <= tolerance && std::abs(a.y() - b.y()) <= tolerance;
}

QImage render(VectorPath& item, int w, int h) {
    item.setSize(QSizeF(w, h));
    QImage image(w, h, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    item.paint(&painter);
    return image;
}

int alphaAt(const QImage& image, int x, int y) { return qAlpha(image.pixel(x, y)); }

}  // namespace

class VectorPathTest : public QObject {
    Q_OBJECT
private slots:
    void linesAndRelativeCommands() {
        QString error;
        const QPainterPath p = parseSvgPathData(QStringLiteral("M12 5 V19 M5 12 H19 m1,1 l2 -3 h1 v-2 z"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(p.elementCount(), 9);
        QVERIFY(near(p.elementAt(1), QPointF(12, 19)));
        QVERIFY(near(p.elementAt(3), QPointF(19, 12)));
        QVERIFY(near(p.elementAt(4), QPointF(20, 13)));  // m is relative to the last point
        QVERIFY(near(p.elementAt(5), QPointF(22, 10)));
        QVERIFY(near(p.elementAt(6), QPointF(23, 10)));
        QVERIFY(near(p.elementAt(7), QPointF(23, 8)));
        QVERIFY(near(p.elementAt(8), QPointF(20, 13)));  // z closes back to the subpath start
    }

    void implicitLinesAndCompactNumbers() {
        // Pairs after M are lines; "-3-4" and ".5.5" are two numbers each.
        const QPainterPath p = parseSvgPathData(QStringLiteral("M1 2 3 4-3-4L.5.5"));
        QCOMPARE(p.elementCount(), 4);
        QVERIFY(near(p.elementAt(1), QPointF(3, 4)));
        QVERIFY(near(p.elementAt(2), QPointF(-3, -4)));
        QVERIFY(near(p.elementAt(3), QPointF(0.5, 0.5)));
    }

    void curvesAndReflectedControlPoints() {
        const QPainterPath p = parseSvgPathData(QStringLiteral("M3 9 Q7.5 5 12 9 T21 9"));
        // Q and T: each quad becomes a cubic (3 elements) in a QPainterPath.
        QCOMPARE(p.elementCount(), 7);
        QVERIFY(near(p.elementAt(3), QPointF(12, 9)));
        QVERIFY(near(p.elementAt(6), QPointF(21, 9)));
        // T reflects the control point (7.5,5) about (12,9) to (16.5,13): the
        // curve dips below the line y=9 between 12 and 21.
        QVERIFY(p.pointAtPercent(0.75).y() > 9.5);
        QVERIFY(p.pointAtPercent(0.25).y() < 8.5);
    }

    void arcsFollowTheSvgFlags() {
        // A circle of radius 6 around (10.5,10.5) as two half arcs (the search icon).
        const QPainterPath circle = parseSvgPathData(QStringLiteral("M16.5 10.5 A6 6 0 1 1 4.5 10.5 A6 6 0 1 1 16.5 10.5"));
        const QRectF box = circle.boundingRect();
        QVERIFY2(near(box.topLeft(), QPointF(4.5, 4.5), 0.05) && near(box.bottomRight(), QPointF(16.5, 16.5), 0.05),
                 qPrintable(QStringLiteral("bounds %1,%2 %3x%4").arg(box.x()).arg(box.y()).arg(box.width()).arg(box.height())));
        for (qreal t = 0; t <= 1.0; t += 0.05) {
            const QPointF q = circle.pointAtPercent(t);
            QVERIFY(std::abs(std::hypot(q.x() - 10.5, q.y() - 10.5) - 6) < 0.05);
        }
        // Sweep flag 1 goes clockwise on screen: from the right point, through the bottom.
        const QPainterPath clockwise = parseSvgPathData(QStringLiteral("M16.5 10.5 A6 6 0 0 1 4.5 10.5"));
        QVERIFY(clockwise.pointAtPercent(0.5).y() > 16);
        const QPainterPath counter = parseSvgPathData(QStringLiteral("M16.5 10.5 A6 6 0 0 0 4.5 10.5"));
        QVERIFY(counter.pointAtPercent(0.5).y() < 5);
        // Large-arc: a quarter (small) against three quarters (large) of the same circle.
        const QPainterPath small = parseSvgPathData(QStringLiteral("M10 0 A10 10 0 0 1 20 10"));
        const QPainterPath large = parseSvgPathData(QStringLiteral("M10 0 A10 10 0 1 0 20 10"));
        QVERIFY(std::abs(small.length() - M_PI * 10 / 2) < 0.2);
        QVERIFY(std::abs(large.length() - M_PI * 10 * 1.5) < 0.5);
        // Radii too small to reach the end point are scaled up: a half circle.
        const QPainterPath scaled = parseSvgPathData(QStringLiteral("M0 0 A1 1 0 0 1 10 0"));
        QVERIFY(near(scaled.currentPosition(), QPointF(10, 0), 1e-3));
        QVERIFY(std::abs(scaled.boundingRect().height() - 5) < 0.05);
    }

    void malformedDataIsNamed() {
        QString error;
        QPainterPath p = parseSvgPathData(QStringLiteral("12 5"), &error);
        QVERIFY(error.contains(QStringLiteral("command letter")));
        p = parseSvgPathData(QStringLiteral("M1 1 L2"), &error);
        QVERIFY2(error.contains(QStringLiteral("L needs x y")), qPrintable(error));
        QCOMPARE(p.elementCount(), 1);  // what parsed before the fault
        parseSvgPathData(QStringLiteral("M1 1 K2 2"), &error);
        QVERIFY(error.contains(QStringLiteral("unknown command 'K'")));
        parseSvgPathData(QStringLiteral("M1 1 A1 1 0 2 0 3 3"), &error);
        QVERIFY(error.contains(QStringLiteral("large-arc-flag")));
        VectorPath item;
        item.setPathData(QStringLiteral("M1 1 L"));
        QVERIFY(!item.error().isEmpty());
        item.setPathData(QStringLiteral("M1 1 L2 2"));
        QVERIFY(item.error().isEmpty());
    }

    void strokesAreScaledFromTheViewGrid() {
        // The "check" icon on a 24 grid painted at 48 px: ink on the stroke, none off it.
        VectorPath item;
        item.setViewSize(24);
        item.setPathData(QStringLiteral("M5 12.5 L10 17 L19 7"));
        item.setStrokeColor(Qt::red);
        item.setStrokeWidth(2);
        const QImage image = render(item, 48, 48);
        QVERIFY(alphaAt(image, 20, 34) > 200);   // (10,17) x2
        QVERIFY(alphaAt(image, 38, 14) > 200);   // (19,7) x2
        QVERIFY(alphaAt(image, 4, 4) == 0);
        QVERIFY(alphaAt(image, 40, 40) == 0);
        QCOMPARE(QColor(image.pixel(20, 34)).red(), 255);
    }

    void fillsAndPolylines() {
        VectorPath item;
        item.setViewSize(24);
        item.setPathData(QStringLiteral("M7 7 H17 V17 H7 Z"));  // "stop": filled
        item.setStrokeColor(Qt::transparent);
        item.setFillColor(Qt::blue);
        QImage image = render(item, 24, 24);
        QCOMPARE(alphaAt(image, 12, 12), 255);
        QCOMPARE(alphaAt(image, 3, 3), 0);

        // A chart band in item coordinates, given as a QPolygonF like PoolStatusModel::band.
        VectorPath band;
        band.setFillColor(Qt::green);
        band.setStrokeColor(Qt::transparent);
        QSignalSpy changed(&band, &VectorPath::shapeChanged);
        band.setPoints(QVariant::fromValue(QPolygonF({{0, 50}, {100, 20}, {100, 100}, {0, 100}})));
        QCOMPARE(changed.count(), 1);
        image = render(band, 100, 100);
        QCOMPARE(alphaAt(image, 50, 80), 255);   // below the top edge: inside
        QCOMPARE(alphaAt(image, 10, 20), 0);     // above it: outside
        // The same points as a QML list of point values.
        VectorPath list;
        list.setFillColor(Qt::green);
        list.setPoints(QVariantList{QPointF(0, 50), QPointF(100, 20), QPointF(100, 100), QPointF(0, 100)});
        QCOMPARE(alphaAt(render(list, 100, 100), 50, 80), 255);
    }

    void dashedLinesHaveGaps() {
        VectorPath line;
        line.setStrokeColor(Qt::black);
        line.setStrokeWidth(2);
        line.setPoints(QVariantList{QPointF(0, 5), QPointF(100, 5)});
        QImage image = render(line, 100, 10);
        int inked = 0;
        for (int x = 0; x < 100; ++x) inked += alphaAt(image, x, 5) > 128;
        QVERIFY(inked >= 98);
        line.setDashPattern({4, 3});  // 8 px on, 6 px off
        image = render(line, 100, 10);
        inked = 0;
        for (int x = 0; x < 100; ++x) inked += alphaAt(image, x, 5) > 128;
        QVERIFY2(inked > 45 && inked < 70, qPrintable(QString::number(inked)));
    }
};

QTEST_MAIN(VectorPathTest)
#include "vector_path_test.moc"
