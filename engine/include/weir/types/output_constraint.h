#pragma once
// What a request's output must be (structured output): free text, any JSON
// object, or JSON that validates against a JSON Schema. The engine compiles
// it into a grammar and masks every token that would break it before
// sampling; the request ends (finish reason Stop) as soon as the document is
// complete, and an end-of-generation token is allowed only then. A schema it
// cannot compile ends the request with an Error event (ErrorCode::BadRequest)
// whose message names the keyword and where it is. Supported keywords: see
// engine/grammar/json_schema_compiler.h (OpenAI's strict structured outputs
// and tool parameters: object, array, string, number, integer, boolean,
// null, enum, const, anyOf, $ref/$defs).
//
// Lazy (tool_choice "auto"): with `triggers`, the reply is free text until
// its text (control tokens' text included) writes one of them; from the byte
// after it, the text is held to at most one space or newline, a JSON
// document of `schema` (or up to 8, one per line: several calls in one
// block), at most one space or newline, and `close` (spelled
// in plain text even where the vocabulary has it as a control token); then
// the text is free again until the next trigger. Inside a call no
// end-of-generation token is allowed; the document ending does not end the
// request. A token that writes the trigger and, after it, text the call
// cannot start with leaves that call free. Served by Engine::submit only
// (ModelRunner refuses a lazy constraint).
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

struct OutputConstraint {
    enum class Kind : uint8_t { None, JsonObject, JsonSchema };
    Kind kind = Kind::None;
    std::string schema{};  // JsonSchema: the schema as JSON text
    std::vector<std::string> triggers{};  // lazy: where a held document opens (empty: from the start)
    std::string close{};                  // lazy: what ends the held part after the document
    bool lazy() const { return !triggers.empty(); }
};

} // namespace weir
