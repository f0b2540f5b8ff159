#pragma once
// The ClientTag kinds the app's programs put on engine requests, listed in one
// place so that no two collide: a host that shares its engine (the desktop
// app runs the HTTP server on its own engine) tells its requests apart by them
// in the engine's status.
#include <cstdint>

namespace weir::common {

// The desktop's conversations; id: the conversation's id.
inline constexpr uint32_t kConversationTagKind = 1;
// The HTTP server's requests; id: the server's own request key.
inline constexpr uint32_t kApiRequestTagKind = 2;

} // namespace weir::common
