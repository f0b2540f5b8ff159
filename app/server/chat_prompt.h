#pragma once
// A parsed chat request turned into what the engine needs: the prompt text
// (the model's template, tools in the family's convention), the stop strings
// (the client's, the template's end-of-turn markers, the tool-response
// markers), and whether a tool-call parser should read the reply.
#include <string>
#include <vector>

#include "app/server/api_error.h"
#include "app/server/request_parser.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/tool_format.h"

namespace weir::server {

struct ChatPrompt {
    // The prompt with the client's text marked untrusted: tokenize it with
    // Engine::tokenizeRendered, so no message can write a control token.
    MarkedText prompt;
    std::vector<std::string> stop;
    bool toolsActive = false;               // parse the reply for tool calls
    bool showSpecialTokens = false;         // the family's call markers are control tokens
    std::vector<std::string> toolNames;
    // tool_choice "required"/named: the start of a call, already at the end
    // of `prompt`; feed it to the parser before the generated text.
    std::string forcedPrefix;
};

// False with a 400 error (param "messages" or "tools") when the template
// rejects the conversation.
bool buildChatPrompt(const ChatRequest& request, const ChatTemplate& chat, const ToolFormat& tools,
                     ChatPrompt& out, ApiError& error);

} // namespace weir::server
