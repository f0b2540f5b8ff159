#pragma once
// Splits Jinja template text into tokens the way jinja2's lexer does with the
// settings HF transformers uses (trim_blocks, lstrip_blocks, no trailing
// newline kept): literal text, {{ }} and {% %} delimiters, and the names,
// literals and operators inside them. Comments vanish here; {% raw %}
// blocks come out as plain text. Whitespace control (-, +) is applied here.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::jinja {

struct SourceLoc {
    int line = 1;
    int column = 1;
};

enum class TokenType {
    Text,        // literal template text (already whitespace-trimmed)
    VarBegin,    // {{
    VarEnd,      // }}
    BlockBegin,  // {%
    BlockEnd,    // %}
    Name,
    String,      // text holds the decoded value
    Integer,
    Float,
    Operator,    // text holds the operator: "+", "//", "==", "(", ...
    End,
};

struct Token {
    TokenType type = TokenType::End;
    std::string text;
    int64_t intValue = 0;
    double floatValue = 0;
    SourceLoc loc;
};

// Throws weir::Error ("chat template: line L, column C: ...") on malformed input.
std::vector<Token> tokenize(std::string_view source);

// "line L, column C" for messages.
std::string describe(const SourceLoc& loc);

}  // namespace weir::jinja
