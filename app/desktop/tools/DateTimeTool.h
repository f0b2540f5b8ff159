#pragma once
// current_datetime: the date and time now, in the system's time zone or an
// IANA one the model names ("Europe/Paris").
#include "tools/Tool.h"

namespace weir::desktop {

class DateTimeTool final : public Tool {
public:
    QString name() const override { return QStringLiteral("current_datetime"); }
    QString description() const override;
    QByteArray parametersJson() const override;
    ToolResult run(const QJsonObject& arguments) const override;
};

} // namespace weir::desktop
