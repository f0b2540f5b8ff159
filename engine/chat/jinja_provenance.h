#pragma once
// How the renderer follows which text came from the conversation (see
// Value::text): the boundary where client values enter, and the rules the
// interpreter and builtins apply so that no untrusted byte ever turns into
// trusted text. Exact for concatenation, join, trim, block capture, macros
// and output; any other builtin that makes a new string from an input with
// untrusted bytes marks all of it untrusted (safe: at worst a control token
// the template wrote next to client text is read as plain text).
#include <string>

#include "engine/chat/jinja_value.h"

namespace weir::jinja {

// A deep copy in which every string without provenance is untrusted as a
// whole and every dict's keys are untrusted. Strings that already carry
// provenance (parts Weir assembled around client text) keep it.
Value markUntrusted(const Value& v);

// A trusted string (template literals, bos_token).
Value trustedText(std::string s);

// A dict key as a string value, untrusted when the dict's keys are.
Value keyValue(const Dict& d, const std::string& key);

// Untrusted ranges of v.str() (`size` bytes): a string's own, all of it for
// anything else that holds untrusted text, none otherwise.
UntrustedRanges rangesOfStr(const Value& v, size_t size);

// What a builtin made from inputs of which some held untrusted text: new
// strings without provenance (also the items of a new list) become wholly
// untrusted. Values passed through unchanged keep their own provenance.
Value inheritUntrusted(Value result, bool inputsUntrusted);

}  // namespace weir::jinja
