#pragma once
// What a maintenance call on the Engine (clear the prefix cache, resize a
// pool) came to: a code a client can act on without reading the message, and
// the message a person reads.
#include <cstdint>
#include <string>
#include <utility>

namespace weir {

enum class MaintenanceCode : uint8_t {
    Ok,            // done as asked
    Clamped,       // done in part: a pool shrunk only as far as the pages in use allow
    Refused,       // nothing changed: the request is out of range for this engine
                   // (below a pool's floor, too large, no window pool, no memory for it)
    ShuttingDown,  // nothing changed: the engine thread has ended
    Failed,        // an internal failure while doing it (an exception, counters that disagree)
};
const char* maintenanceCodeName(MaintenanceCode code);  // "ok", "clamped", ...

struct MaintenanceResult {
    MaintenanceCode code = MaintenanceCode::Ok;
    std::string message;  // empty when Ok; else why, for the log and the person who asked

    bool ok() const { return code == MaintenanceCode::Ok; }
    static MaintenanceResult done() { return {}; }
    static MaintenanceResult because(MaintenanceCode code, std::string message) { return {code, std::move(message)}; }
};

} // namespace weir
