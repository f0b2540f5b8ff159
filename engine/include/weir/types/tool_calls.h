#pragma once
// Tool calling as the OpenAI API has it: a call the model made, and the
// client's tool_choice. Plain values shared by the engine and its clients.
#include <string>

namespace weir {

struct ToolCall {
    std::string id;         // left empty by the engine; the API layer names calls
    std::string name;
    std::string arguments;  // a JSON object, as text
};

struct ToolChoice {
    enum class Mode { Auto, None, Required, Function };
    Mode mode = Mode::Auto;
    std::string function;   // Mode::Function: the one function to call
};

} // namespace weir
