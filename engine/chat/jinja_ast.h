#pragma once
// The syntax tree the Jinja parser builds and the interpreter walks.
// Expressions and statements are plain structs with a kind tag; each keeps
// its source location for error messages.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/jinja_lexer.h"
#include "engine/chat/jinja_value.h"

namespace weir::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
    Literal,   // value
    Name,      // name
    List,      // items
    Tuple,     // items
    Dict,      // items: key0, value0, key1, value1, ...
    Attr,      // a.name
    Item,      // a[b]
    Slice,     // a[b:c:d]; missing parts are null
    Call,      // a(items..., kwargs...)
    Filter,    // a | name(items..., kwargs...); a is null inside {% filter %}
    Test,      // a is [not] name(items..., kwargs...)
    Not,       // not a
    Negate,    // -a
    Plus,      // +a
    Binary,    // a op b  (op in name: + - * / // % ** ~)
    And,       // a and b
    Or,        // a or b
    Compare,   // a op0 items[0] op1 items[1] ...  (ops in compareOps)
    Cond,      // b if a else c  (c may be null)
};

struct Expr {
    ExprKind kind;
    SourceLoc loc;
    std::string name;
    Value value;
    ExprPtr a, b, c;
    std::vector<ExprPtr> items;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> compareOps;  // "==", "!=", "<", "<=", ">", ">=", "in", "notin"
    bool negated = false;                 // Test: "is not"

    Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
    Text,        // text
    Output,      // {{ expr }}
    If,          // conditions[i] -> bodies[i]; elseBody
    For,         // targets in expr [if filter]; body; elseBody
    Set,         // targets = expr  (or namespace attribute: target ns.attr)
    SetBlock,    // {% set x %}body{% endset %}, optional filter
    Macro,       // name(params) body
    FilterBlock, // {% filter f %}body{% endfilter %}
    With,        // {% with a = 1 %}body{% endwith %}
    Break,
    Continue,
    Scope,       // a body in its own scope: {% generation %}, {% block %}, {% autoescape %}
};

struct MacroParam {
    std::string name;
    ExprPtr defaultValue;  // may be null
};

struct Stmt {
    StmtKind kind;
    SourceLoc loc;
    std::string text;                   // Text; Macro/Set name; Set: namespace attribute
    ExprPtr expr;                       // Output, For iterable, Set value, filter chain
    ExprPtr filter;                     // For "if" filter; SetBlock/FilterBlock filter chain
    std::vector<std::string> targets;   // For/Set/With names
    std::vector<ExprPtr> conditions;    // If
    std::vector<Body> bodies;           // If branches
    std::vector<ExprPtr> values;        // With values
    Body body;
    Body elseBody;
    std::vector<MacroParam> params;     // Macro
    bool namespaceTarget = false;       // Set: targets[0].text = value
    bool tupleTarget = false;           // For/Set: unpack into targets

    Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

struct Program {
    Body body;
};

}  // namespace weir::jinja
