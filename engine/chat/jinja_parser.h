#pragma once
// Parses Jinja template text into a syntax tree, following jinja2's grammar
// and operator precedence. Unsupported tags (extends, include, import, call)
// are rejected with an error naming the tag and its location.
#include <memory>
#include <string_view>

#include "engine/chat/jinja_ast.h"

namespace weir::jinja {

// Throws weir::Error ("chat template: line L, column C: ...") on a syntax error.
std::shared_ptr<const Program> parseTemplate(std::string_view source);

}  // namespace weir::jinja
