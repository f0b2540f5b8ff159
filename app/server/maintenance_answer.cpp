#include "app/server/maintenance_answer.h"

namespace weir::server {

int httpStatusFor(MaintenanceCode code) {
    switch (code) {
    case MaintenanceCode::Ok: return 200;
    case MaintenanceCode::Clamped: return 409;
    case MaintenanceCode::Refused: return 400;
    case MaintenanceCode::ShuttingDown: return 503;
    case MaintenanceCode::Failed: return 500;
    }
    return 500;  // a code added later without a mapping is the server's fault
}

ApiError maintenanceError(const MaintenanceResult& result) {
    ApiError e;
    e.status = httpStatusFor(result.code);
    e.type = e.status >= 500 ? QStringLiteral("server_error") : QStringLiteral("invalid_request_error");
    e.code = QString::fromLatin1(maintenanceCodeName(result.code));
    e.message = QString::fromStdString(result.message);
    return e;
}

} // namespace weir::server
