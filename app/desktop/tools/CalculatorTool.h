#pragma once
// calculator: evaluates an arithmetic expression (tools/Expression.h).
#include "tools/Tool.h"

namespace weir::desktop {

class CalculatorTool final : public Tool {
public:
    QString name() const override { return QStringLiteral("calculator"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    ToolResult run(const QJsonObject& arguments) const override;
};

} // namespace weir::desktop
