#pragma once
// The calculator's arithmetic: + - * / % ^ (right-associative power),
// parentheses, unary minus, the constants pi and e, and the functions sqrt,
// sin, cos, tan, log (natural), log10, exp, abs. A hand-written recursive
// descent parser: nothing is ever evaluated as code.
#include <QString>
#include <optional>

namespace weir::desktop {

struct ExpressionResult {
    std::optional<double> value;  // empty on error
    QString error;                // what is wrong and where ("unknown function 'foo' at 1")
};

ExpressionResult evaluateExpression(const QString& text);

// A result as people write it: integers without a fraction, others to 12
// significant digits.
QString formatNumber(double value);

} // namespace weir::desktop
