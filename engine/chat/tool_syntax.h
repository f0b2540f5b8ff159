#pragma once
// Readers for the notations models write tool calls in. Each turns text into
// jinja::Value data (dicts, lists, strings, numbers), never throws, and gives
// up (std::nullopt) on anything it cannot read completely: a malformed call is
// then shown as plain text by the caller.
//
//   JSON                {"name": "f", "arguments": {"a": 1}}
//   Python calls        [f(a=1, b="x"), g()]          (Gemma 3 "pythonic")
//   Gemma tool values   {a:<escape>x<escape>,n:5}      (FunctionGemma; Gemma 4
//                                                      writes <|"|> for <escape>)
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/jinja_value.h"

namespace weir::toolsyntax {

// End (one past the last byte) of the JSON object or array that starts at
// text[pos] (after optional whitespace), or npos when it is not complete yet
// or not a JSON container. Strings and escapes are respected.
size_t jsonContainerEnd(std::string_view text, size_t pos = 0);

// The JSON value parsed from exactly `text` (surrounding whitespace allowed).
std::optional<jinja::Value> parseJson(std::string_view text);

// A Gemma tool value at text[pos]: a string between two `escape` markers, a
// number, true/false/null, an object {key:value,...} with bare or escaped
// keys, or a list [...]. A bare word that is none of these reads as a string
// (small models sometimes forget the markers). `pos` moves past the value.
std::optional<jinja::Value> parseGemmaValue(std::string_view text, size_t& pos, std::string_view escape);

// Python call syntax: `name(key=value, ...)`, several of them as a list
// `[a(...), b(...)]` or separated by newlines/commas/semicolons. Values are
// Python literals (strings with either quote, numbers, True/False/None, JSON's
// true/false/null, lists, tuples, dicts). Every argument must be named.
// Returns (name, arguments dict) pairs; nullopt unless the whole text reads.
struct NamedArgs {
    std::string name;
    jinja::Value arguments;  // a dict
};
std::optional<std::vector<NamedArgs>> parsePythonCalls(std::string_view text);

// The JSON text of a dict of arguments, as OpenAI's "arguments" string.
std::string argumentsJson(const jinja::Value& arguments);

// Gemma tool-value text of a value (the inverse of parseGemmaValue): strings
// between escape markers, dict keys bare (sorted when sortKeys).
std::string gemmaValueText(const jinja::Value& v, std::string_view escape, bool sortKeys);
// The same with the values and keys (the client's data) marked untrusted and
// the escape markers and punctuation (Weir's) trusted.
MarkedText gemmaValueMarked(const jinja::Value& v, std::string_view escape, bool sortKeys);

}  // namespace weir::toolsyntax
