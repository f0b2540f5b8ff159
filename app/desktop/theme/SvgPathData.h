#pragma once
// SVG path data ("M12 5 V19 A6 6 0 1 1 4.5 10.5 Z ...") as a QPainterPath.
// Covers the whole command set of the SVG 1.1 path grammar (M L H V C S Q T A Z,
// absolute and relative). Arcs are supported without x-axis rotation, which is
// all the app's icons use; a rotated arc is drawn as a straight line and named
// in the error. On malformed data the path up to the fault is returned and
// `error` (when given) says where parsing stopped.
#include <QPainterPath>
#include <QString>

namespace weir::desktop {

QPainterPath parseSvgPathData(const QString& data, QString* error = nullptr);

}  // namespace weir::desktop
