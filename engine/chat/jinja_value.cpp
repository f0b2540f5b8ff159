#include "engine/chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "engine/tokenizer/utf8.h"
#include "weir/base/error.h"
#include "weir/base/json_string.h"

namespace weir::jinja {

namespace {
// Nesting deeper than this in str()/repr()/json (only reachable through a
// namespace that contains itself, or absurd JSON) is cut off, never recursed.
constexpr int kMaxNesting = 512;
}  // namespace

// ---------------------------------------------------------------------------
// Python text helpers

namespace py {

bool isSpace(char32_t c) {
    // The code points for which Python's str.isspace() is true.
    if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return true;
    if (c < 0x85) return false;
    return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::u32string toU32(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        int len = 0;
        char32_t cp = 0;
        if (c < 0x80) { out.push_back(c); ++i; continue; }
        if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
        else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
        else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
        bool ok = len > 0 && i + len <= s.size();
        for (int k = 1; ok && k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) ok = false;
            else cp = (cp << 6) | (cc & 0x3f);
        }
        if (ok) {
            // Reject overlong forms, surrogates and values past U+10FFFF.
            static const char32_t minForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
            if (cp < minForLen[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) ok = false;
        }
        if (!ok) {
            out.push_back(0xdc00 + c);  // Python's surrogateescape: keeps the byte
            ++i;
            continue;
        }
        out.push_back(cp);
        i += len;
    }
    return out;
}

// Invalid input bytes travel through the interpreter as U+DC80..U+DCFF
// (surrogate escapes) and go back out as the byte they stood for.
static void appendCodepoint(std::string& out, char32_t cp) {
    if (cp >= 0xdc80 && cp <= 0xdcff) {
        out.push_back(static_cast<char>(cp - 0xdc00));
        return;
    }
    tok::appendUtf8(out, uint32_t(cp));
}

std::string toUtf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) appendCodepoint(out, c);
    return out;
}

size_t codepointCount(std::string_view s) {
    size_t n = 0;
    bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0x80) == 0; });
    if (ascii) return s.size();
    n = toU32(s).size();
    return n;
}

std::string strip(std::string_view s, bool left, bool right, const std::string* chars) {
    if (!chars) {
        // Whitespace: walk the ends byte by byte, decoding only non-ASCII code points.
        size_t b = 0, e = s.size();
        auto cpAt = [&](size_t pos, size_t len) {
            std::u32string u = toU32(s.substr(pos, len));
            return u.size() == 1 ? u[0] : char32_t(0);
        };
        auto seqLen = [](unsigned char c) -> size_t {
            return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
        };
        while (left && b < e) {
            size_t len = std::min(seqLen(static_cast<unsigned char>(s[b])), e - b);
            unsigned char c = static_cast<unsigned char>(s[b]);
            if (!isSpace(c < 0x80 ? char32_t(c) : cpAt(b, len))) break;
            b += len;
        }
        while (right && e > b) {
            size_t start = e - 1;
            while (start > b && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80 && e - start < 4) --start;
            size_t len = e - start;
            if (seqLen(static_cast<unsigned char>(s[start])) != len) { start = e - 1; len = 1; }
            unsigned char c = static_cast<unsigned char>(s[start]);
            if (!isSpace(c < 0x80 ? char32_t(c) : cpAt(start, len))) break;
            e = start;
        }
        return std::string(s.substr(b, e - b));
    }
    std::u32string set;
    if (chars) set = toU32(*chars);
    auto drop = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : isSpace(c); };
    std::u32string u = toU32(s);
    size_t b = 0, e = u.size();
    if (left) while (b < e && drop(u[b])) ++b;
    if (right) while (e > b && drop(u[e - 1])) --e;
    return toUtf8(std::u32string_view(u).substr(b, e - b));
}

// Case mapping for ASCII, Latin-1, Greek and Cyrillic: the scripts chat
// templates plausibly upper-case (type names, role names). Others pass through.
static char32_t upperCp(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if ((c >= 0xe0 && c <= 0xfe && c != 0xf7)) return c - 32;
    if (c == 0xff) return 0x178;
    if (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) return c - 32;
    if (c == 0x3c2) return 0x3a3;
    if (c >= 0x430 && c <= 0x44f) return c - 32;
    if (c >= 0x450 && c <= 0x45f) return c - 80;
    return c;
}
static char32_t lowerCp(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if ((c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 32;
    if (c == 0x178) return 0xff;
    if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) return c + 32;
    if (c >= 0x410 && c <= 0x42f) return c + 32;
    if (c >= 0x400 && c <= 0x40f) return c + 80;
    return c;
}

std::string upper(std::string_view s) {
    std::u32string u = toU32(s), out;
    out.reserve(u.size());
    for (char32_t c : u) {
        if (c == 0xdf) { out += U"SS"; continue; }  // German sharp s, as Python does
        out.push_back(upperCp(c));
    }
    return toUtf8(out);
}

std::string lower(std::string_view s) {
    std::u32string u = toU32(s);
    for (char32_t& c : u) c = lowerCp(c);
    return toUtf8(u);
}

std::string formatFloat(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    // Shortest round-trip digits, then Python's layout: fixed notation for
    // exponents in [-4, 16), scientific (e+XX, two digits at least) otherwise.
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    bool neg = sci[0] == '-';
    if (neg) sci.erase(0, 1);
    size_t ePos = sci.find('e');
    std::string mant = sci.substr(0, ePos);
    int exp = std::stoi(sci.substr(ePos + 1));
    std::string digits;
    for (char c : mant) if (c != '.') digits.push_back(c);
    std::string out = neg ? "-" : "";
    if (exp >= -4 && exp < 16) {
        if (exp >= 0) {
            std::string intPart = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
            while (intPart.size() < size_t(exp + 1)) intPart.push_back('0');
            std::string frac = digits.size() > size_t(exp + 1) ? digits.substr(exp + 1) : "0";
            out += intPart + "." + frac;
        } else {
            out += "0." + std::string(-exp - 1, '0') + digits;
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += eb;
    }
    return out;
}

static bool isPrintable(char32_t c) {
    // Approximation of Python's str.isprintable() for repr(): control
    // characters, separators other than space and format characters are not.
    if (c < 0x20 || c == 0x7f) return false;
    if (c >= 0x80 && c <= 0xa0) return false;
    if (c == 0xad) return false;
    if (c >= 0xd800 && c <= 0xdfff) return false;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
        (c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0xfeff)
        return false;
    if (c >= 0xe000 && c <= 0xf8ff) return false;
    if ((c & 0xfffe) == 0xfffe) return false;
    return true;
}

std::string quoteString(std::string_view s) {
    std::u32string u = toU32(s);
    bool hasSingle = u.find(U'\'') != std::u32string::npos;
    bool hasDouble = u.find(U'"') != std::u32string::npos;
    char32_t quote = (hasSingle && !hasDouble) ? U'"' : U'\'';
    std::string out;
    out.push_back(static_cast<char>(quote));
    for (char32_t c : u) {
        if (c == quote || c == U'\\') { out.push_back('\\'); out.push_back(static_cast<char>(c)); }
        else if (c == U'\t') out += "\\t";
        else if (c == U'\n') out += "\\n";
        else if (c == U'\r') out += "\\r";
        else if (!isPrintable(c)) {
            char b[16];
            if (c < 0x100) std::snprintf(b, sizeof b, "\\x%02x", unsigned(c));
            else if (c < 0x10000) std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
            else std::snprintf(b, sizeof b, "\\U%08x", unsigned(c));
            out += b;
        } else {
            appendCodepoint(out, c);
        }
    }
    out.push_back(static_cast<char>(quote));
    return out;
}

}  // namespace py

// ---------------------------------------------------------------------------
// Construction and access

Value Value::markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
}

Value Value::text(std::string s, UntrustedRanges untrusted) {
    Value v(std::move(s));
    v.provenance_ = std::make_shared<const UntrustedRanges>(std::move(untrusted));
    return v;
}

const UntrustedRanges& Value::untrustedRanges() const {
    static const UntrustedRanges kNone;
    return provenance_ ? *provenance_ : kNone;
}

Value Value::withProvenance(UntrustedRanges untrusted) const {
    Value v = *this;
    v.provenance_ = std::make_shared<const UntrustedRanges>(std::move(untrusted));
    return v;
}

namespace {
bool containsUntrustedAt(const Value& v, int depth) {
    if (depth > kMaxNesting) return true;  // a namespace holding itself: assume the worst
    switch (v.kind()) {
        case Value::Kind::String: return !v.untrustedRanges().empty();
        case Value::Kind::List:
            for (const auto& item : v.asList())
                if (containsUntrustedAt(item, depth + 1)) return true;
            return false;
        case Value::Kind::Dict:
            if (v.asDict().untrustedKeys && v.asDict().size() > 0) return true;
            for (const auto& e : v.asDict().entries)
                if (containsUntrustedAt(e.second, depth + 1)) return true;
            return false;
        default: return false;
    }
}
}  // namespace

bool Value::containsUntrusted() const { return containsUntrustedAt(*this, 0); }

Value Value::undefined(std::string what) {
    Value v;
    v.data_ = std::move(what);
    return v;
}

namespace {
int nestedDepth(int childDepth) {
    int d = childDepth + 1;
    if (d > Value::kMaxDepth)
        throw Error("values nested more than " + std::to_string(Value::kMaxDepth) + " levels deep");
    return d;
}
}  // namespace

int Value::depth() const {
    if (kind_ == Kind::List) return std::get<std::shared_ptr<ListData>>(data_)->depth;
    if (kind_ == Kind::Dict) return asDict().depth;
    return 0;
}

Value Value::copyDict() const {
    Value c = dict();
    c.mutableDict().entries = asDict().entries;
    c.mutableDict().depth = asDict().depth;
    c.mutableDict().untrustedKeys = asDict().untrustedKeys;
    return c;
}

Value Value::list(ValueList items) {
    Value v;
    v.kind_ = Kind::List;
    auto d = std::make_shared<ListData>();
    int maxChild = 0;
    for (const auto& item : items) maxChild = std::max(maxChild, item.depth());
    d->depth = nestedDepth(maxChild);
    d->items = std::move(items);
    v.data_ = std::move(d);
    return v;
}

Value Value::tuple(ValueList items) {
    Value v = list(std::move(items));
    std::get<std::shared_ptr<ListData>>(v.data_)->tuple = true;
    return v;
}

Value Value::dict() {
    Value v;
    v.kind_ = Kind::Dict;
    v.data_ = std::make_shared<Dict>();
    return v;
}

Value Value::namespaceObject() {
    Value v = dict();
    std::get<std::shared_ptr<Dict>>(v.data_)->isNamespace = true;
    return v;
}

Value Value::callable(std::string name, CallableFn fn, bool keepsProvenance) {
    Value v;
    v.kind_ = Kind::Callable;
    v.data_ = std::make_shared<Callable>(Callable{std::move(name), std::move(fn), keepsProvenance});
    return v;
}

bool Value::isTuple() const { return isList() && std::get<std::shared_ptr<ListData>>(data_)->tuple; }
bool Value::isMapping() const { return isDict() && !asDict().isNamespace; }
bool Value::isNamespace() const { return isDict() && asDict().isNamespace; }

int64_t Value::asInt() const {
    if (kind_ == Kind::Bool) return asBool() ? 1 : 0;
    return std::get<int64_t>(data_);
}

double Value::asDouble() const {
    if (kind_ == Kind::Float) return std::get<double>(data_);
    return static_cast<double>(asInt());
}

const ValueList& Value::asList() const { return std::get<std::shared_ptr<ListData>>(data_)->items; }
ValueList& Value::mutableList() { return std::get<std::shared_ptr<ListData>>(data_)->items; }
const Dict& Value::asDict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
Dict& Value::mutableDict() { return *std::get<std::shared_ptr<Dict>>(data_); }
const Callable& Value::asCallable() const { return *std::get<std::shared_ptr<Callable>>(data_); }

Value& Value::append(Value v) {
    auto& data = *std::get<std::shared_ptr<ListData>>(data_);
    data.depth = std::max(data.depth, nestedDepth(v.depth()));
    data.items.push_back(std::move(v));
    return *this;
}

Value& Value::set(std::string key, Value v) {
    mutableDict().set(std::move(key), std::move(v));
    return *this;
}

const Value* Value::get(std::string_view key) const {
    if (!isDict()) return nullptr;
    return asDict().find(key);
}

const Value* Dict::find(std::string_view key) const {
    for (const auto& e : entries)
        if (e.first == key) return &e.second;
    return nullptr;
}

Value* Dict::find(std::string_view key) {
    for (auto& e : entries)
        if (e.first == key) return &e.second;
    return nullptr;
}

void Dict::set(std::string key, Value v) {
    if (!(v.isDict() && &v.asDict() == this)) depth = std::max(depth, nestedDepth(v.depth()));
    if (Value* existing = find(key)) { *existing = std::move(v); return; }
    entries.emplace_back(std::move(key), std::move(v));
}

const Value* CallArgs::find(size_t pos, std::string_view name) const {
    if (pos < positional.size()) return &positional[pos];
    for (const auto& n : named)
        if (n.first == name) return &n.second;
    return nullptr;
}

// ---------------------------------------------------------------------------
// Python semantics

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Undefined: case Kind::None: return false;
        case Kind::Bool: return asBool();
        case Kind::Int: return asInt() != 0;
        case Kind::Float: return asDouble() != 0.0;
        case Kind::String: return !asString().empty();
        case Kind::List: return !asList().empty();
        case Kind::Dict: return asDict().isNamespace || asDict().size() > 0;
        case Kind::Callable: return true;
    }
    return false;
}

std::string Value::typeName() const {
    switch (kind_) {
        case Kind::Undefined: return "Undefined";
        case Kind::None: return "NoneType";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::String: return "str";
        case Kind::List: return isTuple() ? "tuple" : "list";
        case Kind::Dict: return asDict().isNamespace ? "Namespace" : "dict";
        case Kind::Callable: return "function";
    }
    return "object";
}

namespace {

void appendRepr(std::string& out, const Value& v, int depth, bool quoteStrings);

void appendContainer(std::string& out, const Value& v, int depth) {
    if (depth > kMaxNesting) { out += "..."; return; }
    if (v.isList()) {
        bool tuple = v.isTuple();
        out += tuple ? "(" : "[";
        const auto& items = v.asList();
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += ", ";
            appendRepr(out, items[i], depth + 1, true);
        }
        if (tuple && items.size() == 1) out += ",";
        out += tuple ? ")" : "]";
        return;
    }
    const Dict& d = v.asDict();
    if (d.isNamespace) out += "<Namespace ";
    out += "{";
    for (size_t i = 0; i < d.entries.size(); ++i) {
        if (i) out += ", ";
        out += py::quoteString(d.entries[i].first);
        out += ": ";
        appendRepr(out, d.entries[i].second, depth + 1, true);
    }
    out += "}";
    if (d.isNamespace) out += ">";
}

void appendRepr(std::string& out, const Value& v, int depth, bool quoteStrings) {
    switch (v.kind()) {
        case Value::Kind::Undefined: out += quoteStrings ? "Undefined" : ""; return;
        case Value::Kind::None: out += "None"; return;
        case Value::Kind::Bool: out += v.asBool() ? "True" : "False"; return;
        case Value::Kind::Int: out += std::to_string(v.asInt()); return;
        case Value::Kind::Float: out += py::formatFloat(v.asDouble()); return;
        case Value::Kind::String: out += quoteStrings ? py::quoteString(v.asString()) : v.asString(); return;
        case Value::Kind::List: case Value::Kind::Dict: appendContainer(out, v, depth); return;
        case Value::Kind::Callable: out += "<function " + v.asCallable().name + ">"; return;
    }
}

}  // namespace

std::string Value::str() const {
    if (kind_ == Kind::String) return asString();
    std::string out;
    appendRepr(out, *this, 0, false);
    return out;
}

std::string Value::repr() const {
    std::string out;
    appendRepr(out, *this, 0, true);
    return out;
}

bool Value::sameObject(const Value& o) const {
    if (kind_ != o.kind_) return false;
    switch (kind_) {
        case Kind::Undefined: case Kind::None: return true;
        case Kind::Bool: return asBool() == o.asBool();
        case Kind::Int: return asInt() == o.asInt();  // CPython caches small ints; close enough
        case Kind::Float: return false;
        case Kind::String: return asString() == o.asString();
        case Kind::List: return &asList() == &o.asList();
        case Kind::Dict: return &asDict() == &o.asDict();
        case Kind::Callable: return &asCallable() == &o.asCallable();
    }
    return false;
}

bool Value::equals(const Value& o) const {
    if (isNumber() && o.isNumber()) {
        if (isFloat() || o.isFloat()) return asDouble() == o.asDouble();
        return asInt() == o.asInt();
    }
    if (kind_ != o.kind_) return false;
    switch (kind_) {
        case Kind::Undefined: case Kind::None: return true;
        case Kind::String: return asString() == o.asString();
        case Kind::List: {
            if (isTuple() != o.isTuple()) return false;
            const auto &a = asList(), &b = o.asList();
            if (&a == &b) return true;
            if (a.size() != b.size()) return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (!a[i].equals(b[i])) return false;
            return true;
        }
        case Kind::Dict: {
            const Dict &a = asDict(), &b = o.asDict();
            if (&a == &b) return true;
            if (a.isNamespace || b.isNamespace) return false;
            if (a.size() != b.size()) return false;
            for (const auto& e : a.entries) {
                const Value* other = b.find(e.first);
                if (!other || !e.second.equals(*other)) return false;
            }
            return true;
        }
        case Kind::Callable: return sameObject(o);
        default: return false;
    }
}

// ---------------------------------------------------------------------------
// JSON

namespace {

// Python's json.dumps: short escapes for control characters, and with
// ensure_ascii every non-ASCII character as \uXXXX (surrogate pairs above the BMP).
void jsonString(std::string& out, std::string_view s, bool ensureAscii) {
    if (ensureAscii) {
        out.push_back('"');
        for (char32_t c : py::toU32(s)) {
            char b[16];
            if (c < 0x80) {
                std::string one(1, static_cast<char>(c));
                std::string quoted;
                jsonString(quoted, one, false);
                out.append(quoted, 1, quoted.size() - 2);
            } else if (c < 0x10000) {
                std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
                out += b;
            } else {
                char32_t v = c - 0x10000;
                std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xd800 + (v >> 10)), unsigned(0xdc00 + (v & 0x3ff)));
                out += b;
            }
        }
        out.push_back('"');
        return;
    }
    out += weir::jsonString(s);
}

void jsonValue(std::string& out, const Value& v, const Value::JsonStyle& st, int level) {
    if (level > kMaxNesting) throw Error("tojson: nesting too deep (circular reference?)");
    auto newline = [&](int lvl) {
        out.push_back('\n');
        for (int i = 0; i < lvl; ++i) out += st.indent;
    };
    switch (v.kind()) {
        case Value::Kind::None: out += "null"; return;
        case Value::Kind::Bool: out += v.asBool() ? "true" : "false"; return;
        case Value::Kind::Int: out += std::to_string(v.asInt()); return;
        case Value::Kind::Float: {
            double d = v.asDouble();
            if (std::isnan(d)) out += "NaN";
            else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
            else out += py::formatFloat(d);
            return;
        }
        case Value::Kind::String: jsonString(out, v.asString(), st.ensureAscii); return;
        case Value::Kind::List: {
            const auto& items = v.asList();
            if (items.empty()) { out += "[]"; return; }
            out.push_back('[');
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += st.itemSeparator;
                if (st.pretty) newline(level + 1);
                jsonValue(out, items[i], st, level + 1);
            }
            if (st.pretty) newline(level);
            out.push_back(']');
            return;
        }
        case Value::Kind::Dict: {
            const Dict& d = v.asDict();
            if (d.isNamespace) break;
            if (d.entries.empty()) { out += "{}"; return; }
            std::vector<const std::pair<std::string, Value>*> order;
            for (const auto& e : d.entries) order.push_back(&e);
            if (st.sortKeys)
                std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->first < b->first; });
            out.push_back('{');
            for (size_t i = 0; i < order.size(); ++i) {
                if (i) out += st.itemSeparator;
                if (st.pretty) newline(level + 1);
                jsonString(out, order[i]->first, st.ensureAscii);
                out += st.keySeparator;
                jsonValue(out, order[i]->second, st, level + 1);
            }
            if (st.pretty) newline(level);
            out.push_back('}');
            return;
        }
        default: break;
    }
    throw Error("Object of type " + v.typeName() + " is not JSON serializable");
}

class JsonParser {
public:
    explicit JsonParser(std::string_view t) : t_(t) {}

    Value parseDocument() {
        Value v = parseValue(0);
        skipWs();
        if (p_ != t_.size()) fail("unexpected text after the value");
        return v;
    }

private:
    std::string_view t_;
    size_t p_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw Error("JSON: " + what + " at offset " + std::to_string(p_));
    }
    void skipWs() {
        while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
    }
    bool consume(std::string_view lit) {
        if (t_.substr(p_, lit.size()) == lit) { p_ += lit.size(); return true; }
        return false;
    }

    Value parseValue(int depth) {
        if (depth > kMaxNesting) fail("nesting too deep");
        skipWs();
        if (p_ >= t_.size()) fail("unexpected end of input");
        char c = t_[p_];
        if (c == '{') return parseObject(depth);
        if (c == '[') return parseArray(depth);
        if (c == '"') return Value(parseString());
        if (consume("true")) return Value(true);
        if (consume("false")) return Value(false);
        if (consume("null")) return Value::none();
        if (consume("NaN")) return Value(std::nan(""));
        if (consume("Infinity")) return Value(HUGE_VAL);
        if (consume("-Infinity")) return Value(-HUGE_VAL);
        if (c == '-' || (c >= '0' && c <= '9')) return parseNumber();
        fail(std::string("unexpected character '") + c + "'");
    }

    Value parseObject(int depth) {
        ++p_;
        Value obj = Value::dict();
        skipWs();
        if (p_ < t_.size() && t_[p_] == '}') { ++p_; return obj; }
        for (;;) {
            skipWs();
            if (p_ >= t_.size() || t_[p_] != '"') fail("expected a string key");
            std::string key = parseString();
            skipWs();
            if (p_ >= t_.size() || t_[p_] != ':') fail("expected ':'");
            ++p_;
            obj.set(std::move(key), parseValue(depth + 1));
            skipWs();
            if (p_ < t_.size() && t_[p_] == ',') { ++p_; continue; }
            if (p_ < t_.size() && t_[p_] == '}') { ++p_; return obj; }
            fail("expected ',' or '}'");
        }
    }

    Value parseArray(int depth) {
        ++p_;
        Value arr = Value::list();
        skipWs();
        if (p_ < t_.size() && t_[p_] == ']') { ++p_; return arr; }
        for (;;) {
            arr.append(parseValue(depth + 1));
            skipWs();
            if (p_ < t_.size() && t_[p_] == ',') { ++p_; continue; }
            if (p_ < t_.size() && t_[p_] == ']') { ++p_; return arr; }
            fail("expected ',' or ']'");
        }
    }

    unsigned hex4() {
        if (p_ + 4 > t_.size()) fail("truncated \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            char c = t_[p_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= c - '0';
            else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
            else fail("bad \\u escape");
        }
        return v;
    }

    std::string parseString() {
        ++p_;  // opening quote
        std::string out;
        for (;;) {
            if (p_ >= t_.size()) fail("unterminated string");
            char c = t_[p_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
            if (c != '\\') { out.push_back(c); continue; }
            if (p_ >= t_.size()) fail("unterminated escape");
            char e = t_[p_++];
            switch (e) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': {
                    char32_t cp = hex4();
                    if (cp >= 0xd800 && cp <= 0xdbff && t_.substr(p_, 2) == "\\u") {
                        size_t save = p_;
                        p_ += 2;
                        char32_t lo = hex4();
                        if (lo >= 0xdc00 && lo <= 0xdfff) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        else p_ = save;
                    }
                    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;  // lone surrogate
                    out += py::toUtf8(std::u32string(1, cp));
                    break;
                }
                default: fail(std::string("bad escape '\\") + e + "'");
            }
        }
    }

    Value parseNumber() {
        size_t start = p_;
        if (t_[p_] == '-') ++p_;
        while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
        bool isFloat = false;
        if (p_ < t_.size() && t_[p_] == '.') {
            isFloat = true;
            ++p_;
            while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
        }
        if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
            isFloat = true;
            ++p_;
            if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
            while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
        }
        std::string_view num = t_.substr(start, p_ - start);
        if (!isFloat) {
            int64_t v = 0;
            auto r = std::from_chars(num.data(), num.data() + num.size(), v);
            if (r.ec == std::errc() && r.ptr == num.data() + num.size()) return Value(v);
        }
        double d = 0;
        auto r = std::from_chars(num.data(), num.data() + num.size(), d);
        if (r.ptr != num.data() + num.size()) fail("bad number");
        return Value(d);
    }
};

}  // namespace

std::string Value::toJson(const JsonStyle& style) const {
    std::string out;
    jsonValue(out, *this, style, 0);
    return out;
}

Value Value::parseJson(std::string_view text) { return JsonParser(text).parseDocument(); }

}  // namespace weir::jinja
