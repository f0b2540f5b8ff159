#pragma once
// The HTTP answer to an Engine maintenance call (/v1/cache/clear): the status
// comes from MaintenanceResult's code alone, never from its message.
#include "app/server/api_error.h"
#include "weir/types/maintenance_result.h"

namespace weir::server {

// 200 for Ok; Clamped 409 (done only in part: the pool's pages in use
// conflict with the request); Refused 400 (out of range for this engine);
// ShuttingDown 503; Failed 500.
int httpStatusFor(MaintenanceCode code);

// The error a result other than Ok goes out as: that status, the message, and
// the code's name as the error code ("refused", "failed", ...).
ApiError maintenanceError(const MaintenanceResult& result);

} // namespace weir::server
