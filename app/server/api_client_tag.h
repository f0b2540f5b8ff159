#pragma once
// The ClientTag kind the HTTP server puts on its requests (id: the server's
// own request key), so a host that shares its engine (the desktop app) can
// tell API requests from its own in the engine's status.
#include <cstdint>

namespace weir::server {

inline constexpr uint32_t kApiRequestTagKind = 2;

} // namespace weir::server
