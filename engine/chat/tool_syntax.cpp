#include "engine/chat/tool_syntax.h"

#include "engine/tokenizer/utf8.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <exception>

namespace weir::toolsyntax {

namespace {

constexpr int kMaxDepth = 64;  // nesting a model's call may use; deeper is malformed

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void skipSpace(std::string_view t, size_t& p) {
    while (p < t.size() && isSpace(t[p])) ++p;
}

bool startsWith(std::string_view t, size_t p, std::string_view s) {
    return t.size() >= p && t.size() - p >= s.size() && t.compare(p, s.size(), s) == 0;
}

// A JSON-style number at t[p] (also Python's forms: leading +, trailing "."),
// as int when it has no fraction or exponent.
std::optional<jinja::Value> readNumber(std::string_view t, size_t& p) {
    size_t q = p;
    if (q < t.size() && (t[q] == '-' || t[q] == '+')) ++q;
    const size_t digitsFrom = q;
    while (q < t.size() && std::isdigit(static_cast<unsigned char>(t[q]))) ++q;
    bool isFloat = false;
    if (q < t.size() && t[q] == '.') {
        isFloat = true;
        ++q;
        while (q < t.size() && std::isdigit(static_cast<unsigned char>(t[q]))) ++q;
    }
    if (q == digitsFrom || (q == digitsFrom + 1 && t[digitsFrom] == '.')) return std::nullopt;
    if (q < t.size() && (t[q] == 'e' || t[q] == 'E')) {
        size_t e = q + 1;
        if (e < t.size() && (t[e] == '-' || t[e] == '+')) ++e;
        const size_t expFrom = e;
        while (e < t.size() && std::isdigit(static_cast<unsigned char>(t[e]))) ++e;
        if (e > expFrom) {
            isFloat = true;
            q = e;
        }
    }
    std::string s(t.substr(p, q - p));
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    p = q;
    if (!isFloat) {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (errno == 0 && end && *end == '\0') return jinja::Value(int64_t(v));
    }
    return jinja::Value(std::strtod(s.c_str(), nullptr));
}

// ------------------------------------------------------------- Gemma values

struct GemmaReader {
    std::string_view t;
    std::string_view esc;

    std::optional<jinja::Value> value(size_t& p, int depth) {
        if (depth > kMaxDepth) return std::nullopt;
        skipSpace(t, p);
        if (p >= t.size()) return std::nullopt;
        if (startsWith(t, p, esc)) {
            const size_t from = p + esc.size();
            const size_t to = t.find(esc, from);
            if (to == std::string_view::npos) return std::nullopt;
            p = to + esc.size();
            return jinja::Value(std::string(t.substr(from, to - from)));
        }
        const char c = t[p];
        if (c == '{') return object(p, depth);
        if (c == '[') return list(p, depth);
        // A bare word: number, literal, or an unmarked string.
        size_t end = p;
        while (end < t.size() && t[end] != ',' && t[end] != '}' && t[end] != ']' && !startsWith(t, end, esc)) ++end;
        std::string_view word = t.substr(p, end - p);
        while (!word.empty() && isSpace(word.back())) word.remove_suffix(1);
        if (word.empty()) return std::nullopt;
        const size_t after = p + word.size();
        if (word == "true" || word == "True") { p = after; return jinja::Value(true); }
        if (word == "false" || word == "False") { p = after; return jinja::Value(false); }
        if (word == "null" || word == "None") { p = after; return jinja::Value::none(); }
        size_t q = p;
        if (auto n = readNumber(t, q); n && q == after) {
            p = q;
            return n;
        }
        p = after;
        return jinja::Value(std::string(word));
    }

    std::optional<std::string> key(size_t& p) {
        skipSpace(t, p);
        if (startsWith(t, p, esc)) {
            const size_t from = p + esc.size();
            const size_t to = t.find(esc, from);
            if (to == std::string_view::npos) return std::nullopt;
            p = to + esc.size();
            return std::string(t.substr(from, to - from));
        }
        size_t end = p;
        while (end < t.size() && t[end] != ':' && t[end] != ',' && t[end] != '{' && t[end] != '}' &&
               t[end] != '[' && t[end] != ']')
            ++end;
        std::string_view k = t.substr(p, end - p);
        while (!k.empty() && isSpace(k.back())) k.remove_suffix(1);
        if (k.empty()) return std::nullopt;
        p = end;
        return std::string(k);
    }

    std::optional<jinja::Value> object(size_t& p, int depth) {
        ++p;  // {
        jinja::Value d = jinja::Value::dict();
        skipSpace(t, p);
        if (p < t.size() && t[p] == '}') { ++p; return d; }
        for (;;) {
            auto k = key(p);
            if (!k) return std::nullopt;
            skipSpace(t, p);
            if (p >= t.size() || t[p] != ':') return std::nullopt;
            ++p;
            auto v = value(p, depth + 1);
            if (!v) return std::nullopt;
            d.set(*k, std::move(*v));
            skipSpace(t, p);
            if (p >= t.size()) return std::nullopt;
            if (t[p] == ',') { ++p; continue; }
            if (t[p] == '}') { ++p; return d; }
            return std::nullopt;
        }
    }

    std::optional<jinja::Value> list(size_t& p, int depth) {
        ++p;  // [
        jinja::Value l = jinja::Value::list();
        skipSpace(t, p);
        if (p < t.size() && t[p] == ']') { ++p; return l; }
        for (;;) {
            auto v = value(p, depth + 1);
            if (!v) return std::nullopt;
            l.append(std::move(*v));
            skipSpace(t, p);
            if (p >= t.size()) return std::nullopt;
            if (t[p] == ',') { ++p; continue; }
            if (t[p] == ']') { ++p; return l; }
            return std::nullopt;
        }
    }
};

// ------------------------------------------------------------ Python calls

struct PythonReader {
    std::string_view t;

    static bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
    static bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

    std::optional<std::string> identifier(size_t& p, bool dotted) {
        skipSpace(t, p);
        if (p >= t.size() || !identStart(t[p])) return std::nullopt;
        size_t q = p;
        while (q < t.size() && (identChar(t[q]) || (dotted && t[q] == '.' && q + 1 < t.size() && identStart(t[q + 1]))))
            ++q;
        std::string s(t.substr(p, q - p));
        p = q;
        return s;
    }

    std::optional<std::string> string(size_t& p) {
        const char quote = t[p];
        ++p;
        std::string out;
        while (p < t.size()) {
            const char c = t[p];
            if (c == quote) { ++p; return out; }
            if (c == '\n') return std::nullopt;
            if (c != '\\') { out += c; ++p; continue; }
            if (p + 1 >= t.size()) return std::nullopt;
            const char e = t[p + 1];
            p += 2;
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case '0': out += '\0'; break;
            case 'u':
            case 'x': {
                const size_t n = e == 'u' ? 4 : 2;
                if (p + n > t.size()) return std::nullopt;
                uint32_t cp = 0;
                for (size_t i = 0; i < n; ++i) {
                    const char h = t[p + i];
                    if (!std::isxdigit(static_cast<unsigned char>(h))) return std::nullopt;
                    cp = cp * 16 + uint32_t(std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                                                                                        : (std::tolower(h) - 'a' + 10));
                }
                p += n;
                tok::appendUtf8(out, cp);
                break;
            }
            default: out += e; break;  // \\ \' \" and anything else literally
            }
        }
        return std::nullopt;
    }

    std::optional<jinja::Value> value(size_t& p, int depth) {
        if (depth > kMaxDepth) return std::nullopt;
        skipSpace(t, p);
        if (p >= t.size()) return std::nullopt;
        const char c = t[p];
        if (c == '"' || c == '\'') {
            auto s = string(p);
            if (!s) return std::nullopt;
            return jinja::Value(std::move(*s));
        }
        if (c == '[' || c == '(') return sequence(p, depth, c == '[' ? ']' : ')');
        if (c == '{') return dict(p, depth);
        if (identStart(c)) {
            auto w = identifier(p, false);
            if (*w == "True" || *w == "true") return jinja::Value(true);
            if (*w == "False" || *w == "false") return jinja::Value(false);
            if (*w == "None" || *w == "null") return jinja::Value::none();
            return std::nullopt;  // a variable: not a literal
        }
        return readNumber(t, p);
    }

    std::optional<jinja::Value> sequence(size_t& p, int depth, char close) {
        ++p;
        jinja::Value l = jinja::Value::list();
        for (;;) {
            skipSpace(t, p);
            if (p < t.size() && t[p] == close) { ++p; return l; }
            auto v = value(p, depth + 1);
            if (!v) return std::nullopt;
            l.append(std::move(*v));
            skipSpace(t, p);
            if (p >= t.size()) return std::nullopt;
            if (t[p] == ',') { ++p; continue; }
            if (t[p] == close) { ++p; return l; }
            return std::nullopt;
        }
    }

    std::optional<jinja::Value> dict(size_t& p, int depth) {
        ++p;
        jinja::Value d = jinja::Value::dict();
        for (;;) {
            skipSpace(t, p);
            if (p < t.size() && t[p] == '}') { ++p; return d; }
            auto k = value(p, depth + 1);
            if (!k || !k->isString()) return std::nullopt;
            skipSpace(t, p);
            if (p >= t.size() || t[p] != ':') return std::nullopt;
            ++p;
            auto v = value(p, depth + 1);
            if (!v) return std::nullopt;
            d.set(k->asString(), std::move(*v));
            skipSpace(t, p);
            if (p >= t.size()) return std::nullopt;
            if (t[p] == ',') { ++p; continue; }
            if (t[p] == '}') { ++p; return d; }
            return std::nullopt;
        }
    }

    std::optional<NamedArgs> call(size_t& p) {
        auto name = identifier(p, true);
        if (!name) return std::nullopt;
        skipSpace(t, p);
        if (p >= t.size() || t[p] != '(') return std::nullopt;
        ++p;
        NamedArgs c{*name, jinja::Value::dict()};
        for (;;) {
            skipSpace(t, p);
            if (p < t.size() && t[p] == ')') { ++p; return c; }
            auto key = identifier(p, false);
            if (!key) return std::nullopt;
            skipSpace(t, p);
            if (p >= t.size() || t[p] != '=') return std::nullopt;
            ++p;
            auto v = value(p, 1);
            if (!v) return std::nullopt;
            c.arguments.set(*key, std::move(*v));
            skipSpace(t, p);
            if (p >= t.size()) return std::nullopt;
            if (t[p] == ',') { ++p; continue; }
            if (t[p] == ')') { ++p; return c; }
            return std::nullopt;
        }
    }
};

}  // namespace

size_t jsonContainerEnd(std::string_view t, size_t pos) {
    skipSpace(t, pos);
    if (pos >= t.size() || (t[pos] != '{' && t[pos] != '[')) return std::string_view::npos;
    std::vector<char> stack;
    bool inString = false;
    for (size_t i = pos; i < t.size(); ++i) {
        const char c = t[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            if (stack.size() >= size_t(kMaxDepth) * 2) return std::string_view::npos;
            stack.push_back(c == '{' ? '}' : ']');
        } else if (c == '}' || c == ']') {
            if (stack.empty() || stack.back() != c) return std::string_view::npos;
            stack.pop_back();
            if (stack.empty()) return i + 1;
        }
    }
    return std::string_view::npos;
}

std::optional<jinja::Value> parseJson(std::string_view text) {
    try {
        return jinja::Value::parseJson(text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<jinja::Value> parseGemmaValue(std::string_view text, size_t& pos, std::string_view escape) {
    try {
        GemmaReader r{text, escape};
        size_t p = pos;
        auto v = r.value(p, 0);
        if (v) pos = p;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<std::vector<NamedArgs>> parsePythonCalls(std::string_view text) {
    try {
        PythonReader r{text};
        size_t p = 0;
        skipSpace(text, p);
        std::vector<NamedArgs> calls;
        const bool bracketed = p < text.size() && text[p] == '[';
        if (bracketed) ++p;
        for (;;) {
            skipSpace(text, p);
            if (bracketed && p < text.size() && text[p] == ']') {
                ++p;
                break;
            }
            if (!bracketed && p >= text.size()) break;
            auto c = r.call(p);
            if (!c) return std::nullopt;
            calls.push_back(std::move(*c));
            skipSpace(text, p);
            if (p < text.size() && (text[p] == ',' || text[p] == ';')) ++p;
        }
        skipSpace(text, p);
        if (p != text.size() || calls.empty()) return std::nullopt;
        return calls;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::string argumentsJson(const jinja::Value& arguments) {
    try {
        return arguments.toJson();
    } catch (const std::exception&) {
        return "{}";
    }
}

namespace {
void appendGemmaValue(MarkedText& out, const jinja::Value& v, std::string_view escape, bool sortKeys) {
    switch (v.kind()) {
    case jinja::Value::Kind::String:
        out.appendTrusted(escape);
        out.appendUntrusted(v.asString());
        out.appendTrusted(escape);
        return;
    case jinja::Value::Kind::Bool: out.appendTrusted(v.asBool() ? "true" : "false"); return;
    case jinja::Value::Kind::None:
    case jinja::Value::Kind::Undefined: out.appendTrusted("null"); return;
    case jinja::Value::Kind::Int:
    case jinja::Value::Kind::Float: out.appendTrusted(v.str()); return;
    case jinja::Value::Kind::List: {
        out.appendTrusted("[");
        const auto& items = v.asList();
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out.appendTrusted(",");
            appendGemmaValue(out, items[i], escape, sortKeys);
        }
        out.appendTrusted("]");
        return;
    }
    case jinja::Value::Kind::Dict: {
        auto entries = v.asDict().entries;
        if (sortKeys)
            std::stable_sort(entries.begin(), entries.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
        out.appendTrusted("{");
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i) out.appendTrusted(",");
            out.appendUntrusted(entries[i].first);
            out.appendTrusted(":");
            appendGemmaValue(out, entries[i].second, escape, sortKeys);
        }
        out.appendTrusted("}");
        return;
    }
    default:
        out.appendTrusted(escape);
        out.appendUntrusted(v.str());
        out.appendTrusted(escape);
        return;
    }
}
}  // namespace

MarkedText gemmaValueMarked(const jinja::Value& v, std::string_view escape, bool sortKeys) {
    MarkedText out;
    appendGemmaValue(out, v, escape, sortKeys);
    return out;
}

std::string gemmaValueText(const jinja::Value& v, std::string_view escape, bool sortKeys) {
    return gemmaValueMarked(v, escape, sortKeys).text;
}

}  // namespace weir::toolsyntax
