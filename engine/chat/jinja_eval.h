#pragma once
// The tree-walking interpreter behind jinja::Template (internal header).
// Scoping follows jinja2: a for-loop iteration, a macro call, a with block and
// a block set each get a fresh scope whose writes vanish when it ends; if
// blocks share their enclosing scope; macros see the template's top level.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/chat/jinja_ast.h"
#include "engine/chat/jinja_template.h"

namespace weir::jinja {

// Thrown by builtins with a bare message; the interpreter adds the location.
struct EvalError {
    std::string message;
};
// Thrown by raise_exception(); becomes a TemplateRaised with the location.
struct RaiseSignal {
    std::string message;
};

class Interpreter {
public:
    explicit Interpreter(const RenderOptions& options);

    MarkedText render(const Program& program, const Value& context);

    // Used by builtins (filters such as map/select call tests and filters).
    Value call(const Value& callee, CallArgs& args);
    Value applyFilter(const std::string& name, const Value& subject, CallArgs& args);
    bool applyTest(const std::string& name, const Value& subject, CallArgs& args);
    Value getAttr(const Value& obj, const std::string& name);
    Value getItem(const Value& obj, const Value& key);
    void countStep();
    // Refuses a string or list result bigger than the output limit.
    void checkSize(size_t bytes) const;
    // Namespaces are cleared when rendering ends, so one that was made to
    // contain itself does not outlive the render.
    void adoptNamespace(const Value& ns) { namespaces_.push_back(ns); }
    ~Interpreter();
    const RenderOptions& options() const { return options_; }

private:
    struct Scope {
        Scope* parent = nullptr;
        std::unordered_map<std::string, Value> vars;
        const Value* find(const std::string& name) const;
    };
    enum class Flow { Normal, Break, Continue };

    RenderOptions options_;
    Scope globals_;
    Scope* root_ = nullptr;
    Scope* scope_ = nullptr;
    int64_t steps_ = 0;
    int callDepth_ = 0;
    size_t capturedBytes_ = 0;  // all output written so far, every buffer together
    std::vector<Value> namespaces_;

    Flow execBody(const Body& body, MarkedText& out);
    Flow exec(const Stmt& s, MarkedText& out);
    Flow execFor(const Stmt& s, MarkedText& out);
    void execSet(const Stmt& s);
    void defineMacro(const Stmt& s);
    void write(MarkedText& out, std::string_view text, const SourceLoc& loc);  // the template's own text
    void writeValue(MarkedText& out, const Value& v, const SourceLoc& loc);   // {{ v }}, with its provenance

    Value eval(const Expr& e);
    Value evalInner(const Expr& e);
    Value evalBinary(const std::string& op, const Value& a, const Value& b);
    Value evalCompare(const Expr& e);
    Value evalSlice(const Expr& e);
    void collectArgs(const Expr& e, CallArgs& args);
    Value lookup(const std::string& name) const;
    void assign(const std::string& name, Value v);
    std::vector<Value> iterate(const Value& v);

    [[noreturn]] void fail(const SourceLoc& loc, const std::string& what) const;
    void installGlobals();
};

// Builtins (jinja_builtins.cpp).
bool hasFilter(const std::string& name);
bool hasTest(const std::string& name);
Value builtinFilter(Interpreter& in, const std::string& name, const Value& subject, CallArgs& args, bool& found);
bool builtinTest(Interpreter& in, const std::string& name, const Value& subject, CallArgs& args, bool& found);
// Methods of str, dict and list values ("a b".split(), d.items(), ...); undefined if none.
Value builtinMethod(const Value& self, const std::string& name);
// Python-style iteration of a value: list items, dict keys, string characters.
std::vector<Value> iterateValue(const Value& v);
// Global functions: range, namespace, dict, raise_exception, strftime_now, joiner, cycler.
void installBuiltinGlobals(std::unordered_map<std::string, Value>& globals, const RenderOptions& options);
// markupsafe's escape(): & < > " ' as HTML entities.
std::string htmlEscape(std::string_view s);
// Python's "fmt % args" for %s %r %d %i %f %%.
std::string percentFormat(const std::string& fmt, const ValueList& args);
// strftime with English month and day names, independent of the C locale.
std::string formatTime(std::string_view format, int64_t epochSeconds, bool utc);

}  // namespace weir::jinja
