#include "weir/types/maintenance_result.h"

namespace weir {

const char* maintenanceCodeName(MaintenanceCode code) {
    switch (code) {
    case MaintenanceCode::Ok: return "ok";
    case MaintenanceCode::Clamped: return "clamped";
    case MaintenanceCode::Refused: return "refused";
    case MaintenanceCode::ShuttingDown: return "shutting_down";
    case MaintenanceCode::Failed: return "failed";
    }
    return "unknown";
}

} // namespace weir
