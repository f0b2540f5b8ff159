#pragma once
// Values of the Jinja subset that chat templates use. Templates are written
// against python jinja2, so every value behaves like its Python counterpart:
// str(), repr(), ==, truthiness and json.dumps() all follow Python.
// Kinds: undefined (a missing variable or key), none, bool, int (64-bit),
// float, str (UTF-8), list (also tuples), dict (string keys, insertion
// ordered; also jinja's namespace() objects) and callables (filters' helpers,
// macros, bound methods like "abc".split).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/util/untrusted_ranges.h"

namespace weir::jinja {

class Value;
class Interpreter;
using ValueList = std::vector<Value>;

struct CallArgs;
using CallableFn = std::function<Value(Interpreter&, CallArgs&)>;

class Value {
public:
    enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Callable };

    Value() = default;  // undefined
    Value(std::nullptr_t) : kind_(Kind::None) {}
    Value(bool b) : kind_(Kind::Bool), data_(b) {}
    Value(int v) : kind_(Kind::Int), data_(int64_t(v)) {}
    Value(int64_t v) : kind_(Kind::Int), data_(v) {}
    Value(double v) : kind_(Kind::Float), data_(v) {}
    Value(const char* s) : kind_(Kind::String), data_(std::string(s)) {}
    Value(std::string s) : kind_(Kind::String), data_(std::move(s)) {}
    Value(std::string_view s) : kind_(Kind::String), data_(std::string(s)) {}

    static Value none() { return Value(nullptr); }
    // what: the message jinja2 would give when the value is used, e.g.
    // "'tools' is undefined" or "'dict object' has no attribute 'x'".
    static Value undefined(std::string what);
    static Value list(ValueList items = {});
    static Value tuple(ValueList items);
    static Value dict();
    static Value namespaceObject();  // jinja's namespace(): attributes may be assigned
    // keepsProvenance: the function marks the provenance of the strings it
    // returns itself (macros); otherwise the interpreter does (see
    // jinja_provenance.h).
    static Value callable(std::string name, CallableFn fn, bool keepsProvenance = false);
    // A string marked safe (markupsafe's Markup, made by |safe and |escape):
    // adding a plain string to it HTML-escapes the plain one, as in jinja2.
    static Value markup(std::string s);
    bool isMarkup() const { return kind_ == Kind::String && markup_; }

    // Provenance of a string: which of its bytes came from the conversation
    // (see engine/util/untrusted_ranges.h). The renderer marks every string
    // of the messages and tools that has none as untrusted as a whole (see
    // jinja_provenance.h); template literals are trusted; builtins carry it
    // through. Special tokens are parsed only in trusted bytes.
    static Value text(std::string s, UntrustedRanges untrusted);
    bool hasProvenance() const { return provenance_ != nullptr; }
    // Untrusted bytes of a string (none when its provenance is unknown).
    const UntrustedRanges& untrustedRanges() const;
    // The same string with this provenance.
    Value withProvenance(UntrustedRanges untrusted) const;
    // A string with an untrusted byte, a list or dict holding one, or a dict
    // whose keys came from the conversation.
    bool containsUntrusted() const;

    Kind kind() const { return kind_; }
    bool isUndefined() const { return kind_ == Kind::Undefined; }
    bool isNone() const { return kind_ == Kind::None; }
    bool isBool() const { return kind_ == Kind::Bool; }
    bool isInt() const { return kind_ == Kind::Int; }
    bool isFloat() const { return kind_ == Kind::Float; }
    bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
    bool isString() const { return kind_ == Kind::String; }
    bool isList() const { return kind_ == Kind::List; }
    bool isTuple() const;
    bool isDict() const { return kind_ == Kind::Dict; }  // includes namespaces
    bool isMapping() const;                                // a dict, not a namespace
    bool isNamespace() const;
    bool isCallable() const { return kind_ == Kind::Callable; }

    bool asBool() const { return std::get<bool>(data_); }
    int64_t asInt() const;        // int or bool
    double asDouble() const;      // int, bool or float
    const std::string& asString() const { return std::get<std::string>(data_); }
    const std::string& undefinedMessage() const { return std::get<std::string>(data_); }
    const ValueList& asList() const;
    ValueList& mutableList();
    const struct Dict& asDict() const;
    struct Dict& mutableDict();
    const struct Callable& asCallable() const;

    // Builders for lists and dicts (mutate this value's storage in place).
    Value& append(Value v);
    Value& set(std::string key, Value v);
    const Value* get(std::string_view key) const;  // dict entry or nullptr

    // Nesting of lists and dicts inside this value (0 for scalars). Values
    // nested deeper than kMaxDepth are refused when built, so walking or
    // destroying one never recurses without bound.
    static constexpr int kMaxDepth = 500;
    int depth() const;
    // A dict with the same entries (shallow copy).
    Value copyDict() const;

    bool truthy() const;
    std::string str() const;       // Python str(); undefined gives ""
    std::string repr() const;      // Python repr()
    std::string typeName() const;  // Python type name, for error messages
    bool equals(const Value& other) const;  // Python ==
    bool sameObject(const Value& other) const;  // Python "is"

    // json.dumps(value, ensure_ascii=..., indent=..., separators=...,
    // sort_keys=...) as HF transformers' tojson filter calls it.
    struct JsonStyle {
        bool ensureAscii = false;        // non-ASCII as \uXXXX escapes
        bool pretty = false;             // an indent was given: one item per line
        std::string indent;              // the indent text per level
        std::string itemSeparator = ", ";
        std::string keySeparator = ": ";
        bool sortKeys = false;
    };
    std::string toJson(const JsonStyle& style) const;  // throws weir::Error for unserializable values
    std::string toJson() const { return toJson(JsonStyle{}); }
    // Parses JSON text (RFC 8259) into a value; throws weir::Error naming the position.
    static Value parseJson(std::string_view text);

private:
    Kind kind_ = Kind::Undefined;
    bool markup_ = false;
    std::shared_ptr<const UntrustedRanges> provenance_;  // strings only; null: unknown
    std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<struct ListData>,
                 std::shared_ptr<struct Dict>, std::shared_ptr<struct Callable>>
        data_;
};

struct ListData {
    ValueList items;
    bool tuple = false;
    int depth = 1;
};

// Insertion-ordered string-keyed map (Python dict semantics for iteration order).
struct Dict {
    std::vector<std::pair<std::string, Value>> entries;
    bool isNamespace = false;
    bool untrustedKeys = false;  // the keys came from the conversation
    int depth = 1;  // see Value::depth(); only grows

    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    void set(std::string key, Value v);
    size_t size() const { return entries.size(); }
};

struct CallArgs {
    ValueList positional;
    std::vector<std::pair<std::string, Value>> named;

    // The argument at position pos, or the one named name; nullptr if absent.
    const Value* find(size_t pos, std::string_view name) const;
};

struct Callable {
    std::string name;
    CallableFn fn;
    bool keepsProvenance = false;
};

// Python helpers shared by the interpreter and the value code.
namespace py {
std::string formatFloat(double v);          // repr(float)
std::string quoteString(std::string_view s);  // repr(str)
bool isSpace(char32_t c);                   // str.isspace() for one code point
std::string strip(std::string_view s, bool left, bool right, const std::string* chars = nullptr);
std::u32string toU32(std::string_view utf8);  // invalid bytes map to U+DCxx like Python's surrogateescape
std::string toUtf8(std::u32string_view s);
size_t codepointCount(std::string_view utf8);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
}  // namespace py

}  // namespace weir::jinja
