#include "tools/CalculatorTool.h"

#include <QJsonArray>

#include "tools/Expression.h"

namespace weir::desktop {

QString CalculatorTool::description() const {
    return QStringLiteral("Evaluates an arithmetic expression with + - * / % ^, parentheses, "
                          "sqrt, sin, cos, tan, log, log10, exp, abs, pi and e.");
}

QByteArray CalculatorTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"expression": {"type": "string", "description": "for example (2+3)*4"}},
               "required": ["expression"],
               "additionalProperties": false})";
}

ToolResult CalculatorTool::run(const QJsonObject& arguments) const {
    const ExpressionResult r = evaluateExpression(arguments.value(u"expression").toString());
    if (!r.value) return {false, r.error};
    return {true, formatNumber(*r.value)};
}

} // namespace weir::desktop
