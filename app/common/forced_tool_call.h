#pragma once
// tool_choice "required" or a named function, kept by constrained decoding:
// the whole reply is held to one JSON object {"name": <a tool's name>,
// "arguments": <that tool's parameters>}, whatever the model's own call
// syntax, and read back here as the call. The prompt still declares the
// tools and says a call is due; only the reply's form is ours.
#include <QByteArrayView>
#include <QJsonArray>
#include <optional>
#include <string>
#include <vector>

#include "weir/types/tool_calls.h"

namespace weir::common {

// True for the tool choices that must yield a call.
bool forcesToolCall(const ToolChoice& choice);

// Calls one "required" reply may hold when parallel calls are allowed (as
// many as a lazy call block holds): bounded, so that a small model cannot
// write calls until its budget runs out.
inline constexpr int kMaxForcedCalls = 8;

// The JSON Schema of the call: the named function's, or an anyOf over every
// tool for "required". Each tool's parameters go under $defs (its own $defs
// and $refs renamed into them), so schemas with references keep working.
// `several` (with "required"; parallel_tool_calls not false): an array of 1
// to kMaxForcedCalls such calls, as OpenAI, vLLM and llama.cpp allow one or
// more; a named function is called once.
// `tools`: OpenAI's tool list, already checked by the request parser;
// `toolsText`: the text it was read from (or empty), whose key order the
// schema keeps, so that the arguments come in the order of the tool's
// properties rather than QJsonObject's alphabetical one.
std::string forcedCallSchema(const QJsonArray& tools, const ToolChoice& choice, bool several = false,
                             QByteArrayView toolsText = {});

// The calls in a reply held to that schema (one object, or an array of
// them), each one's arguments in the order the reply wrote them; nullopt when the reply is not that (cut short by max_tokens or a
// stop string before a call was complete). An array cut short gives the
// calls complete before the cut.
std::optional<std::vector<ToolCall>> readForcedCalls(const std::string& reply);
// The one call of a reply held to a single call's schema (not `several`).
std::optional<ToolCall> readForcedCall(const std::string& reply);

} // namespace weir::common
