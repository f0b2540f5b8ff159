#pragma once
// Reads tool calls out of a chat reply as it streams (made by
// Engine::toolCallReader for the model's tool convention). Text passes at once
// until a call may be starting; from there it is held until the call is
// complete and comes out as a ToolCall. A call that does not read (bad syntax,
// a function not offered) comes back as the plain text it was.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/types/tool_calls.h"

namespace weir {

class ToolCallParser;

class ToolCallReader {
public:
    struct Output {
        std::string text;             // plain text to show now
        std::vector<ToolCall> calls;  // calls completed by this delta (ids empty)
    };

    explicit ToolCallReader(std::unique_ptr<ToolCallParser> parser);  // made by the Engine
    ~ToolCallReader();
    ToolCallReader(const ToolCallReader&) = delete;
    ToolCallReader& operator=(const ToolCallReader&) = delete;

    Output push(std::string_view delta);
    // End of generation: whatever is held back, as calls or text.
    Output finish();
    // The reply's calls are complete and nothing after them belongs to it:
    // the caller may stop generating.
    bool done() const;

private:
    std::unique_ptr<ToolCallParser> parser_;
};

} // namespace weir
