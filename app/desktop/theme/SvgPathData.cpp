#include "theme/SvgPathData.h"

#include <QtMath>

#include <cmath>

namespace weir::desktop {
namespace {

class Reader {
public:
    explicit Reader(const QString& s) : s_(s) {}

    void skipSeparators() {
        while (i_ < s_.size() && (s_[i_].isSpace() || s_[i_] == QLatin1Char(','))) ++i_;
    }
    bool atEnd() { skipSeparators(); return i_ >= s_.size(); }
    bool atCommand() { skipSeparators(); return i_ < s_.size() && s_[i_].isLetter() && s_[i_] != QLatin1Char('e') && s_[i_] != QLatin1Char('E'); }
    QChar takeCommand() { return s_[i_++]; }
    qsizetype position() const { return i_; }

    // A number as SVG writes it: sign, digits, one dot, exponent; "1.5.5" is two numbers.
    bool number(qreal* out) {
        skipSeparators();
        const qsizetype start = i_;
        if (i_ < s_.size() && (s_[i_] == QLatin1Char('+') || s_[i_] == QLatin1Char('-'))) ++i_;
        bool digits = false, dot = false;
        while (i_ < s_.size()) {
            const QChar c = s_[i_];
            if (c.isDigit()) { digits = true; ++i_; }
            else if (c == QLatin1Char('.') && !dot) { dot = true; ++i_; }
            else break;
        }
        if (digits && i_ < s_.size() && (s_[i_] == QLatin1Char('e') || s_[i_] == QLatin1Char('E'))) {
            qsizetype j = i_ + 1;
            if (j < s_.size() && (s_[j] == QLatin1Char('+') || s_[j] == QLatin1Char('-'))) ++j;
            if (j < s_.size() && s_[j].isDigit()) {
                i_ = j;
                while (i_ < s_.size() && s_[i_].isDigit()) ++i_;
            }
        }
        if (!digits) { i_ = start; return false; }
        bool ok = false;
        *out = s_.mid(start, i_ - start).toDouble(&ok);
        return ok;
    }
    // Arc flags may be written without separators ("a1 1 0 0110 10").
    bool flag(bool* out) {
        skipSeparators();
        if (i_ < s_.size() && (s_[i_] == QLatin1Char('0') || s_[i_] == QLatin1Char('1'))) {
            *out = s_[i_++] == QLatin1Char('1');
            return true;
        }
        return false;
    }

private:
    const QString& s_;
    qsizetype i_ = 0;
};

// SVG's endpoint arc (F.6.5 of the SVG 1.1 spec: center parameterisation) as a
// QPainterPath::arcTo, whose angles run counter-clockwise on screen (y down).
void arcTo(QPainterPath& path, QPointF from, qreal rx, qreal ry, bool largeArc, bool sweep, QPointF to) {
    rx = std::abs(rx);
    ry = std::abs(ry);
    if (from == to) return;
    if (rx == 0 || ry == 0) { path.lineTo(to); return; }
    const qreal x1p = (from.x() - to.x()) / 2, y1p = (from.y() - to.y()) / 2;
    // Radii too small to reach: scaled up just enough (F.6.6).
    const qreal lambda = (x1p * x1p) / (rx * rx) + (y1p * y1p) / (ry * ry);
    if (lambda > 1) { rx *= std::sqrt(lambda); ry *= std::sqrt(lambda); }
    const qreal num = rx * rx * ry * ry - rx * rx * y1p * y1p - ry * ry * x1p * x1p;
    const qreal den = rx * rx * y1p * y1p + ry * ry * x1p * x1p;
    qreal coef = den > 0 ? std::sqrt(std::max<qreal>(0, num / den)) : 0;
    if (largeArc == sweep) coef = -coef;
    const qreal cxp = coef * rx * y1p / ry, cyp = -coef * ry * x1p / rx;
    const qreal cx = cxp + (from.x() + to.x()) / 2, cy = cyp + (from.y() + to.y()) / 2;
    // Angles on the unit circle, y down: positive = clockwise on screen.
    const qreal theta1 = std::atan2((y1p - cyp) / ry, (x1p - cxp) / rx);
    const qreal theta2 = std::atan2((-y1p - cyp) / ry, (-x1p - cxp) / rx);
    qreal delta = theta2 - theta1;
    if (sweep && delta < 0) delta += 2 * M_PI;
    if (!sweep && delta > 0) delta -= 2 * M_PI;
    // Qt measures counter-clockwise on screen: the signs flip.
    path.arcTo(QRectF(cx - rx, cy - ry, 2 * rx, 2 * ry), -qRadiansToDegrees(theta1), -qRadiansToDegrees(delta));
}

}  // namespace

QPainterPath parseSvgPathData(const QString& data, QString* error) {
    QPainterPath path;
    Reader in(data);
    QPointF current, subpathStart, lastControl;
    QChar command, previous;
    auto fail = [&](const QString& why) {
        if (error) *error = QStringLiteral("path data, at character %1: %2").arg(in.position()).arg(why);
        return path;
    };
    if (error) error->clear();
    while (!in.atEnd()) {
        if (in.atCommand()) {
            command = in.takeCommand();
        } else if (command.isNull()) {
            return fail(QStringLiteral("it must start with a command letter (M)"));
        } else if (command == QLatin1Char('M')) {
            command = QLatin1Char('L');  // further pairs after a move are lines
        } else if (command == QLatin1Char('m')) {
            command = QLatin1Char('l');
        } else if (command.toUpper() == QLatin1Char('Z')) {
            return fail(QStringLiteral("numbers after Z"));
        }
        const bool relative = command.isLower();
        const QPointF base = relative ? current : QPointF();
        auto point = [&](QPointF* p) {
            qreal x, y;
            if (!in.number(&x) || !in.number(&y)) return false;
            *p = base + QPointF(x, y);
            return true;
        };
        const QChar c = command.toUpper();
        QPointF p, c1, c2;
        qreal v;
        if (c == QLatin1Char('M')) {
            if (!point(&p)) return fail(QStringLiteral("M needs x y"));
            path.moveTo(p);
            current = subpathStart = p;
        } else if (c == QLatin1Char('L')) {
            if (!point(&p)) return fail(QStringLiteral("L needs x y"));
            path.lineTo(p);
            current = p;
        } else if (c == QLatin1Char('H')) {
            if (!in.number(&v)) return fail(QStringLiteral("H needs x"));
            current.setX(relative ? current.x() + v : v);
            path.lineTo(current);
        } else if (c == QLatin1Char('V')) {
            if (!in.number(&v)) return fail(QStringLiteral("V needs y"));
            current.setY(relative ? current.y() + v : v);
            path.lineTo(current);
        } else if (c == QLatin1Char('C')) {
            if (!point(&c1) || !point(&c2) || !point(&p)) return fail(QStringLiteral("C needs x1 y1 x2 y2 x y"));
            path.cubicTo(c1, c2, p);
            lastControl = c2;
            current = p;
        } else if (c == QLatin1Char('S')) {
            if (!point(&c2) || !point(&p)) return fail(QStringLiteral("S needs x2 y2 x y"));
            const bool follows = previous.toUpper() == QLatin1Char('C') || previous.toUpper() == QLatin1Char('S');
            c1 = follows ? 2 * current - lastControl : current;
            path.cubicTo(c1, c2, p);
            lastControl = c2;
            current = p;
        } else if (c == QLatin1Char('Q')) {
            if (!point(&c1) || !point(&p)) return fail(QStringLiteral("Q needs x1 y1 x y"));
            path.quadTo(c1, p);
            lastControl = c1;
            current = p;
        } else if (c == QLatin1Char('T')) {
            if (!point(&p)) return fail(QStringLiteral("T needs x y"));
            const bool follows = previous.toUpper() == QLatin1Char('Q') || previous.toUpper() == QLatin1Char('T');
            c1 = follows ? 2 * current - lastControl : current;
            path.quadTo(c1, p);
            lastControl = c1;
            current = p;
        } else if (c == QLatin1Char('A')) {
            qreal rx, ry, rotation;
            bool large, sweep;
            if (!in.number(&rx) || !in.number(&ry) || !in.number(&rotation) || !in.flag(&large) || !in.flag(&sweep) || !point(&p))
                return fail(QStringLiteral("A needs rx ry rotation large-arc-flag sweep-flag x y"));
            if (rotation != 0) {
                path.lineTo(p);
                current = p;
                previous = command;
                if (error) *error = QStringLiteral("path data: a rotated arc is drawn as a line");
                continue;
            }
            arcTo(path, current, rx, ry, large, sweep, p);
            current = p;
        } else if (c == QLatin1Char('Z')) {
            path.closeSubpath();
            current = subpathStart;
        } else {
            return fail(QStringLiteral("unknown command '%1'").arg(command));
        }
        previous = command;
    }
    return path;
}

}  // namespace weir::desktop
