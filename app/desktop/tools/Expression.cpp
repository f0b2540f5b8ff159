#include "tools/Expression.h"

#include <QStringList>
#include <cmath>
#include <numbers>

namespace weir::desktop {
namespace {

struct Failure {
    QString message;
};

class Parser {
public:
    explicit Parser(const QString& text) : s_(text) {}

    double parse() {
        skip();
        if (pos_ >= s_.size()) throw Failure{QStringLiteral("the expression is empty")};
        const double v = sum();
        skip();
        if (pos_ < s_.size()) throw Failure{QStringLiteral("unexpected '%1' at %2").arg(s_[pos_]).arg(pos_ + 1)};
        return v;
    }

private:
    void skip() {
        while (pos_ < s_.size() && s_[pos_].isSpace()) ++pos_;
    }
    bool eat(QChar c) {
        skip();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    double sum() {
        double v = product();
        for (;;) {
            if (eat(u'+')) v += product();
            else if (eat(u'-')) v -= product();
            else return v;
        }
    }
    double product() {
        double v = unary();
        for (;;) {
            skip();
            const qsizetype at = pos_ + 1;
            if (eat(u'*')) {
                v *= unary();
            } else if (eat(u'/')) {
                const double d = unary();
                if (d == 0) throw Failure{QStringLiteral("division by zero at %1").arg(at)};
                v /= d;
            } else if (eat(u'%')) {
                const double d = unary();
                if (d == 0) throw Failure{QStringLiteral("modulo by zero at %1").arg(at)};
                v = std::fmod(v, d);
            } else {
                return v;
            }
        }
    }
    double unary() {
        if (eat(u'-')) return -unary();
        if (eat(u'+')) return unary();
        return power();
    }
    double power() {
        const double base = primary();
        if (eat(u'^')) return std::pow(base, unary());  // right-associative: 2^3^2 = 2^9
        return base;
    }
    double primary() {
        skip();
        if (pos_ >= s_.size()) throw Failure{QStringLiteral("the expression ends too early")};
        const qsizetype start = pos_;
        if (eat(u'(')) {
            const double v = sum();
            if (!eat(u')')) throw Failure{QStringLiteral("missing ')' for the '(' at %1").arg(start + 1)};
            return v;
        }
        if (s_[pos_].isDigit() || s_[pos_] == u'.') return number();
        if (s_[pos_].isLetter()) return name();
        throw Failure{QStringLiteral("unexpected '%1' at %2").arg(s_[pos_]).arg(pos_ + 1)};
    }
    double number() {
        const qsizetype start = pos_;
        while (pos_ < s_.size() && (s_[pos_].isDigit() || s_[pos_] == u'.')) ++pos_;
        if (pos_ < s_.size() && (s_[pos_] == u'e' || s_[pos_] == u'E')) {
            qsizetype p = pos_ + 1;
            if (p < s_.size() && (s_[p] == u'+' || s_[p] == u'-')) ++p;
            if (p < s_.size() && s_[p].isDigit()) {
                pos_ = p;
                while (pos_ < s_.size() && s_[pos_].isDigit()) ++pos_;
            }
        }
        bool ok = false;
        const double v = s_.mid(start, pos_ - start).toDouble(&ok);
        if (!ok) throw Failure{QStringLiteral("'%1' at %2 is not a number").arg(s_.mid(start, pos_ - start)).arg(start + 1)};
        return v;
    }
    double name() {
        const qsizetype start = pos_;
        while (pos_ < s_.size() && (s_[pos_].isLetterOrNumber() || s_[pos_] == u'_')) ++pos_;
        const QString id = s_.mid(start, pos_ - start).toLower();
        if (id == u"pi") return std::numbers::pi;
        if (id == u"e") return std::numbers::e;
        static const QStringList functions = {"sqrt", "sin", "cos", "tan", "log", "ln", "log10", "exp", "abs"};
        if (!functions.contains(id))
            throw Failure{QStringLiteral("unknown name '%1' at %2 (functions: %3; constants: pi, e)")
                              .arg(id).arg(start + 1).arg(functions.join(u", "))};
        if (!eat(u'(')) throw Failure{QStringLiteral("'%1' at %2 needs its argument in parentheses").arg(id).arg(start + 1)};
        const double x = sum();
        if (!eat(u')')) throw Failure{QStringLiteral("missing ')' after the argument of '%1' at %2").arg(id).arg(start + 1)};
        if (id == u"sqrt") {
            if (x < 0) throw Failure{QStringLiteral("sqrt of a negative number (%1) at %2").arg(formatNumber(x)).arg(start + 1)};
            return std::sqrt(x);
        }
        if (id == u"log" || id == u"ln" || id == u"log10") {
            if (x <= 0) throw Failure{QStringLiteral("%1 of a number that is not positive (%2) at %3").arg(id, formatNumber(x)).arg(start + 1)};
            return id == u"log10" ? std::log10(x) : std::log(x);
        }
        if (id == u"sin") return std::sin(x);
        if (id == u"cos") return std::cos(x);
        if (id == u"tan") return std::tan(x);
        if (id == u"exp") return std::exp(x);
        return std::fabs(x);
    }

    QString s_;
    qsizetype pos_ = 0;
};

} // namespace

ExpressionResult evaluateExpression(const QString& text) {
    try {
        const double v = Parser(text).parse();
        if (!std::isfinite(v)) return {std::nullopt, QStringLiteral("the result is not a finite number")};
        return {v, {}};
    } catch (const Failure& f) {
        return {std::nullopt, f.message};
    }
}

QString formatNumber(double value) {
    if (value == std::floor(value) && std::fabs(value) < 1e15) return QString::number(qint64(value));
    return QString::number(value, 'g', 12);
}

} // namespace weir::desktop
