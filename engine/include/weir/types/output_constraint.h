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
#include <cstdint>
#include <string>

namespace weir {

struct OutputConstraint {
    enum class Kind : uint8_t { None, JsonObject, JsonSchema };
    Kind kind = Kind::None;
    std::string schema;  // JsonSchema: the schema as JSON text
};

} // namespace weir
