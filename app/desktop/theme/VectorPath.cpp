#include "theme/VectorPath.h"

#include <QPainter>
#include <QPen>
#include <QPolygonF>

#include "theme/SvgPathData.h"

namespace weir::desktop {
namespace {

QPolygonF toPolygon(const QVariant& v) {
    if (v.canConvert<QPolygonF>() && v.metaType() == QMetaType::fromType<QPolygonF>()) return v.value<QPolygonF>();
    QPolygonF polygon;
    const QVariantList list = v.toList();
    for (const QVariant& p : list) polygon << p.toPointF();
    return polygon;
}

}  // namespace

VectorPath::VectorPath(QQuickItem* parent) : QQuickPaintedItem(parent) {
    setAntialiasing(true);
    connect(this, &VectorPath::shapeChanged, this, [this] { update(); });
    connect(this, &VectorPath::styleChanged, this, [this] { update(); });
}

void VectorPath::setPathData(const QString& data) {
    if (data == pathData_) return;
    pathData_ = data;
    rebuild();
}

void VectorPath::setPoints(const QVariant& points) {
    points_ = points;
    rebuild();
}

void VectorPath::setViewSize(qreal size) {
    if (size == viewSize_) return;
    viewSize_ = size;
    emit shapeChanged();
}

void VectorPath::setStrokeColor(const QColor& c) {
    if (c == strokeColor_) return;
    strokeColor_ = c;
    emit styleChanged();
}

void VectorPath::setFillColor(const QColor& c) {
    if (c == fillColor_) return;
    fillColor_ = c;
    emit styleChanged();
}

void VectorPath::setStrokeWidth(qreal w) {
    if (w == strokeWidth_) return;
    strokeWidth_ = w;
    emit styleChanged();
}

void VectorPath::setDashPattern(const QList<qreal>& pattern) {
    if (pattern == dashPattern_) return;
    dashPattern_ = pattern;
    emit styleChanged();
}

void VectorPath::rebuild() {
    const QPolygonF polygon = toPolygon(points_);
    QString error;
    if (!polygon.isEmpty()) {
        path_ = QPainterPath();
        path_.addPolygon(polygon);
    } else {
        path_ = parseSvgPathData(pathData_, &error);
    }
    error_ = error;
    emit shapeChanged();
}

void VectorPath::paint(QPainter* painter) {
    if (path_.isEmpty()) return;
    painter->setRenderHint(QPainter::Antialiasing, true);
    if (viewSize_ > 0) painter->scale(width() / viewSize_, height() / viewSize_);
    if (fillColor_.alpha() > 0) painter->fillPath(path_, fillColor_);
    if (strokeColor_.alpha() > 0 && strokeWidth_ > 0) {
        QPen pen(strokeColor_, strokeWidth_, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
        if (!dashPattern_.isEmpty()) {
            pen.setCapStyle(Qt::FlatCap);
            pen.setDashPattern(dashPattern_);
        }
        painter->strokePath(path_, pen);
    }
}

}  // namespace weir::desktop
