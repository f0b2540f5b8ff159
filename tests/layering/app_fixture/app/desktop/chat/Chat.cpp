// The desktop may use the server's public surface, not its own headers;
// "weir/engine.h" names a desktop file and the engine's: ambiguous.
#include "chat/Chat.h"
#include "app/server/api_server.h"
#include "app/server/http_request.h"
#include "weir/engine.h"
