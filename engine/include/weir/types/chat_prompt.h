#pragma once
// A chat request in OpenAI's shape (Engine::prepareChat's input) and what the
// engine makes of it: the prompt's token ids and how to run and read the reply.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/types/tool_calls.h"

namespace weir {

struct ChatPromptInput {
    // A JSON array of message objects: role ("system", "user", "assistant",
    // "tool"), content (a string), and where given tool_calls (id, type,
    // function {name, arguments as JSON text}), tool_call_id, name.
    std::string messagesJson;
    // A JSON array of OpenAI tools ({"type": "function", "function": {"name",
    // "description", "parameters"}}); empty for none.
    std::string toolsJson;
    ToolChoice toolChoice;
    // tool_choice "required" or a named function: false leaves the call's
    // opening (PreparedChat::forcedPrefix) out of the prompt, for a caller
    // that constrains the whole reply to a call itself (as JSON).
    bool openForcedCall = true;
};

struct PreparedChat {
    // The rendered conversation as token ids, ready for GenerateRequest::prompt:
    // control tokens only where the template wrote them, exactly one BOS.
    // Ends with forcedPrefix when there is one.
    std::vector<int32_t> prompt;
    // The template's end-of-turn markers and, with tools active, the tool
    // family's: add them to the client's own stop strings.
    std::vector<std::string> stop;
    bool toolsActive = false;        // read the reply with Engine::toolCallReader(toolNames)
    bool showSpecialTokens = false;  // the family's call markers are control tokens
    std::vector<std::string> toolNames;
    // tool_choice "required" or a named function: the start of a call, already
    // at the end of the prompt; push it into the reader before the reply.
    std::string forcedPrefix;
    // tool_choice "auto": where a call the model opens is written as JSON
    // {"name", "arguments"} in this model's syntax: the markers that open it
    // and the one that closes it. Use them as OutputConstraint::triggers and
    // ::close with the call's schema so that such a call is held to the
    // tools once opened. Empty when the family's calls are not that JSON.
    std::vector<std::string> callTriggers;
    std::string callClose;
};

} // namespace weir
