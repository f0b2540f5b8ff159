// weir::ToolCallReader: the public face of the engine's ToolCallParser.
#include "weir/tool_calls.h"

#include "engine/chat/tool_call_parser.h"

namespace weir {

namespace {
ToolCallReader::Output publicOutput(ToolCallParser::Output out) {
    return {std::move(out.text), std::move(out.calls)};
}
} // namespace

ToolCallReader::ToolCallReader(std::unique_ptr<ToolCallParser> parser) : parser_(std::move(parser)) {}
ToolCallReader::~ToolCallReader() = default;

ToolCallReader::Output ToolCallReader::push(std::string_view delta) { return publicOutput(parser_->push(delta)); }
ToolCallReader::Output ToolCallReader::finish() { return publicOutput(parser_->finish()); }
bool ToolCallReader::done() const { return parser_->done(); }

} // namespace weir
