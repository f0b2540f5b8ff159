#include "engine/chat/jinja_eval.h"

#include <cmath>

#include "engine/chat/jinja_parser.h"
#include "engine/chat/jinja_provenance.h"

namespace weir::jinja {

namespace {

[[noreturn]] void evalFail(std::string msg) { throw EvalError{std::move(msg)}; }

[[noreturn]] void undefinedFail(const Value& v) { evalFail(v.undefinedMessage()); }

// Python's object_type_repr, as jinja2 names objects in undefined messages.
std::string objectTypeRepr(const Value& v) {
    if (v.isNone()) return "None";
    return v.typeName() + " object";
}

bool checkedAdd(int64_t a, int64_t b, int64_t& r) { return !__builtin_add_overflow(a, b, &r); }
bool checkedSub(int64_t a, int64_t b, int64_t& r) { return !__builtin_sub_overflow(a, b, &r); }
bool checkedMul(int64_t a, int64_t b, int64_t& r) { return !__builtin_mul_overflow(a, b, &r); }

int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t pyMod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

double pyFmod(double a, double b) {
    double m = std::fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

std::string repeatString(const std::string& s, int64_t n, size_t limit) {
    if (n <= 0 || s.empty()) return {};
    if (s.size() * static_cast<unsigned __int128>(n) > limit) evalFail("string repetition result too large");
    std::string out;
    out.reserve(s.size() * n);
    for (int64_t i = 0; i < n; ++i) out += s;
    return out;
}

int compareValues(const Value& a, const Value& b, const char* op) {
    if (a.isUndefined()) undefinedFail(a);
    if (b.isUndefined()) undefinedFail(b);
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) {
            double x = a.asDouble(), y = b.asDouble();
            return x < y ? -1 : x > y ? 1 : 0;
        }
        int64_t x = a.asInt(), y = b.asInt();
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.isString() && b.isString()) {
        int c = a.asString().compare(b.asString());  // UTF-8 byte order = code point order
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
        const auto &x = a.asList(), &y = b.asList();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (x[i].equals(y[i])) continue;
            return compareValues(x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    evalFail(std::string("'") + op + "' not supported between instances of '" + a.typeName() + "' and '" +
             b.typeName() + "'");
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case Value::Kind::Undefined: return false;  // iterates as empty
        case Value::Kind::String:
            if (!item.isString())
                evalFail("'in <string>' requires string as left operand, not " + item.typeName());
            return container.asString().find(item.asString()) != std::string::npos;
        case Value::Kind::List:
            for (const auto& v : container.asList())
                if (v.equals(item)) return true;
            return false;
        case Value::Kind::Dict:
            if (container.isNamespace()) break;
            return item.isString() && container.asDict().find(item.asString()) != nullptr;
        default: break;
    }
    evalFail("argument of type '" + container.typeName() + "' is not iterable");
}

bool argsContainUntrusted(const CallArgs& args) {
    for (const auto& v : args.positional)
        if (v.containsUntrusted()) return true;
    for (const auto& n : args.named)
        if (n.second.containsUntrusted()) return true;
    return false;
}

// A method of a value that holds untrusted text ("...".split(), d.items()):
// what it returns holds it too.
Value boundToUntrusted(const Value& method, const Value& self) {
    if (!self.containsUntrusted()) return method;
    return Value::callable(
        method.asCallable().name,
        [method](Interpreter& in, CallArgs& args) {
            return inheritUntrusted(method.asCallable().fn(in, args), true);
        },
        true);
}

}  // namespace

// ---------------------------------------------------------------------------

const Value* Interpreter::Scope::find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
        auto it = s->vars.find(name);
        if (it != s->vars.end()) return &it->second;
    }
    return nullptr;
}

Interpreter::Interpreter(const RenderOptions& options) : options_(options) {
    installBuiltinGlobals(globals_.vars, options_);
}

[[noreturn]] void Interpreter::fail(const SourceLoc& loc, const std::string& what) const {
    throw Error("chat template: " + describe(loc) + ": " + what);
}

Interpreter::~Interpreter() {
    for (auto& ns : namespaces_) ns.mutableDict().entries.clear();
}

void Interpreter::checkSize(size_t bytes) const {
    if (bytes > options_.maxOutputBytes)
        evalFail("result too large (more than " + std::to_string(options_.maxOutputBytes) + " bytes)");
}

void Interpreter::countStep() {
    if (++steps_ > options_.maxSteps) evalFail("rendering took too many steps (limit " +
                                               std::to_string(options_.maxSteps) + ")");
}

void Interpreter::write(MarkedText& out, std::string_view text, const SourceLoc& loc) {
    capturedBytes_ += text.size();
    if (capturedBytes_ > options_.maxOutputBytes)
        fail(loc, "rendered output exceeds " + std::to_string(options_.maxOutputBytes) + " bytes");
    out.appendTrusted(text);
}

void Interpreter::writeValue(MarkedText& out, const Value& v, const SourceLoc& loc) {
    const size_t at = out.text.size();
    if (v.isString()) {
        write(out, v.asString(), loc);
        out.untrusted.append(v.untrustedRanges(), at);
        return;
    }
    std::string text = v.str();
    write(out, text, loc);
    out.untrusted.append(rangesOfStr(v, text.size()), at);
}

MarkedText Interpreter::render(const Program& program, const Value& context) {
    Scope root;
    root.parent = &globals_;
    if (context.isDict())
        for (const auto& e : context.asDict().entries) root.vars[e.first] = e.second;
    root_ = &root;
    scope_ = &root;
    MarkedText out;
    Flow f = execBody(program.body, out);
    (void)f;  // break/continue outside a loop were rejected when reached
    root_ = scope_ = nullptr;
    return out;
}

Value Interpreter::lookup(const std::string& name) const {
    if (const Value* v = scope_->find(name)) return *v;
    return Value::undefined("'" + name + "' is undefined");
}

void Interpreter::assign(const std::string& name, Value v) { scope_->vars[name] = std::move(v); }

std::vector<Value> Interpreter::iterate(const Value& v) { return iterateValue(v); }

// ---------------------------------------------------------------- statements

Interpreter::Flow Interpreter::execBody(const Body& body, MarkedText& out) {
    for (const auto& s : body) {
        Flow f = exec(*s, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

namespace {
// Restores the interpreter's current scope when a block ends, even by error.
template <typename ScopeT>
struct ScopeSwap {
    ScopeT*& slot;
    ScopeT* saved;
    ScopeSwap(ScopeT*& s, ScopeT* next) : slot(s), saved(s) { slot = next; }
    ~ScopeSwap() { slot = saved; }
};
}  // namespace

Interpreter::Flow Interpreter::exec(const Stmt& s, MarkedText& out) {
    try {
        countStep();
        switch (s.kind) {
            case StmtKind::Text: write(out, s.text, s.loc); return Flow::Normal;
            case StmtKind::Output: {
                writeValue(out, eval(*s.expr), s.loc);
                return Flow::Normal;
            }
            case StmtKind::If:
                for (size_t i = 0; i < s.conditions.size(); ++i)
                    if (eval(*s.conditions[i]).truthy()) return execBody(s.bodies[i], out);
                return execBody(s.elseBody, out);
            case StmtKind::For: return execFor(s, out);
            case StmtKind::Set: execSet(s); return Flow::Normal;
            case StmtKind::SetBlock: {
                MarkedText captured;
                {
                    Scope inner;
                    inner.parent = scope_;
                    ScopeSwap<Scope> swap(scope_, &inner);
                    Flow f = execBody(s.body, captured);
                    if (f != Flow::Normal) fail(s.loc, "'break' or 'continue' outside a loop");
                }
                Value v = Value::text(std::move(captured.text), std::move(captured.untrusted));
                if (s.filter) {
                    // The filter chain's innermost subject is the captured text.
                    std::vector<const Expr*> chain;
                    for (const Expr* f = s.filter.get(); f; f = f->a.get()) chain.push_back(f);
                    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
                        CallArgs args;
                        collectArgs(**it, args);
                        v = applyFilter((*it)->name, v, args);
                    }
                }
                assign(s.targets[0], std::move(v));
                return Flow::Normal;
            }
            case StmtKind::Macro: defineMacro(s); return Flow::Normal;
            case StmtKind::FilterBlock: {
                MarkedText captured;
                {
                    Scope inner;
                    inner.parent = scope_;
                    ScopeSwap<Scope> swap(scope_, &inner);
                    Flow f = execBody(s.body, captured);
                    if (f != Flow::Normal) return f;
                }
                Value v = Value::text(std::move(captured.text), std::move(captured.untrusted));
                std::vector<const Expr*> chain;
                for (const Expr* f = s.filter.get(); f; f = f->a.get()) chain.push_back(f);
                for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
                    CallArgs args;
                    collectArgs(**it, args);
                    v = applyFilter((*it)->name, v, args);
                }
                writeValue(out, v, s.loc);
                return Flow::Normal;
            }
            case StmtKind::With: {
                Scope inner;
                inner.parent = scope_;
                for (size_t i = 0; i < s.targets.size(); ++i) inner.vars[s.targets[i]] = eval(*s.values[i]);
                ScopeSwap<Scope> swap(scope_, &inner);
                return execBody(s.body, out);
            }
            case StmtKind::Scope: {
                Scope inner;
                inner.parent = scope_;
                ScopeSwap<Scope> swap(scope_, &inner);
                return execBody(s.body, out);
            }
            case StmtKind::Break: return Flow::Break;
            case StmtKind::Continue: return Flow::Continue;
        }
    } catch (EvalError& e) {
        fail(s.loc, e.message);
    } catch (const TemplateRaised&) {
        throw;
    } catch (const Error& err) {
        if (std::string_view(err.what()).rfind("chat template:", 0) == 0) throw;
        fail(s.loc, err.what());
    }
    return Flow::Normal;
}

namespace {
void unpackInto(std::unordered_map<std::string, Value>& vars, const std::vector<std::string>& names,
                const Value& v, bool tuple) {
    if (!tuple) {
        vars[names[0]] = v;
        return;
    }
    if (v.isUndefined()) undefinedFail(v);
    std::vector<Value> parts = iterateValue(v);
    if (parts.size() > names.size())
        evalFail("too many values to unpack (expected " + std::to_string(names.size()) + ")");
    if (parts.size() < names.size())
        evalFail("not enough values to unpack (expected " + std::to_string(names.size()) + ", got " +
                 std::to_string(parts.size()) + ")");
    for (size_t i = 0; i < names.size(); ++i) vars[names[i]] = std::move(parts[i]);
}
}  // namespace

Interpreter::Flow Interpreter::execFor(const Stmt& s, MarkedText& out) {
    Value seq = eval(*s.expr);
    std::vector<Value> items = iterate(seq);
    if (s.filter) {
        std::vector<Value> kept;
        for (auto& item : items) {
            countStep();
            Scope probe;
            probe.parent = scope_;
            unpackInto(probe.vars, s.targets, item, s.tupleTarget);
            ScopeSwap<Scope> swap(scope_, &probe);
            if (eval(*s.filter).truthy()) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) {
        Scope inner;
        inner.parent = scope_;
        ScopeSwap<Scope> swap(scope_, &inner);
        Flow f = execBody(s.elseBody, out);
        return f == Flow::Normal ? Flow::Normal : f;
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
        countStep();
        Scope iter;
        iter.parent = scope_;
        unpackInto(iter.vars, s.targets, items[i], s.tupleTarget);
        Value loop = Value::dict();
        loop.set("index", Value(i + 1));
        loop.set("index0", Value(i));
        loop.set("revindex", Value(n - i));
        loop.set("revindex0", Value(n - i - 1));
        loop.set("first", Value(i == 0));
        loop.set("last", Value(i == n - 1));
        loop.set("length", Value(n));
        loop.set("depth", Value(1));
        loop.set("depth0", Value(0));
        if (i > 0) loop.set("previtem", items[i - 1]);
        if (i + 1 < n) loop.set("nextitem", items[i + 1]);
        loop.set("cycle", Value::callable("cycle", [i](Interpreter&, CallArgs& args) -> Value {
            if (args.positional.empty()) evalFail("no items for cycling given");
            return args.positional[static_cast<size_t>(i) % args.positional.size()];
        }));
        iter.vars["loop"] = std::move(loop);
        ScopeSwap<Scope> swap(scope_, &iter);
        Flow f = execBody(s.body, out);
        if (f == Flow::Break) break;
    }
    return Flow::Normal;
}

void Interpreter::execSet(const Stmt& s) {
    Value v = eval(*s.expr);
    if (s.namespaceTarget) {
        Value ns = lookup(s.targets[0]);
        if (!ns.isNamespace()) evalFail("can only assign attributes on namespace objects, not on '" +
                                        s.targets[0] + "'");
        ns.mutableDict().set(s.text, std::move(v));
        return;
    }
    unpackInto(scope_->vars, s.targets, v, s.tupleTarget);
}

void Interpreter::defineMacro(const Stmt& s) {
    const Stmt* def = &s;
    Value fn = Value::callable(s.text, [def](Interpreter& in, CallArgs& args) -> Value {
        if (in.callDepth_ >= in.options_.maxCallDepth)
            evalFail("macro calls nested too deeply (limit " + std::to_string(in.options_.maxCallDepth) + ")");
        Scope frame;
        frame.parent = in.root_;
        std::vector<bool> usedNamed(args.named.size(), false);
        for (size_t i = 0; i < def->params.size(); ++i) {
            const MacroParam& p = def->params[i];
            if (i < args.positional.size()) {
                frame.vars[p.name] = args.positional[i];
                continue;
            }
            bool found = false;
            for (size_t k = 0; k < args.named.size(); ++k) {
                if (args.named[k].first == p.name) {
                    frame.vars[p.name] = args.named[k].second;
                    usedNamed[k] = true;
                    found = true;
                    break;
                }
            }
            if (found) continue;
            if (p.defaultValue) {
                ScopeSwap<Scope> swap(in.scope_, &frame);
                frame.vars[p.name] = in.eval(*p.defaultValue);
            } else {
                frame.vars[p.name] =
                    Value::undefined("parameter '" + p.name + "' was not provided");
            }
        }
        ValueList extra;
        for (size_t i = def->params.size(); i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
        Value varargs = Value::tuple(std::move(extra));
        Value kwargs = Value::dict();
        for (size_t k = 0; k < args.named.size(); ++k)
            if (!usedNamed[k]) kwargs.set(args.named[k].first, args.named[k].second);
        frame.vars["varargs"] = varargs;
        frame.vars["kwargs"] = kwargs;
        ++in.callDepth_;
        MarkedText out;
        try {
            ScopeSwap<Scope> swap(in.scope_, &frame);
            Flow f = in.execBody(def->body, out);
            if (f != Flow::Normal) in.fail(def->loc, "'break' or 'continue' outside a loop");
        } catch (...) {
            --in.callDepth_;
            throw;
        }
        --in.callDepth_;
        return Value::text(std::move(out.text), std::move(out.untrusted));
    }, /*keepsProvenance=*/true);
    assign(s.text, std::move(fn));
}

// ---------------------------------------------------------------- expressions

Value Interpreter::eval(const Expr& e) {
    try {
        return evalInner(e);
    } catch (EvalError& err) {
        fail(e.loc, err.message);
    } catch (const TemplateRaised&) {
        throw;
    } catch (const Error& err) {
        // From value code (JSON, nesting limits): add the location once.
        if (std::string_view(err.what()).rfind("chat template:", 0) == 0) throw;
        fail(e.loc, err.what());
    } catch (RaiseSignal& r) {
        throw TemplateRaised("chat template: " + describe(e.loc) + ": " + r.message, r.message);
    }
}

void Interpreter::collectArgs(const Expr& e, CallArgs& args) {
    args.positional.reserve(e.items.size());
    for (const auto& a : e.items) args.positional.push_back(eval(*a));
    for (const auto& kw : e.kwargs) args.named.emplace_back(kw.first, eval(*kw.second));
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
    countStep();
    if (callee.isUndefined()) undefinedFail(callee);
    if (!callee.isCallable()) evalFail("'" + callee.typeName() + "' object is not callable");
    const Callable& fn = callee.asCallable();
    if (fn.keepsProvenance) return fn.fn(*this, args);
    Value result = fn.fn(*this, args);
    return inheritUntrusted(std::move(result), argsContainUntrusted(args));
}

Value Interpreter::applyFilter(const std::string& name, const Value& subject, CallArgs& args) {
    countStep();
    bool found = false;
    Value v = builtinFilter(*this, name, subject, args, found);
    if (!found) evalFail("no filter named '" + name + "'");
    return inheritUntrusted(std::move(v), subject.containsUntrusted() || argsContainUntrusted(args));
}

bool Interpreter::applyTest(const std::string& name, const Value& subject, CallArgs& args) {
    bool found = false;
    bool r = builtinTest(*this, name, subject, args, found);
    if (!found) evalFail("no test named '" + name + "'");
    return r;
}

Value Interpreter::getAttr(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
        case Value::Kind::Undefined: undefinedFail(obj);
        case Value::Kind::Dict:
            if (obj.isNamespace()) {
                if (const Value* v = obj.asDict().find(name)) return *v;
                return Value::undefined("'Namespace object' has no attribute '" + name + "'");
            } else {
                Value m = builtinMethod(obj, name);
                if (!m.isUndefined()) return boundToUntrusted(m, obj);
                if (const Value* v = obj.asDict().find(name)) return *v;
            }
            break;
        case Value::Kind::String:
        case Value::Kind::List: {
            Value m = builtinMethod(obj, name);
            if (!m.isUndefined()) return boundToUntrusted(m, obj);
            break;
        }
        default: break;
    }
    return Value::undefined("'" + objectTypeRepr(obj) + "' has no attribute '" + name + "'");
}

Value Interpreter::getItem(const Value& obj, const Value& key) {
    switch (obj.kind()) {
        case Value::Kind::Undefined: undefinedFail(obj);
        case Value::Kind::Dict:
            if (!obj.isNamespace() && key.isString()) {
                if (const Value* v = obj.asDict().find(key.asString())) return *v;
            }
            break;
        case Value::Kind::List:
            if (key.isInt() || key.isBool()) {
                const auto& items = obj.asList();
                int64_t i = key.asInt(), n = static_cast<int64_t>(items.size());
                if (i < 0) i += n;
                if (i >= 0 && i < n) return items[i];
                return Value::undefined("'" + objectTypeRepr(obj) + "' has no attribute '" + key.str() + "'");
            }
            break;
        case Value::Kind::String:
            if (key.isInt() || key.isBool()) {
                std::u32string u = py::toU32(obj.asString());
                int64_t i = key.asInt(), n = static_cast<int64_t>(u.size());
                if (i < 0) i += n;
                if (i >= 0 && i < n)
                    return inheritUntrusted(Value(py::toUtf8(std::u32string(1, u[i]))), obj.containsUntrusted());
                return Value::undefined("'" + objectTypeRepr(obj) + "' has no attribute '" + key.str() + "'");
            }
            break;
        default: break;
    }
    if (key.isString()) return getAttr(obj, key.asString());
    return Value::undefined("'" + objectTypeRepr(obj) + "' has no attribute '" + key.str() + "'");
}

Value Interpreter::evalSlice(const Expr& e) {
    Value subject = eval(*e.items[0]);
    if (subject.isUndefined()) undefinedFail(subject);
    auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
        if (!x) return std::nullopt;
        Value v = eval(*x);
        if (v.isNone()) return std::nullopt;
        if (!v.isInt() && !v.isBool()) evalFail("slice indices must be integers or None");
        return v.asInt();
    };
    std::optional<int64_t> start = bound(e.a), stop = bound(e.b), stepOpt = bound(e.c);
    int64_t step = stepOpt.value_or(1);
    if (step == 0) evalFail("slice step cannot be zero");
    auto indices = [&](int64_t n) {
        // Python's slice.indices(n).
        std::vector<int64_t> idx;
        int64_t lo, hi;
        if (step > 0) {
            lo = start ? (*start < 0 ? std::max<int64_t>(0, *start + n) : std::min(*start, n)) : 0;
            hi = stop ? (*stop < 0 ? std::max<int64_t>(0, *stop + n) : std::min(*stop, n)) : n;
            for (int64_t i = lo; i < hi; i += step) idx.push_back(i);
        } else {
            lo = start ? (*start < 0 ? std::max<int64_t>(-1, *start + n) : std::min(*start, n - 1)) : n - 1;
            hi = stop ? (*stop < 0 ? std::max<int64_t>(-1, *stop + n) : std::min(*stop, n - 1)) : -1;
            for (int64_t i = lo; i > hi; i += step) idx.push_back(i);
        }
        return idx;
    };
    if (subject.isString()) {
        std::u32string u = py::toU32(subject.asString()), r;
        for (int64_t i : indices(static_cast<int64_t>(u.size()))) r.push_back(u[i]);
        return inheritUntrusted(Value(py::toUtf8(r)), subject.containsUntrusted());
    }
    if (subject.isList()) {
        const auto& items = subject.asList();
        ValueList r;
        for (int64_t i : indices(static_cast<int64_t>(items.size()))) r.push_back(items[i]);
        return subject.isTuple() ? Value::tuple(std::move(r)) : Value::list(std::move(r));
    }
    evalFail("'" + subject.typeName() + "' object is not subscriptable");
}

Value Interpreter::evalBinary(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
        std::string l = a.str(), r = b.str();
        checkSize(l.size() + r.size());
        UntrustedRanges ranges = rangesOfStr(a, l.size());
        ranges.append(rangesOfStr(b, r.size()), l.size());
        return Value::text(l + r, std::move(ranges));
    }
    if (a.isUndefined()) undefinedFail(a);
    if (b.isUndefined()) undefinedFail(b);
    auto unsupported = [&]() -> Value {
        evalFail("unsupported operand type(s) for " + op + ": '" + a.typeName() + "' and '" + b.typeName() + "'");
    };
    bool nums = a.isNumber() && b.isNumber();
    bool ints = nums && !a.isFloat() && !b.isFloat();
    if (op == "+") {
        if (ints) {
            int64_t r;
            if (!checkedAdd(a.asInt(), b.asInt(), r)) evalFail("integer overflow");
            return Value(r);
        }
        if (nums) return Value(a.asDouble() + b.asDouble());
        if (a.isString() && b.isString() && (a.isMarkup() || b.isMarkup())) {
            // Markup + str escapes the plain side (markupsafe).
            std::string l = a.isMarkup() ? a.asString() : htmlEscape(a.asString());
            std::string r = b.isMarkup() ? b.asString() : htmlEscape(b.asString());
            checkSize(l.size() + r.size());
            return Value::markup(l + r);
        }
        if (a.isString() && b.isString()) {
            if (capturedBytes_ + a.asString().size() + b.asString().size() > options_.maxOutputBytes)
                evalFail("string too large");
            UntrustedRanges ranges = a.untrustedRanges();
            ranges.append(b.untrustedRanges(), a.asString().size());
            return Value::text(a.asString() + b.asString(), std::move(ranges));
        }
        if (a.isString()) evalFail("can only concatenate str (not \"" + b.typeName() + "\") to str");
        if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
            if (a.asList().size() + b.asList().size() > 1'000'000) evalFail("list too large (more than 1000000 items)");
            ValueList r = a.asList();
            r.insert(r.end(), b.asList().begin(), b.asList().end());
            return a.isTuple() ? Value::tuple(std::move(r)) : Value::list(std::move(r));
        }
        if (a.isList()) evalFail("can only concatenate " + a.typeName() + " (not \"" + b.typeName() + "\") to " +
                                 a.typeName());
        return unsupported();
    }
    if (op == "-") {
        if (ints) {
            int64_t r;
            if (!checkedSub(a.asInt(), b.asInt(), r)) evalFail("integer overflow");
            return Value(r);
        }
        if (nums) return Value(a.asDouble() - b.asDouble());
        return unsupported();
    }
    if (op == "*") {
        if (ints) {
            int64_t r;
            if (!checkedMul(a.asInt(), b.asInt(), r)) evalFail("integer overflow");
            return Value(r);
        }
        if (nums) return Value(a.asDouble() * b.asDouble());
        const Value* seq = nullptr;
        const Value* count = nullptr;
        if ((a.isString() || a.isList()) && (b.isInt() || b.isBool())) { seq = &a; count = &b; }
        if ((b.isString() || b.isList()) && (a.isInt() || a.isBool())) { seq = &b; count = &a; }
        if (seq && seq->isString())
            return Value(repeatString(seq->asString(), count->asInt(), options_.maxOutputBytes));
        if (seq) {
            int64_t n = count->asInt();
            ValueList r;
            if (n > 0) {
                if (seq->asList().size() * static_cast<unsigned __int128>(n) > 1'000'000)
                    evalFail("list repetition result too large");
                for (int64_t i = 0; i < n; ++i) r.insert(r.end(), seq->asList().begin(), seq->asList().end());
            }
            return seq->isTuple() ? Value::tuple(std::move(r)) : Value::list(std::move(r));
        }
        return unsupported();
    }
    if (op == "/") {
        if (!nums) return unsupported();
        if (b.asDouble() == 0) evalFail("division by zero");
        return Value(a.asDouble() / b.asDouble());
    }
    if (op == "//") {
        if (!nums) return unsupported();
        if (ints) {
            if (b.asInt() == 0) evalFail("integer division or modulo by zero");
            if (a.asInt() == INT64_MIN && b.asInt() == -1) evalFail("integer overflow");
            return Value(floorDiv(a.asInt(), b.asInt()));
        }
        if (b.asDouble() == 0) evalFail("float floor division by zero");
        return Value(std::floor(a.asDouble() / b.asDouble()));
    }
    if (op == "%") {
        if (a.isString()) return Value(percentFormat(a.asString(), b.isTuple() ? b.asList() : ValueList{b}));
        if (!nums) return unsupported();
        if (ints) {
            if (b.asInt() == 0) evalFail("integer division or modulo by zero");
            if (b.asInt() == -1) return Value(int64_t(0));
            return Value(pyMod(a.asInt(), b.asInt()));
        }
        if (b.asDouble() == 0) evalFail("float modulo");
        return Value(pyFmod(a.asDouble(), b.asDouble()));
    }
    if (op == "**") {
        if (!nums) return unsupported();
        if (ints && b.asInt() >= 0) {
            int64_t base = a.asInt(), e = b.asInt(), r = 1;
            while (e > 0) {
                if (e & 1) {
                    if (!checkedMul(r, base, r)) evalFail("integer overflow");
                }
                e >>= 1;
                if (e > 0 && !checkedMul(base, base, base)) evalFail("integer overflow");
            }
            return Value(r);
        }
        return Value(std::pow(a.asDouble(), b.asDouble()));
    }
    evalFail("unknown operator " + op);
}

Value Interpreter::evalCompare(const Expr& e) {
    Value left = eval(*e.a);
    for (size_t i = 0; i < e.compareOps.size(); ++i) {
        Value right = eval(*e.items[i]);
        const std::string& op = e.compareOps[i];
        bool r;
        if (op == "==") r = left.equals(right);
        else if (op == "!=") r = !left.equals(right);
        else if (op == "in") r = contains(right, left);
        else if (op == "notin") r = !contains(right, left);
        else {
            int c = compareValues(left, right, op.c_str());
            r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
        }
        if (!r) return Value(false);
        left = std::move(right);
    }
    return Value(true);
}

Value Interpreter::evalInner(const Expr& e) {
    switch (e.kind) {
        case ExprKind::Literal: return e.value;
        case ExprKind::Name: return lookup(e.name);
        case ExprKind::List:
        case ExprKind::Tuple: {
            ValueList items;
            items.reserve(e.items.size());
            for (const auto& x : e.items) items.push_back(eval(*x));
            return e.kind == ExprKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
        }
        case ExprKind::Dict: {
            Value d = Value::dict();
            for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
                Value k = eval(*e.items[i]);
                if (!k.isString()) evalFail("dict keys must be strings in chat templates, not " + k.typeName());
                if (!k.untrustedRanges().empty()) d.mutableDict().untrustedKeys = true;
                d.set(k.asString(), eval(*e.items[i + 1]));
            }
            return d;
        }
        case ExprKind::Attr: return getAttr(eval(*e.a), e.name);
        case ExprKind::Item: {
            Value obj = eval(*e.a);
            return getItem(obj, eval(*e.b));
        }
        case ExprKind::Slice: return evalSlice(e);
        case ExprKind::Call: {
            Value callee = eval(*e.a);
            CallArgs args;
            collectArgs(e, args);
            return call(callee, args);
        }
        case ExprKind::Filter: {
            Value subject = e.a ? eval(*e.a) : Value();
            CallArgs args;
            collectArgs(e, args);
            return applyFilter(e.name, subject, args);
        }
        case ExprKind::Test: {
            Value subject = eval(*e.a);
            CallArgs args;
            collectArgs(e, args);
            bool r = applyTest(e.name, subject, args);
            return Value(e.negated ? !r : r);
        }
        case ExprKind::Not: return Value(!eval(*e.a).truthy());
        case ExprKind::Negate:
        case ExprKind::Plus: {
            Value v = eval(*e.a);
            if (v.isUndefined()) undefinedFail(v);
            if (!v.isNumber())
                evalFail(std::string("bad operand type for unary ") + (e.kind == ExprKind::Negate ? "-" : "+") +
                         ": '" + v.typeName() + "'");
            if (e.kind == ExprKind::Plus) return v.isBool() ? Value(v.asInt()) : v;
            if (v.isFloat()) return Value(-v.asDouble());
            if (v.asInt() == INT64_MIN) evalFail("integer overflow");
            return Value(-v.asInt());
        }
        case ExprKind::Binary: {
            Value a = eval(*e.a);
            Value b = eval(*e.b);
            Value r = evalBinary(e.name, a, b);
            return inheritUntrusted(std::move(r), a.containsUntrusted() || b.containsUntrusted());
        }
        case ExprKind::And: {
            Value a = eval(*e.a);
            return a.truthy() ? eval(*e.b) : a;
        }
        case ExprKind::Or: {
            Value a = eval(*e.a);
            return a.truthy() ? a : eval(*e.b);
        }
        case ExprKind::Compare: return evalCompare(e);
        case ExprKind::Cond:
            if (eval(*e.a).truthy()) return eval(*e.b);
            if (e.c) return eval(*e.c);
            return Value::undefined("the inline if-expression on line " + std::to_string(e.loc.line) +
                                    " evaluated to false and no else section was defined.");
    }
    return Value();
}

// ---------------------------------------------------------------------------

namespace {

// Filters and tests that a template names must exist: jinja2 checks this
// when it compiles the template, except inside if blocks and inline ifs
// ("soft" frames), where a missing one only fails when reached.
void checkNames(const Expr* e, bool soft) {
    if (!e) return;
    if (!soft && e->kind == ExprKind::Filter && !hasFilter(e->name))
        throw Error("chat template: " + describe(e->loc) + ": no filter named '" + e->name + "'");
    if (!soft && e->kind == ExprKind::Test && !hasTest(e->name))
        throw Error("chat template: " + describe(e->loc) + ": no test named '" + e->name + "'");
    bool inner = soft || e->kind == ExprKind::Cond;
    checkNames(e->a.get(), inner);
    checkNames(e->b.get(), inner);
    checkNames(e->c.get(), inner);
    for (const auto& x : e->items) checkNames(x.get(), inner);
    for (const auto& kw : e->kwargs) checkNames(kw.second.get(), inner);
}

void checkNames(const Body& body, bool soft) {
    for (const auto& s : body) {
        switch (s->kind) {
            case StmtKind::If:
                for (const auto& c : s->conditions) checkNames(c.get(), true);
                for (const auto& b : s->bodies) checkNames(b, true);
                checkNames(s->elseBody, true);
                break;
            case StmtKind::For:
                checkNames(s->expr.get(), soft);
                checkNames(s->filter.get(), false);
                checkNames(s->body, false);
                checkNames(s->elseBody, false);
                break;
            default:
                // Macros, block sets, with and filter blocks have frames of their own.
                checkNames(s->expr.get(), soft);
                checkNames(s->filter.get(), soft);
                for (const auto& v : s->values) checkNames(v.get(), soft);
                for (const auto& p : s->params) checkNames(p.defaultValue.get(), false);
                checkNames(s->body, false);
                break;
        }
    }
}

}  // namespace

Template::Template(std::string_view source) : program_(parseTemplate(source)) { checkNames(program_->body, false); }

std::string Template::render(const Value& context, const RenderOptions& options) const {
    return renderMarked(context, options).text;
}

MarkedText Template::renderMarked(const Value& context, const RenderOptions& options) const {
    Interpreter in(options);
    return in.render(*program_, context);
}

}  // namespace weir::jinja
