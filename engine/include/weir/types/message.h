#pragma once
// One turn of a conversation as a client hands it to Engine::renderChat /
// tokenizeChat.
#include <string>

namespace weir {

struct Message {
    std::string role;        // "system", "user", "assistant", "tool"
    std::string content;
    // Further fields of the message as a JSON object, or empty for none:
    // "tool_calls" (a list of {"id", "type": "function", "function": {"name",
    // "arguments"}}), "tool_call_id", "name", "reasoning_content".
    std::string fieldsJson;
};

} // namespace weir
