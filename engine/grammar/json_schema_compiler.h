#pragma once
// JSON Schema -> Grammar, for structured output: the grammar allows exactly
// JSON documents the schema accepts (within the bounds of json_rules.h),
// with object properties in the schema's order.
//
// Supported: type (one or a list), properties, required, additionalProperties
// (false, true or absent: only the listed properties are written; a schema
// when there are no properties: a map), items, minItems, maxItems, enum,
// const, anyOf, allOf of one schema, $ref to "#", "#/$defs/..." or
// "#/definitions/..." (recursion allowed when a value comes in between),
// and the boolean schema true. Annotations are ignored (title, description,
// default, examples, $schema, $id, $comment, deprecated, readOnly,
// writeOnly), and so are these, which we do not enforce: format (an
// annotation unless a validator opts in), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (bounds on the value need digit-by-digit
// comparisons; the model sees the schema in its prompt anyway).
// Anything else (pattern, minLength, oneOf, not, prefixItems, ...) is
// refused: weir::Error names the keyword and where it is
// ("unsupported JSON Schema keyword 'pattern' at #/properties/code").
#include <cstdint>
#include <string_view>

#include "engine/grammar/grammar.h"

namespace weir::grammar {

Grammar compileJsonSchema(std::string_view schemaText);

// Any JSON object (OpenAI's response_format json_object).
Grammar anyJsonObjectGrammar();

// The same as one part of a larger grammar: the rules go into `g` (not yet
// flattened) and the document's rule is returned.
int32_t addJsonSchema(Grammar& g, std::string_view schemaText);
int32_t addAnyJsonObject(Grammar& g);

} // namespace weir::grammar
