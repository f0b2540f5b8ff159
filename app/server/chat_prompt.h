#pragma once
// A parsed chat request turned into what the engine runs, through
// Engine::prepareChat: the prompt's token ids (the model's template, tools in
// the family's convention, control tokens only from the template), the stop
// strings (the client's, then the template's end-of-turn markers and the
// tool-response markers), and whether a tool-call reader should read the reply.
#include "app/server/api_error.h"
#include "app/server/request_parser.h"
#include "weir/engine.h"

namespace weir::server {

// False with a 400 error (param "messages") when the template rejects the
// conversation.
bool buildChatPrompt(const ChatRequest& request, const Engine& engine, PreparedChat& out, ApiError& error);

} // namespace weir::server
