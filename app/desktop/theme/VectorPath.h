#pragma once
// A stroked and/or filled vector path, painted with QPainter: the app's line
// icons (SVG path data on a viewSize grid) and the pool monitor's bands and
// floor line (points in item coordinates).
//
// Why not QtQuick.Shapes: with the software scene graph (offscreen, VMs without
// OpenGL) Qt 6.4's Shape renderer crashed in updatePaintNode when shapes were
// created and dropped while the window resized (CI, app_main_window_test).
// A painted item behaves the same on every scene-graph backend.
#include <QColor>
#include <QPainterPath>
#include <QQuickPaintedItem>
#include <QVariant>
#include <QtQml/qqmlregistration.h>

namespace weir::desktop {

class VectorPath : public QQuickPaintedItem {
    Q_OBJECT
    QML_ELEMENT
    // SVG path data; used when `points` is empty.
    Q_PROPERTY(QString pathData READ pathData WRITE setPathData NOTIFY shapeChanged)
    // A polyline (QPolygonF or a list of points); closed and filled when fillColor is set.
    Q_PROPERTY(QVariant points READ points WRITE setPoints NOTIFY shapeChanged)
    // >0: the path's coordinates span viewSize x viewSize, scaled to the item; 0: item coordinates.
    Q_PROPERTY(qreal viewSize READ viewSize WRITE setViewSize NOTIFY shapeChanged)
    Q_PROPERTY(QColor strokeColor READ strokeColor WRITE setStrokeColor NOTIFY styleChanged)
    Q_PROPERTY(QColor fillColor READ fillColor WRITE setFillColor NOTIFY styleChanged)
    // In path units when viewSize > 0, else in pixels.
    Q_PROPERTY(qreal strokeWidth READ strokeWidth WRITE setStrokeWidth NOTIFY styleChanged)
    // Dash and gap lengths in stroke widths; empty = solid.
    Q_PROPERTY(QList<qreal> dashPattern READ dashPattern WRITE setDashPattern NOTIFY styleChanged)
    // Why a path did not parse; empty when it did.
    Q_PROPERTY(QString error READ error NOTIFY shapeChanged)

public:
    explicit VectorPath(QQuickItem* parent = nullptr);

    QString pathData() const { return pathData_; }
    void setPathData(const QString& data);
    QVariant points() const { return points_; }
    void setPoints(const QVariant& points);
    qreal viewSize() const { return viewSize_; }
    void setViewSize(qreal size);
    QColor strokeColor() const { return strokeColor_; }
    void setStrokeColor(const QColor& c);
    QColor fillColor() const { return fillColor_; }
    void setFillColor(const QColor& c);
    qreal strokeWidth() const { return strokeWidth_; }
    void setStrokeWidth(qreal w);
    QList<qreal> dashPattern() const { return dashPattern_; }
    void setDashPattern(const QList<qreal>& pattern);
    QString error() const { return error_; }

    // The path in its own coordinates, as painted (before the view scaling).
    QPainterPath path() const { return path_; }

    void paint(QPainter* painter) override;

signals:
    void shapeChanged();
    void styleChanged();

private:
    void rebuild();

    QString pathData_;
    QVariant points_;
    qreal viewSize_ = 0;
    QColor strokeColor_ = Qt::black;
    QColor fillColor_ = Qt::transparent;
    qreal strokeWidth_ = 1;
    QList<qreal> dashPattern_;
    QString error_;
    QPainterPath path_;
};

}  // namespace weir::desktop
