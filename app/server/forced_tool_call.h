#pragma once
// tool_choice "required" or a named function, kept by constrained decoding:
// the whole reply is held to one JSON object {"name": <a tool's name>,
// "arguments": <that tool's parameters>}, whatever the model's own call
// syntax, and read back here as the call. The prompt still declares the
// tools and says a call is due; only the reply's form is ours.
#include <QJsonArray>
#include <optional>
#include <string>

#include "weir/types/tool_calls.h"

namespace weir::server {

// True for the tool choices that must yield a call.
bool forcesToolCall(const ToolChoice& choice);

// The JSON Schema of the call: the named function's, or an anyOf over every
// tool for "required". Each tool's parameters go under $defs (its own $defs
// and $refs renamed into them), so schemas with references keep working.
// `tools`: OpenAI's tool list, already checked by the request parser.
std::string forcedCallSchema(const QJsonArray& tools, const ToolChoice& choice);

// The call in a reply held to that schema; nullopt when the reply is not one
// (cut short by max_tokens or a stop string).
std::optional<ToolCall> readForcedCall(const std::string& reply);

} // namespace weir::server
