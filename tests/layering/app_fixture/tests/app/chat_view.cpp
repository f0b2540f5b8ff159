// The desktop's tests follow its rule (and its include root).
#include "chat/Chat.h"
#include "app/server/http_request.h"
