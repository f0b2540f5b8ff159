// Filters, tests, methods and global functions of the Jinja subset, each
// following the jinja2 3.1 / Python 3 behaviour chat templates rely on.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "engine/chat/jinja_eval.h"
#include "engine/chat/jinja_provenance.h"

namespace weir::jinja {

namespace {

[[noreturn]] void evalFail(std::string msg) { throw EvalError{std::move(msg)}; }
[[noreturn]] void undefinedFail(const Value& v) { throw EvalError{v.undefinedMessage()}; }

// Appends str(v) (already computed as `text`) with its provenance.
void appendStr(MarkedText& out, const Value& v, const std::string& text) {
    out.untrusted.append(rangesOfStr(v, text.size()), out.text.size());
    out.text += text;
}

// Python's strip on a string value, keeping the provenance of what remains.
Value stripped(const Value& v, bool left, bool right, const std::string* chars) {
    const std::string& s = v.asString();
    const size_t begin = left ? s.size() - py::strip(s, true, false, chars).size() : 0;
    std::string kept = py::strip(s, left, right, chars);
    UntrustedRanges ranges = v.untrustedRanges().slice(begin, begin + kept.size());
    return Value::text(std::move(kept), std::move(ranges));
}

const Value* argAt(const CallArgs& a, size_t pos, const char* name) { return a.find(pos, name); }

bool argBool(const CallArgs& a, size_t pos, const char* name, bool dflt) {
    const Value* v = argAt(a, pos, name);
    return v ? v->truthy() : dflt;
}

std::string requireString(const Value& v, const char* what) {
    if (v.isUndefined()) undefinedFail(v);
    if (!v.isString()) evalFail(std::string(what) + " must be str, not " + v.typeName());
    return v.asString();
}

int64_t requireInt(const Value& v, const char* what) {
    if (v.isUndefined()) undefinedFail(v);
    if (!v.isInt() && !v.isBool()) evalFail(std::string(what) + " must be an integer, not " + v.typeName());
    return v.asInt();
}

Value tupleOf(Value a, Value b) { return Value::tuple({std::move(a), std::move(b)}); }

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then index 0.
Value getAttribute(Interpreter& in, const Value& obj, const Value& attribute) {
    if (!attribute.isString()) return in.getItem(obj, attribute);
    Value cur = obj;
    const std::string& path = attribute.asString();
    size_t start = 0;
    for (;;) {
        size_t dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        int64_t index = 0;
        auto r = std::from_chars(part.data(), part.data() + part.size(), index);
        bool digits = !part.empty() && part[0] != '-' && r.ec == std::errc() && r.ptr == part.data() + part.size();
        cur = in.getItem(cur, digits ? Value(index) : Value(part));
        if (dot == std::string::npos) return cur;
        start = dot + 1;
    }
}

// Key for case-insensitive sorting and comparison (jinja2's ignore_case).
Value caseKey(const Value& v, bool caseSensitive) {
    if (!caseSensitive && v.isString()) return Value(py::lower(v.asString()));
    return v;
}

int cmp(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber()) {
        double x = a.asDouble(), y = b.asDouble();
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.isString() && b.isString()) {
        int c = a.asString().compare(b.asString());
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (a.isList() && b.isList()) {
        const auto &x = a.asList(), &y = b.asList();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (x[i].equals(y[i])) continue;
            return cmp(x[i], y[i]);
        }
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    if (a.isUndefined()) undefinedFail(a);
    if (b.isUndefined()) undefinedFail(b);
    evalFail("'<' not supported between instances of '" + a.typeName() + "' and '" + b.typeName() + "'");
}

std::vector<std::string> splitWhitespace(const std::string& s, int64_t maxsplit) {
    std::u32string u = py::toU32(s);
    std::vector<std::string> out;
    size_t i = 0, n = u.size();
    while (i < n) {
        while (i < n && py::isSpace(u[i])) ++i;
        if (i >= n) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
            out.push_back(py::toUtf8(u.substr(i)));  // the rest, trailing whitespace included
            break;
        }
        size_t j = i;
        while (j < n && !py::isSpace(u[j])) ++j;
        out.push_back(py::toUtf8(u.substr(i, j - i)));
        i = j;
    }
    return out;
}

std::vector<std::string> splitSep(const std::string& s, const std::string& sep, int64_t maxsplit) {
    if (sep.empty()) evalFail("empty separator");
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) break;
        size_t p = s.find(sep, start);
        if (p == std::string::npos) break;
        out.push_back(s.substr(start, p - start));
        start = p + sep.size();
    }
    out.push_back(s.substr(start));
    return out;
}

std::vector<std::string> rsplitSep(const std::string& s, const std::string& sep, int64_t maxsplit) {
    if (sep.empty()) evalFail("empty separator");
    std::vector<std::string> out;
    size_t end = s.size();
    for (;;) {
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) break;
        if (end < sep.size()) break;
        size_t p = s.rfind(sep, end - sep.size());
        if (p == std::string::npos) break;
        out.push_back(s.substr(p + sep.size(), end - p - sep.size()));
        end = p;
    }
    out.push_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
}

std::string replaceAll(const std::string& s, const std::string& from, const std::string& to, int64_t count,
                       size_t limit) {
    if (count == 0) return s;
    std::string out;
    if (from.empty()) {
        // Python inserts the replacement between every character (and at both ends).
        std::u32string u = py::toU32(s);
        int64_t done = 0;
        for (char32_t c : u) {
            if (count < 0 || done < count) { out += to; ++done; }
            out += py::toUtf8(std::u32string(1, c));
            if (out.size() > limit) evalFail("result too large");
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    size_t start = 0;
    int64_t done = 0;
    for (;;) {
        size_t p = (count >= 0 && done >= count) ? std::string::npos : s.find(from, start);
        if (p == std::string::npos) break;
        out.append(s, start, p - start);
        out += to;
        start = p + from.size();
        ++done;
        if (out.size() > limit) evalFail("result too large");
    }
    out.append(s, start, std::string::npos);
    return out;
}

bool isCasedLetter(char32_t c) { return py::upper(py::toUtf8(std::u32string(1, c))) != py::lower(py::toUtf8(std::u32string(1, c))); }

// Python's str.title(): a cased letter after a cased letter goes lower case,
// any other cased letter upper case.
std::string pyTitle(const std::string& s) {
    std::u32string u = py::toU32(s);
    std::string out;
    bool prevCased = false;
    for (char32_t c : u) {
        std::string ch = py::toUtf8(std::u32string(1, c));
        bool cased = isCasedLetter(c);
        out += cased ? (prevCased ? py::lower(ch) : py::upper(ch)) : ch;
        prevCased = cased;
    }
    return out;
}

std::string pyCapitalize(const std::string& s) {
    std::u32string u = py::toU32(s);
    if (u.empty()) return {};
    return py::upper(py::toUtf8(u.substr(0, 1))) + py::lower(py::toUtf8(u.substr(1)));
}

bool isLineBreak(char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x85 ||
           c == 0x2028 || c == 0x2029;
}

// Python's str.splitlines() without keepends.
std::vector<std::string> splitLines(const std::string& s) {
    std::u32string u = py::toU32(s);
    std::vector<std::string> out;
    size_t start = 0, i = 0;
    while (i < u.size()) {
        if (isLineBreak(u[i])) {
            out.push_back(py::toUtf8(u.substr(start, i - start)));
            if (u[i] == '\r' && i + 1 < u.size() && u[i + 1] == '\n') ++i;
            start = ++i;
        } else {
            ++i;
        }
    }
    if (start < u.size()) out.push_back(py::toUtf8(u.substr(start)));
    return out;
}

Value stringList(const std::vector<std::string>& parts) {
    ValueList l;
    l.reserve(parts.size());
    for (const auto& p : parts) l.emplace_back(p);
    return Value::list(std::move(l));
}

template <typename Pred>
bool allChars(const std::string& s, Pred pred) {
    std::u32string u = py::toU32(s);
    if (u.empty()) return false;
    return std::all_of(u.begin(), u.end(), pred);
}

// str.format() with {} / {0} / {name} fields (no format specs beyond none).
std::string pyFormat(const std::string& fmt, const CallArgs& a) {
    std::string out;
    size_t autoIndex = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        char c = fmt[i];
        if (c == '{') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out.push_back('{'); ++i; continue; }
            size_t close = fmt.find('}', i);
            if (close == std::string::npos) evalFail("Single '{' encountered in format string");
            std::string field = fmt.substr(i + 1, close - i - 1);
            if (field.find(':') != std::string::npos || field.find('!') != std::string::npos)
                evalFail("format specs in str.format() are not supported");
            const Value* v = nullptr;
            if (field.empty()) {
                if (autoIndex >= a.positional.size()) evalFail("Replacement index out of range");
                v = &a.positional[autoIndex++];
            } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
                size_t k = 0;
                auto r = std::from_chars(field.data(), field.data() + field.size(), k);
                if (r.ec != std::errc() || k >= a.positional.size()) evalFail("Replacement index out of range");
                v = &a.positional[k];
            } else {
                for (const auto& n : a.named)
                    if (n.first == field) v = &n.second;
                if (!v) evalFail("'" + field + "'");
            }
            out += v->str();
            i = close;
        } else if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out.push_back('}'); ++i; continue; }
            evalFail("Single '}' encountered in format string");
        } else {
            out.push_back(c);
        }
    }
    return out;
}

bool prefixMatch(const Value& self, const CallArgs& a, bool suffix) {
    const std::string& s = self.asString();
    const Value* what = argAt(a, 0, "prefix");
    if (!what) evalFail(std::string(suffix ? "endswith" : "startswith") + "() takes at least 1 argument (0 given)");
    std::string sub = s;
    // Optional start/end are code point offsets.
    const Value* st = argAt(a, 1, "start");
    const Value* en = argAt(a, 2, "end");
    if (st || en) {
        std::u32string u = py::toU32(s);
        int64_t n = static_cast<int64_t>(u.size());
        int64_t b = st && !st->isNone() ? requireInt(*st, "start") : 0;
        int64_t e = en && !en->isNone() ? requireInt(*en, "end") : n;
        if (b < 0) b = std::max<int64_t>(0, b + n);
        if (e < 0) e = std::max<int64_t>(0, e + n);
        b = std::min(b, n);
        e = std::min(e, n);
        sub = b < e ? py::toUtf8(u.substr(b, e - b)) : std::string();
    }
    auto test = [&](const Value& p) {
        const std::string ps = requireString(p, suffix ? "endswith arg" : "startswith arg");
        if (ps.size() > sub.size()) return false;
        return suffix ? sub.compare(sub.size() - ps.size(), ps.size(), ps) == 0 : sub.compare(0, ps.size(), ps) == 0;
    };
    if (what->isTuple()) {
        for (const auto& p : what->asList())
            if (test(p)) return true;
        return false;
    }
    return test(*what);
}

using MethodFn = Value (*)(Interpreter&, const Value&, CallArgs&);

Value strMethod(Interpreter& in, const std::string& name, const Value& self, CallArgs& a) {
    const std::string& s = self.asString();
    auto optChars = [&](size_t pos) -> std::optional<std::string> {
        const Value* c = argAt(a, pos, "chars");
        if (!c || c->isNone()) return std::nullopt;
        return requireString(*c, "strip arg");
    };
    if (name == "startswith") return Value(prefixMatch(self, a, false));
    if (name == "endswith") return Value(prefixMatch(self, a, true));
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        auto chars = optChars(0);
        return stripped(self, name != "rstrip", name != "lstrip", chars ? &*chars : nullptr);
    }
    if (name == "split" || name == "rsplit") {
        const Value* sep = argAt(a, 0, "sep");
        const Value* maxs = argAt(a, 1, "maxsplit");
        int64_t maxsplit = maxs ? requireInt(*maxs, "maxsplit") : -1;
        if (!sep || sep->isNone()) {
            if (name == "rsplit" && maxsplit >= 0) {
                // rsplit on whitespace with a limit: split from the right.
                std::vector<std::string> all = splitWhitespace(s, -1);
                if (static_cast<int64_t>(all.size()) <= maxsplit + 1) return stringList(all);
                std::u32string u = py::toU32(s);
                size_t e = u.size();
                std::vector<std::string> out;
                while (static_cast<int64_t>(out.size()) < maxsplit) {
                    while (e > 0 && py::isSpace(u[e - 1])) --e;
                    size_t b = e;
                    while (b > 0 && !py::isSpace(u[b - 1])) --b;
                    out.push_back(py::toUtf8(u.substr(b, e - b)));
                    e = b;
                }
                while (e > 0 && py::isSpace(u[e - 1])) --e;
                if (e > 0) out.push_back(py::toUtf8(u.substr(0, e)));
                std::reverse(out.begin(), out.end());
                return stringList(out);
            }
            return stringList(splitWhitespace(s, maxsplit));
        }
        std::string sepStr = requireString(*sep, "separator");
        return stringList(name == "split" ? splitSep(s, sepStr, maxsplit) : rsplitSep(s, sepStr, maxsplit));
    }
    if (name == "replace") {
        const Value* from = argAt(a, 0, "old");
        const Value* to = argAt(a, 1, "new");
        if (!from || !to) evalFail("replace() takes at least 2 arguments");
        const Value* count = argAt(a, 2, "count");
        return Value(replaceAll(s, requireString(*from, "replace() argument 1"),
                                requireString(*to, "replace() argument 2"), count ? requireInt(*count, "count") : -1,
                                in.options().maxOutputBytes));
    }
    if (name == "upper") return Value(py::upper(s));
    if (name == "lower") return Value(py::lower(s));
    if (name == "title") return Value(pyTitle(s));
    if (name == "capitalize") return Value(pyCapitalize(s));
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
        const Value* sub = argAt(a, 0, "sub");
        if (!sub) evalFail(name + "() takes at least 1 argument (0 given)");
        std::string needle = requireString(*sub, "substring");
        if (name == "count") {
            if (needle.empty()) return Value(static_cast<int64_t>(py::codepointCount(s) + 1));
            int64_t n = 0;
            for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) ++n;
            return Value(n);
        }
        size_t p = (name == "find" || name == "index") ? s.find(needle) : s.rfind(needle);
        if (p == std::string::npos) {
            if (name == "index" || name == "rindex") evalFail("substring not found");
            return Value(int64_t(-1));
        }
        return Value(static_cast<int64_t>(py::codepointCount(s.substr(0, p))));
    }
    if (name == "join") {
        const Value* items = argAt(a, 0, "iterable");
        if (!items) evalFail("join() takes exactly one argument (0 given)");
        MarkedText out;
        bool first = true;
        for (const auto& v : iterateValue(*items)) {
            if (!v.isString()) evalFail("sequence item: expected str instance, " + v.typeName() + " found");
            if (!first) appendStr(out, self, s);
            appendStr(out, v, v.asString());
            first = false;
            in.checkSize(out.text.size());
        }
        return Value::text(std::move(out.text), std::move(out.untrusted));
    }
    if (name == "splitlines") return stringList(splitLines(s));
    if (name == "removeprefix" || name == "removesuffix") {
        const Value* x = argAt(a, 0, "prefix");
        if (!x) evalFail(name + "() takes exactly one argument (0 given)");
        std::string p = requireString(*x, name.c_str());
        if (name == "removeprefix") return Value(s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
        if (p.size() <= s.size() && s.compare(s.size() - p.size(), p.size(), p) == 0 && !p.empty())
            return Value(s.substr(0, s.size() - p.size()));
        return Value(s);
    }
    if (name == "format") {
        std::string r = pyFormat(s, a);
        in.checkSize(r.size());
        return Value(r);
    }
    if (name == "isdigit") return Value(allChars(s, [](char32_t c) { return c >= '0' && c <= '9'; }));
    if (name == "isalpha") return Value(allChars(s, [](char32_t c) { return isCasedLetter(c) || c > 0x2fff; }));
    if (name == "isalnum")
        return Value(allChars(s, [](char32_t c) { return (c >= '0' && c <= '9') || isCasedLetter(c) || c > 0x2fff; }));
    if (name == "isspace") return Value(allChars(s, [](char32_t c) { return py::isSpace(c); }));
    if (name == "islower" || name == "isupper") {
        bool anyCased = false;
        for (char32_t c : py::toU32(s)) {
            if (!isCasedLetter(c)) continue;
            anyCased = true;
            std::string ch = py::toUtf8(std::u32string(1, c));
            if (name == "islower" ? ch != py::lower(ch) : ch != py::upper(ch)) return Value(false);
        }
        return Value(anyCased);
    }
    return Value();
}

bool isStrMethod(const std::string& n) {
    static const char* const names[] = {"startswith", "endswith", "strip", "lstrip", "rstrip", "split", "rsplit",
                                        "replace", "upper", "lower", "title", "capitalize", "find", "rfind",
                                        "index", "rindex", "count", "join", "splitlines", "removeprefix",
                                        "removesuffix", "format", "isdigit", "isalpha", "isalnum", "isspace",
                                        "islower", "isupper"};
    for (const char* x : names)
        if (n == x) return true;
    return false;
}

}  // namespace

std::string htmlEscape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out.push_back(c);
        }
    }
    return out;
}

// Python's "fmt % args" for the conversions templates use: %s %r %d %i %f %%.
std::string percentFormat(const std::string& fmt, const ValueList& list) {
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') { out.push_back(fmt[i]); continue; }
        if (++i >= fmt.size()) evalFail("incomplete format");
        char c = fmt[i];
        if (c == '%') { out.push_back('%'); continue; }
        if (next >= list.size()) evalFail("not enough arguments for format string");
        const Value& a = list[next++];
        if (c == 's') out += a.str();
        else if (c == 'r') out += a.repr();
        else if (c == 'd' || c == 'i') {
            if (!a.isNumber()) evalFail("%d format: a real number is required, not " + a.typeName());
            out += std::to_string(a.isFloat() ? static_cast<int64_t>(a.asDouble()) : a.asInt());
        } else if (c == 'f') {
            if (!a.isNumber()) evalFail("must be real number, not " + a.typeName());
            char b[64];
            std::snprintf(b, sizeof b, "%f", a.asDouble());
            out += b;
        } else {
            evalFail(std::string("unsupported format character '") + c + "'");
        }
    }
    if (next < list.size()) evalFail("not all arguments converted during string formatting");
    return out;
}

std::vector<Value> iterateValue(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return {};
        case Value::Kind::List: return v.asList();
        case Value::Kind::Dict: {
            if (v.isNamespace()) break;
            std::vector<Value> keys;
            for (const auto& e : v.asDict().entries) keys.push_back(keyValue(v.asDict(), e.first));
            return keys;
        }
        case Value::Kind::String: {
            std::vector<Value> chars;
            const bool untrusted = v.containsUntrusted();
            for (char32_t c : py::toU32(v.asString()))
                chars.push_back(inheritUntrusted(Value(py::toUtf8(std::u32string(1, c))), untrusted));
            return chars;
        }
        default: break;
    }
    throw EvalError{"'" + v.typeName() + "' object is not iterable"};
}

Value builtinMethod(const Value& self, const std::string& name) {
    if (self.isString()) {
        if (!isStrMethod(name)) return Value();
        return Value::callable(name, [self, name](Interpreter& in, CallArgs& a) { return strMethod(in, name, self, a); });
    }
    if (self.isMapping()) {
        if (name == "items")
            return Value::callable(name, [self](Interpreter&, CallArgs&) {
                ValueList l;
                for (const auto& e : self.asDict().entries) l.push_back(tupleOf(keyValue(self.asDict(), e.first), e.second));
                return Value::list(std::move(l));
            });
        if (name == "keys")
            return Value::callable(name, [self](Interpreter&, CallArgs&) { return Value::list(iterateValue(self)); });
        if (name == "values")
            return Value::callable(name, [self](Interpreter&, CallArgs&) {
                ValueList l;
                for (const auto& e : self.asDict().entries) l.push_back(e.second);
                return Value::list(std::move(l));
            });
        if (name == "get")
            return Value::callable(name, [self](Interpreter&, CallArgs& a) {
                const Value* key = argAt(a, 0, "key");
                if (!key) evalFail("get expected at least 1 argument, got 0");
                if (key->isString())
                    if (const Value* v = self.asDict().find(key->asString())) return *v;
                const Value* dflt = argAt(a, 1, "default");
                return dflt ? *dflt : Value::none();
            });
        if (name == "copy")
            return Value::callable(name, [self](Interpreter&, CallArgs&) { return self.copyDict(); });
        if (name == "pop" || name == "popitem" || name == "setdefault" || name == "update" || name == "clear")
            return Value::undefined("access to attribute '" + name + "' of 'dict' object is unsafe.");
        return Value();
    }
    if (self.isList()) {
        if (name == "index" || name == "count")
            return Value::callable(name, [self, name](Interpreter&, CallArgs& a) {
                const Value* x = argAt(a, 0, "value");
                if (!x) evalFail(name + "() takes at least 1 argument");
                int64_t n = 0;
                const auto& items = self.asList();
                for (size_t i = 0; i < items.size(); ++i) {
                    if (!items[i].equals(*x)) continue;
                    if (name == "index") return Value(static_cast<int64_t>(i));
                    ++n;
                }
                if (name == "index") evalFail(x->repr() + " is not in list");
                return Value(n);
            });
        if (name == "append" || name == "extend" || name == "insert" || name == "pop" || name == "remove" ||
            name == "sort" || name == "reverse" || name == "clear")
            return Value::undefined("access to attribute '" + name + "' of '" + self.typeName() +
                                    "' object is unsafe.");
    }
    return Value();
}

// ---------------------------------------------------------------------------
// Filters

namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

Value fLength(Interpreter&, const Value& v, CallArgs&) {
    switch (v.kind()) {
        case Value::Kind::Undefined: return Value(int64_t(0));
        case Value::Kind::String: return Value(static_cast<int64_t>(py::codepointCount(v.asString())));
        case Value::Kind::List: return Value(static_cast<int64_t>(v.asList().size()));
        case Value::Kind::Dict:
            if (!v.isNamespace()) return Value(static_cast<int64_t>(v.asDict().size()));
            break;
        default: break;
    }
    evalFail("object of type '" + v.typeName() + "' has no len()");
}

Value fTrim(Interpreter&, const Value& v, CallArgs& a) {
    const Value* chars = argAt(a, 0, "chars");
    const Value text = v.isString() ? v : Value::text(v.str(), rangesOfStr(v, v.str().size()));
    if (chars && !chars->isNone()) {
        std::string c = requireString(*chars, "strip arg");
        return stripped(text, true, true, &c);
    }
    return stripped(text, true, true, nullptr);
}

Value fUpper(Interpreter&, const Value& v, CallArgs&) { return Value(py::upper(v.str())); }
Value fLower(Interpreter&, const Value& v, CallArgs&) { return Value(py::lower(v.str())); }
Value fCapitalize(Interpreter&, const Value& v, CallArgs&) { return Value(pyCapitalize(v.str())); }

Value fTitle(Interpreter&, const Value& v, CallArgs&) {
    // jinja2: words start after runs of "-", whitespace, "(", "{", "[", "<".
    std::u32string u = py::toU32(v.str());
    std::string out;
    size_t i = 0;
    auto isSep = [](char32_t c) { return c == '-' || py::isSpace(c) || c == '(' || c == '{' || c == '[' || c == '<'; };
    while (i < u.size()) {
        size_t j = i;
        if (isSep(u[i])) {
            while (j < u.size() && isSep(u[j])) ++j;
            out += py::toUtf8(u.substr(i, j - i));
        } else {
            while (j < u.size() && !isSep(u[j])) ++j;
            out += py::upper(py::toUtf8(u.substr(i, 1))) + py::lower(py::toUtf8(u.substr(i + 1, j - i - 1)));
        }
        i = j;
    }
    return Value(out);
}

Value fDefault(Interpreter&, const Value& v, CallArgs& a) {
    const Value* d = argAt(a, 0, "default_value");
    bool boolean = argBool(a, 1, "boolean", false);
    if (v.isUndefined() || (boolean && !v.truthy())) return d ? *d : Value("");
    return v;
}

Value fJoin(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* sep = argAt(a, 0, "d");
    const Value* attribute = argAt(a, 1, "attribute");
    const Value separator = sep ? *sep : Value(std::string());
    const std::string s = separator.str();
    MarkedText out;
    bool first = true;
    for (const auto& item : iterateValue(v)) {
        if (!first) appendStr(out, separator, s);
        first = false;
        const Value part = attribute && !attribute->isNone() ? getAttribute(in, item, *attribute) : item;
        appendStr(out, part, part.str());
        in.checkSize(out.text.size());
    }
    return Value::text(std::move(out.text), std::move(out.untrusted));
}

Value fFirst(Interpreter&, const Value& v, CallArgs&) {
    std::vector<Value> items = iterateValue(v);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value fLast(Interpreter&, const Value& v, CallArgs&) {
    std::vector<Value> items = iterateValue(v);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value fList(Interpreter&, const Value& v, CallArgs&) { return Value::list(iterateValue(v)); }

Value fItems(Interpreter&, const Value& v, CallArgs&) {
    if (v.isUndefined()) return Value::list();
    if (!v.isMapping()) evalFail("Can only get item pairs from a mapping.");
    ValueList l;
    for (const auto& e : v.asDict().entries) l.push_back(tupleOf(keyValue(v.asDict(), e.first), e.second));
    return Value::list(std::move(l));
}

Value fDictsort(Interpreter&, const Value& v, CallArgs& a) {
    if (!v.isMapping()) evalFail("dictsort expects a mapping, not " + v.typeName());
    bool caseSensitive = argBool(a, 0, "case_sensitive", false);
    const Value* by = argAt(a, 1, "by");
    bool reverse = argBool(a, 2, "reverse", false);
    bool byValue = false;
    if (by) {
        std::string b = requireString(*by, "by");
        if (b == "value") byValue = true;
        else if (b != "key") evalFail("You can only sort by either \"key\" or \"value\"");
    }
    ValueList l;
    for (const auto& e : v.asDict().entries) l.push_back(tupleOf(keyValue(v.asDict(), e.first), e.second));
    std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
        int c = cmp(caseKey(x.asList()[byValue ? 1 : 0], caseSensitive), caseKey(y.asList()[byValue ? 1 : 0], caseSensitive));
        return reverse ? c > 0 : c < 0;
    });
    return Value::list(std::move(l));
}

Value fReverse(Interpreter&, const Value& v, CallArgs&) {
    if (v.isString()) {
        std::u32string u = py::toU32(v.asString());
        std::reverse(u.begin(), u.end());
        return Value(py::toUtf8(u));
    }
    std::vector<Value> items = iterateValue(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
}

Value fSort(Interpreter& in, const Value& v, CallArgs& a) {
    bool reverse = argBool(a, 0, "reverse", false);
    bool caseSensitive = argBool(a, 1, "case_sensitive", false);
    const Value* attribute = argAt(a, 2, "attribute");
    std::vector<Value> items = iterateValue(v);
    std::vector<std::pair<Value, Value>> keyed;
    for (auto& item : items) {
        Value k = attribute && !attribute->isNone() ? getAttribute(in, item, *attribute) : item;
        keyed.emplace_back(caseKey(k, caseSensitive), item);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        int c = cmp(x.first, y.first);
        return reverse ? c > 0 : c < 0;
    });
    ValueList out;
    for (auto& k : keyed) out.push_back(std::move(k.second));
    return Value::list(std::move(out));
}

Value fUnique(Interpreter& in, const Value& v, CallArgs& a) {
    bool caseSensitive = argBool(a, 0, "case_sensitive", false);
    const Value* attribute = argAt(a, 1, "attribute");
    ValueList out;
    std::vector<Value> seen;
    for (const auto& item : iterateValue(v)) {
        Value k = caseKey(attribute && !attribute->isNone() ? getAttribute(in, item, *attribute) : item, caseSensitive);
        bool dup = std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return s.equals(k); });
        if (dup) continue;
        seen.push_back(k);
        out.push_back(item);
    }
    return Value::list(std::move(out));
}

Value minMax(Interpreter& in, const Value& v, CallArgs& a, bool wantMax) {
    bool caseSensitive = argBool(a, 0, "case_sensitive", false);
    const Value* attribute = argAt(a, 1, "attribute");
    std::vector<Value> items = iterateValue(v);
    if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
    size_t best = 0;
    Value bestKey;
    for (size_t i = 0; i < items.size(); ++i) {
        Value k = caseKey(attribute && !attribute->isNone() ? getAttribute(in, items[i], *attribute) : items[i],
                          caseSensitive);
        if (i == 0 || (wantMax ? cmp(k, bestKey) > 0 : cmp(k, bestKey) < 0)) {
            best = i;
            bestKey = k;
        }
    }
    return items[best];
}
Value fMin(Interpreter& in, const Value& v, CallArgs& a) { return minMax(in, v, a, false); }
Value fMax(Interpreter& in, const Value& v, CallArgs& a) { return minMax(in, v, a, true); }

Value fSum(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* attribute = argAt(a, 0, "attribute");
    const Value* start = argAt(a, 1, "start");
    Value total = start ? *start : Value(int64_t(0));
    for (const auto& item : iterateValue(v)) {
        Value x = attribute && !attribute->isNone() ? getAttribute(in, item, *attribute) : item;
        if (!total.isNumber() || !x.isNumber())
            evalFail("unsupported operand type(s) for +: '" + total.typeName() + "' and '" + x.typeName() + "'");
        if (total.isFloat() || x.isFloat()) total = Value(total.asDouble() + x.asDouble());
        else {
            int64_t r;
            if (__builtin_add_overflow(total.asInt(), x.asInt(), &r)) evalFail("integer overflow");
            total = Value(r);
        }
    }
    return total;
}

Value fString(Interpreter&, const Value& v, CallArgs&) { return v.isString() ? v : Value(v.str()); }
Value fSafe(Interpreter&, const Value& v, CallArgs&) { return v.isMarkup() ? v : Value::markup(v.str()); }
// escape() leaves Markup alone; forceescape escapes it anyway.
Value fEscape(Interpreter&, const Value& v, CallArgs&) { return v.isMarkup() ? v : Value::markup(htmlEscape(v.str())); }
Value fForceescape(Interpreter&, const Value& v, CallArgs&) { return Value::markup(htmlEscape(v.str())); }

std::optional<int64_t> parseIntText(std::string text, int base) {
    text = py::strip(text, true, true);
    std::string clean;
    for (char c : text)
        if (c != '_') clean.push_back(c);
    if (clean.empty()) return std::nullopt;
    size_t i = 0;
    bool neg = false;
    if (clean[0] == '+' || clean[0] == '-') { neg = clean[0] == '-'; i = 1; }
    if (base == 16 && clean.compare(i, 2, "0x") == 0) i += 2;
    if (i >= clean.size()) return std::nullopt;
    int64_t v = 0;
    for (; i < clean.size(); ++i) {
        char c = clean[i];
        int d = (c >= '0' && c <= '9') ? c - '0' : ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? (c | 0x20) - 'a' + 10 : 99;
        if (d >= base) return std::nullopt;
        if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)) return std::nullopt;
    }
    return neg ? -v : v;
}

std::optional<double> parseFloatText(const std::string& text) {
    std::string t = py::strip(text, true, true);
    if (t.empty()) return std::nullopt;
    char* end = nullptr;
    double d = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size()) return std::nullopt;
    return d;
}

Value fInt(Interpreter&, const Value& v, CallArgs& a) {
    const Value* dflt = argAt(a, 0, "default");
    const Value* baseArg = argAt(a, 1, "base");
    int base = baseArg ? static_cast<int>(requireInt(*baseArg, "base")) : 10;
    Value fallback = dflt ? *dflt : Value(int64_t(0));
    if (v.isBool() || v.isInt()) return Value(v.asInt());
    if (v.isFloat()) {
        double d = v.asDouble();
        if (!std::isfinite(d)) return fallback;
        return Value(static_cast<int64_t>(std::trunc(d)));
    }
    if (v.isString()) {
        if (auto i = parseIntText(v.asString(), base)) return Value(*i);
        if (auto f = parseFloatText(v.asString()); f && std::isfinite(*f)) return Value(static_cast<int64_t>(std::trunc(*f)));
    }
    return fallback;
}

Value fFloat(Interpreter&, const Value& v, CallArgs& a) {
    const Value* dflt = argAt(a, 0, "default");
    if (v.isNumber()) return Value(v.asDouble());
    if (v.isString())
        if (auto f = parseFloatText(v.asString())) return Value(*f);
    return dflt ? *dflt : Value(0.0);
}

Value fAbs(Interpreter&, const Value& v, CallArgs&) {
    if (v.isFloat()) return Value(std::fabs(v.asDouble()));
    if (v.isInt() || v.isBool()) {
        if (v.asInt() == INT64_MIN) evalFail("integer overflow");
        return Value(v.asInt() < 0 ? -v.asInt() : v.asInt());
    }
    evalFail("bad operand type for abs(): '" + v.typeName() + "'");
}

Value fRound(Interpreter&, const Value& v, CallArgs& a) {
    if (!v.isNumber()) evalFail("type " + v.typeName() + " doesn't define __round__ method");
    const Value* precArg = argAt(a, 0, "precision");
    const Value* methodArg = argAt(a, 1, "method");
    int64_t precision = precArg ? requireInt(*precArg, "precision") : 0;
    std::string method = methodArg ? requireString(*methodArg, "method") : "common";
    double scale = std::pow(10.0, static_cast<double>(precision));
    double x = v.asDouble() * scale;
    double r;
    if (method == "common") r = std::nearbyint(x);  // round half to even, like Python's round()
    else if (method == "ceil") r = std::ceil(x);
    else if (method == "floor") r = std::floor(x);
    else evalFail("method must be common, ceil or floor");
    return Value(r / scale);
}

Value fIndent(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* widthArg = argAt(a, 0, "width");
    bool first = argBool(a, 1, "first", false);
    bool blank = argBool(a, 2, "blank", false);
    int64_t width = widthArg && !widthArg->isString() ? requireInt(*widthArg, "width") : 4;
    if (width > 1024) evalFail("indent width too large");
    std::string indention = widthArg && widthArg->isString() ? widthArg->asString() : std::string(std::max<int64_t>(0, width), ' ');
    std::string s = v.str() + "\n";
    std::vector<std::string> lines = splitLines(s);
    std::string rv;
    if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i) rv += "\n" + indention;
            rv += lines[i];
        }
    } else {
        rv = lines.empty() ? std::string() : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? lines[i] : indention + lines[i]);
    }
    if (first) rv = indention + rv;
    in.checkSize(rv.size());
    return Value(rv);
}

Value fReplace(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* from = argAt(a, 0, "old");
    const Value* to = argAt(a, 1, "new");
    if (!from || !to) evalFail("replace filter needs old and new");
    const Value* count = argAt(a, 2, "count");
    int64_t n = count && !count->isNone() ? requireInt(*count, "count") : -1;
    return Value(replaceAll(v.str(), from->str(), to->str(), n, in.options().maxOutputBytes));
}

Value fFormat(Interpreter& in, const Value& v, CallArgs& a) {
    if (!a.named.empty() && !a.positional.empty())
        evalFail("can't handle positional and keyword arguments at the same time");
    std::string r = percentFormat(v.str(), a.positional);
    in.checkSize(r.size());
    return Value(r);
}

Value fWordcount(Interpreter&, const Value& v, CallArgs&) {
    int64_t n = 0;
    bool inWord = false;
    for (char32_t c : py::toU32(v.str())) {
        bool w = (c >= '0' && c <= '9') || c == '_' || isCasedLetter(c) || c > 0x2fff;
        if (w && !inWord) ++n;
        inWord = w;
    }
    return Value(n);
}

Value fAttr(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* name = argAt(a, 0, "name");
    if (!name) evalFail("attr filter needs a name");
    std::string n = requireString(*name, "attribute name");
    if (v.isMapping()) {
        Value m = builtinMethod(v, n);
        if (!m.isUndefined()) return m;
        return Value::undefined("'dict object' has no attribute '" + n + "'");
    }
    return in.getAttr(v, n);
}

Value fTojson(Interpreter& in, const Value& v, CallArgs& a) {
    // HF's tojson(x, ensure_ascii=False, indent=None, separators=None,
    // sort_keys=False) calls json.dumps with those arguments.
    Value::JsonStyle st;
    st.ensureAscii = argBool(a, 0, "ensure_ascii", false);
    const Value* indent = argAt(a, 1, "indent");
    if (indent && !indent->isNone()) {
        st.pretty = true;
        if (indent->isString()) st.indent = indent->asString();
        else {
            int64_t n = requireInt(*indent, "indent");
            if (n > 1024) evalFail("tojson indent too large");
            st.indent = std::string(std::max<int64_t>(0, n), ' ');
        }
        st.itemSeparator = ",";
    }
    if (const Value* seps = argAt(a, 2, "separators"); seps && !seps->isNone()) {
        if (!seps->isList() || seps->asList().size() != 2) evalFail("separators must be a pair of strings");
        st.itemSeparator = requireString(seps->asList()[0], "item separator");
        st.keySeparator = requireString(seps->asList()[1], "key separator");
    }
    st.sortKeys = argBool(a, 3, "sort_keys", false);
    try {
        std::string json = v.toJson(st);
        in.checkSize(json.size());
        return Value(std::move(json));
    } catch (const Error& e) {
        evalFail(e.what());
    }
}

// map(filter, args...) or map(attribute='x', default=...)
Value fMap(Interpreter& in, const Value& v, CallArgs& a) {
    if (!v.truthy()) return Value::list();  // jinja2 maps nothing over a falsy value, even None
    std::vector<Value> items = iterateValue(v);
    ValueList out;
    const Value* attribute = nullptr;
    for (const auto& n : a.named)
        if (n.first == "attribute") attribute = &n.second;
    if (attribute) {
        const Value* dflt = nullptr;
        for (const auto& n : a.named)
            if (n.first == "default") dflt = &n.second;
        for (const auto& item : items) {
            Value x = getAttribute(in, item, *attribute);
            out.push_back(x.isUndefined() && dflt ? *dflt : x);
        }
        return Value::list(std::move(out));
    }
    if (a.positional.empty()) evalFail("map requires a filter argument");
    std::string filter = requireString(a.positional[0], "filter name");
    if (!hasFilter(filter)) evalFail("No filter named '" + filter + "'");
    CallArgs rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.named = a.named;
    for (const auto& item : items) {
        CallArgs copy = rest;
        out.push_back(in.applyFilter(filter, item, copy));
    }
    return Value::list(std::move(out));
}

Value selectOrReject(Interpreter& in, const Value& v, CallArgs& a, bool byAttr, bool select) {
    if (!v.truthy()) return Value::list();  // as jinja2: a falsy value (None too) selects nothing
    std::vector<Value> items = iterateValue(v);
    size_t off = 0;
    Value attribute;
    if (byAttr) {
        if (a.positional.empty()) evalFail("Missing parameter for attribute name");
        attribute = a.positional[0];
        off = 1;
    }
    std::string test;
    bool haveTest = a.positional.size() > off;
    if (haveTest) {
        test = requireString(a.positional[off], "test name");
        if (!hasTest(test)) evalFail("No test named '" + test + "'");
    }
    CallArgs rest;
    if (haveTest) rest.positional.assign(a.positional.begin() + off + 1, a.positional.end());
    rest.named = a.named;
    ValueList out;
    for (const auto& item : items) {
        Value subject = byAttr ? getAttribute(in, item, attribute) : item;
        bool ok;
        if (haveTest) {
            CallArgs copy = rest;
            ok = in.applyTest(test, subject, copy);
        } else {
            ok = subject.truthy();
        }
        if (ok == select) out.push_back(item);
    }
    return Value::list(std::move(out));
}
Value fSelect(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, false, true); }
Value fReject(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, false, false); }
Value fSelectattr(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, true, true); }
Value fRejectattr(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, true, false); }

const std::unordered_map<std::string, FilterFn>& filterTable() {
    static const std::unordered_map<std::string, FilterFn> t = {
        {"abs", fAbs},           {"attr", fAttr},         {"capitalize", fCapitalize}, {"count", fLength},
        {"d", fDefault},         {"default", fDefault},   {"dictsort", fDictsort},     {"e", fEscape},
        {"escape", fEscape},     {"forceescape", fForceescape}, {"first", fFirst},       {"float", fFloat},           {"format", fFormat},
        {"indent", fIndent},     {"int", fInt},           {"items", fItems},           {"join", fJoin},
        {"last", fLast},         {"length", fLength},     {"list", fList},             {"lower", fLower},
        {"map", fMap},           {"max", fMax},           {"min", fMin},               {"reject", fReject},
        {"rejectattr", fRejectattr}, {"replace", fReplace}, {"reverse", fReverse},    {"round", fRound},
        {"safe", fSafe},         {"select", fSelect},     {"selectattr", fSelectattr}, {"sort", fSort},
        {"string", fString},     {"sum", fSum},           {"title", fTitle},           {"tojson", fTojson},
        {"trim", fTrim},         {"unique", fUnique},     {"upper", fUpper},           {"wordcount", fWordcount},
    };
    return t;
}

// ---------------------------------------------------------------------------
// Tests

using TestFn = bool (*)(Interpreter&, const Value&, CallArgs&);

const Value& testArg(const CallArgs& a, const char* name) {
    const Value* v = argAt(a, 0, name);
    if (!v) evalFail(std::string("test needs an argument '") + name + "'");
    return *v;
}

bool tDefined(Interpreter&, const Value& v, CallArgs&) { return !v.isUndefined(); }
bool tUndefined(Interpreter&, const Value& v, CallArgs&) { return v.isUndefined(); }
bool tNone(Interpreter&, const Value& v, CallArgs&) { return v.isNone(); }
bool tBoolean(Interpreter&, const Value& v, CallArgs&) { return v.isBool(); }
bool tTrue(Interpreter&, const Value& v, CallArgs&) { return v.isBool() && v.asBool(); }
bool tFalse(Interpreter&, const Value& v, CallArgs&) { return v.isBool() && !v.asBool(); }
bool tInteger(Interpreter&, const Value& v, CallArgs&) { return v.isInt(); }
bool tFloat(Interpreter&, const Value& v, CallArgs&) { return v.isFloat(); }
bool tNumber(Interpreter&, const Value& v, CallArgs&) { return v.isNumber(); }
bool tString(Interpreter&, const Value& v, CallArgs&) { return v.isString(); }
bool tMapping(Interpreter&, const Value& v, CallArgs&) { return v.isMapping(); }
// Undefined iterates as empty and, like jinja2's Undefined, counts as a sequence.
bool tIterable(Interpreter&, const Value& v, CallArgs&) {
    return v.isUndefined() || v.isString() || v.isList() || v.isMapping();
}
bool tSequence(Interpreter&, const Value& v, CallArgs&) {
    return v.isUndefined() || v.isString() || v.isList() || v.isMapping();
}
bool tCallable(Interpreter&, const Value& v, CallArgs&) { return v.isCallable() || v.isUndefined(); }
bool tEq(Interpreter&, const Value& v, CallArgs& a) { return v.equals(testArg(a, "other")); }
bool tNe(Interpreter&, const Value& v, CallArgs& a) { return !v.equals(testArg(a, "other")); }
bool tLt(Interpreter&, const Value& v, CallArgs& a) { return cmp(v, testArg(a, "other")) < 0; }
bool tLe(Interpreter&, const Value& v, CallArgs& a) { return cmp(v, testArg(a, "other")) <= 0; }
bool tGt(Interpreter&, const Value& v, CallArgs& a) { return cmp(v, testArg(a, "other")) > 0; }
bool tGe(Interpreter&, const Value& v, CallArgs& a) { return cmp(v, testArg(a, "other")) >= 0; }
bool tSameas(Interpreter&, const Value& v, CallArgs& a) { return v.sameObject(testArg(a, "other")); }
bool tIn(Interpreter&, const Value& v, CallArgs& a) {
    const Value& seq = testArg(a, "seq");
    if (seq.isString()) return v.isString() && seq.asString().find(v.asString()) != std::string::npos;
    for (const auto& x : iterateValue(seq))
        if (x.equals(v)) return true;
    return false;
}
int64_t intOf(const Value& v) {
    if (v.isUndefined()) undefinedFail(v);
    if (!v.isNumber()) evalFail("unsupported operand type(s) for %: '" + v.typeName() + "' and 'int'");
    return v.isFloat() ? static_cast<int64_t>(v.asDouble()) : v.asInt();
}
bool tEven(Interpreter&, const Value& v, CallArgs&) { return v.isFloat() ? std::fmod(v.asDouble(), 2) == 0 : intOf(v) % 2 == 0; }
bool tOdd(Interpreter&, const Value& v, CallArgs&) { return v.isFloat() ? std::fabs(std::fmod(v.asDouble(), 2)) == 1 : intOf(v) % 2 != 0; }
bool tDivisibleby(Interpreter&, const Value& v, CallArgs& a) {
    const Value& n = testArg(a, "num");
    if (n.isNumber() && n.asDouble() == 0) evalFail("integer division or modulo by zero");
    if (v.isFloat() || n.isFloat()) return std::fmod(v.asDouble(), n.asDouble()) == 0;
    return intOf(v) % intOf(n) == 0;
}
bool tLower(Interpreter&, const Value& v, CallArgs&) {
    std::string s = v.str();
    return py::lower(s) == s && py::upper(s) != s;
}
bool tUpper(Interpreter&, const Value& v, CallArgs&) {
    std::string s = v.str();
    return py::upper(s) == s && py::lower(s) != s;
}
bool tEscaped(Interpreter&, const Value&, CallArgs&) { return false; }
bool tFilter(Interpreter&, const Value& v, CallArgs&) { return v.isString() && hasFilter(v.asString()); }
bool tTest(Interpreter&, const Value& v, CallArgs&) { return v.isString() && hasTest(v.asString()); }

const std::unordered_map<std::string, TestFn>& testTable() {
    static const std::unordered_map<std::string, TestFn> t = {
        {"defined", tDefined},   {"undefined", tUndefined}, {"none", tNone},         {"boolean", tBoolean},
        {"true", tTrue},         {"false", tFalse},         {"integer", tInteger},   {"float", tFloat},
        {"number", tNumber},     {"string", tString},       {"mapping", tMapping},   {"iterable", tIterable},
        {"sequence", tSequence}, {"callable", tCallable},   {"eq", tEq},             {"equalto", tEq},
        {"==", tEq},             {"ne", tNe},               {"!=", tNe},             {"lt", tLt},
        {"lessthan", tLt},       {"<", tLt},                {"le", tLe},             {"<=", tLe},
        {"gt", tGt},             {"greaterthan", tGt},      {">", tGt},              {"ge", tGe},
        {">=", tGe},             {"sameas", tSameas},       {"in", tIn},             {"even", tEven},
        {"odd", tOdd},           {"divisibleby", tDivisibleby}, {"lower", tLower},   {"upper", tUpper},
        {"escaped", tEscaped},   {"filter", tFilter},       {"test", tTest},
    };
    return t;
}

}  // namespace

bool hasFilter(const std::string& name) { return filterTable().count(name) != 0; }
bool hasTest(const std::string& name) { return testTable().count(name) != 0; }

Value builtinFilter(Interpreter& in, const std::string& name, const Value& subject, CallArgs& args, bool& found) {
    auto it = filterTable().find(name);
    found = it != filterTable().end();
    if (!found) return Value();
    return it->second(in, subject, args);
}

bool builtinTest(Interpreter& in, const std::string& name, const Value& subject, CallArgs& args, bool& found) {
    auto it = testTable().find(name);
    found = it != testTable().end();
    if (!found) return false;
    return it->second(in, subject, args);
}

// ---------------------------------------------------------------------------
// Time formatting and globals

std::string formatTime(std::string_view format, int64_t epochSeconds, bool utc) {
    static const char* const days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    static const char* const months[] = {"January", "February", "March",     "April",   "May",      "June",
                                         "July",    "August",   "September", "October", "November", "December"};
    std::time_t t = static_cast<std::time_t>(epochSeconds);
    std::tm tm{};
    if (utc) gmtime_r(&t, &tm);
    else localtime_r(&t, &tm);
    std::string out;
    char buf[64];
    for (size_t i = 0; i < format.size(); ++i) {
        char c = format[i];
        if (c != '%' || i + 1 >= format.size()) { out.push_back(c); continue; }
        char f = format[++i];
        switch (f) {
            case 'a': out += std::string(days[tm.tm_wday]).substr(0, 3); break;
            case 'A': out += days[tm.tm_wday]; break;
            case 'b': case 'h': out += std::string(months[tm.tm_mon]).substr(0, 3); break;
            case 'B': out += months[tm.tm_mon]; break;
            case 'd': std::snprintf(buf, sizeof buf, "%02d", tm.tm_mday); out += buf; break;
            case 'e': std::snprintf(buf, sizeof buf, "%2d", tm.tm_mday); out += buf; break;
            case 'm': std::snprintf(buf, sizeof buf, "%02d", tm.tm_mon + 1); out += buf; break;
            case 'Y': std::snprintf(buf, sizeof buf, "%d", tm.tm_year + 1900); out += buf; break;
            case 'y': std::snprintf(buf, sizeof buf, "%02d", (tm.tm_year + 1900) % 100); out += buf; break;
            case 'H': std::snprintf(buf, sizeof buf, "%02d", tm.tm_hour); out += buf; break;
            case 'I': std::snprintf(buf, sizeof buf, "%02d", tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12); out += buf; break;
            case 'M': std::snprintf(buf, sizeof buf, "%02d", tm.tm_min); out += buf; break;
            case 'S': std::snprintf(buf, sizeof buf, "%02d", tm.tm_sec); out += buf; break;
            case 'p': out += tm.tm_hour < 12 ? "AM" : "PM"; break;
            case 'j': std::snprintf(buf, sizeof buf, "%03d", tm.tm_yday + 1); out += buf; break;
            case 'w': out += std::to_string(tm.tm_wday); break;
            case 'F': std::snprintf(buf, sizeof buf, "%d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday); out += buf; break;
            case 'T': std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec); out += buf; break;
            case 'D': std::snprintf(buf, sizeof buf, "%02d/%02d/%02d", tm.tm_mon + 1, tm.tm_mday, (tm.tm_year + 1900) % 100); out += buf; break;
            case 'R': std::snprintf(buf, sizeof buf, "%02d:%02d", tm.tm_hour, tm.tm_min); out += buf; break;
            case 'Z': out += utc ? "UTC" : (tm.tm_zone ? tm.tm_zone : ""); break;
            case 'z': {
                long off = utc ? 0 : tm.tm_gmtoff;
                std::snprintf(buf, sizeof buf, "%c%02ld%02ld", off < 0 ? '-' : '+', std::labs(off) / 3600, (std::labs(off) % 3600) / 60);
                out += buf;
                break;
            }
            case '%': out.push_back('%'); break;
            default: out.push_back('%'); out.push_back(f); break;
        }
    }
    return out;
}

void installBuiltinGlobals(std::unordered_map<std::string, Value>& g, const RenderOptions& options) {
    g["range"] = Value::callable("range", [](Interpreter&, CallArgs& a) {
        if (a.positional.empty() || a.positional.size() > 3) evalFail("range expected 1 to 3 arguments");
        int64_t start = 0, stop, step = 1;
        if (a.positional.size() == 1) stop = requireInt(a.positional[0], "range argument");
        else {
            start = requireInt(a.positional[0], "range argument");
            stop = requireInt(a.positional[1], "range argument");
            if (a.positional.size() == 3) step = requireInt(a.positional[2], "range argument");
        }
        if (step == 0) evalFail("range() arg 3 must not be zero");
        ValueList out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
            if (out.size() >= 1'000'000) evalFail("range too large (more than 1000000 items)");
            out.emplace_back(i);
        }
        return Value::list(std::move(out));
    });
    auto makeDict = [](CallArgs& a, bool ns) {
        Value d = ns ? Value::namespaceObject() : Value::dict();
        if (!a.positional.empty()) {
            const Value& init = a.positional[0];
            if (init.isMapping()) {
                for (const auto& e : init.asDict().entries) d.set(e.first, e.second);
                if (init.asDict().untrustedKeys) d.mutableDict().untrustedKeys = true;
            } else {
                for (const auto& pair : iterateValue(init)) {
                    std::vector<Value> kv = iterateValue(pair);
                    if (kv.size() != 2 || !kv[0].isString()) evalFail("dictionary update sequence element has wrong form");
                    if (!kv[0].untrustedRanges().empty()) d.mutableDict().untrustedKeys = true;
                    d.set(kv[0].asString(), kv[1]);
                }
            }
        }
        for (const auto& n : a.named) d.set(n.first, n.second);
        return d;
    };
    g["namespace"] = Value::callable("namespace", [makeDict](Interpreter& in, CallArgs& a) {
        Value ns = makeDict(a, true);
        in.adoptNamespace(ns);
        return ns;
    });
    g["dict"] = Value::callable("dict", [makeDict](Interpreter&, CallArgs& a) { return makeDict(a, false); });
    g["raise_exception"] = Value::callable("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
        const Value* msg = argAt(a, 0, "message");
        throw RaiseSignal{msg ? msg->str() : std::string()};
    });
    std::optional<int64_t> fixed = options.fixedNow;
    g["strftime_now"] = Value::callable("strftime_now", [fixed](Interpreter&, CallArgs& a) {
        const Value* fmt = argAt(a, 0, "format");
        if (!fmt) evalFail("strftime_now needs a format");
        int64_t now = fixed ? *fixed : static_cast<int64_t>(std::time(nullptr));
        return Value(formatTime(requireString(*fmt, "format"), now, fixed.has_value()));
    });
    g["joiner"] = Value::callable("joiner", [](Interpreter&, CallArgs& a) {
        std::string sep = argAt(a, 0, "sep") ? argAt(a, 0, "sep")->str() : std::string(", ");
        auto used = std::make_shared<bool>(false);
        return Value::callable("joiner", [sep, used](Interpreter&, CallArgs&) {
            if (!*used) { *used = true; return Value(""); }
            return Value(sep);
        });
    });
}

}  // namespace weir::jinja
