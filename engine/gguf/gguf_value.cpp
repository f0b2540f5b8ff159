// Metadata value accessors and the human-readable rendering used by `weir-cli inspect`.
#include <algorithm>
#include <charconv>
#include <limits>

#include "engine/gguf/gguf_file.h"

namespace weir::gguf {

const char* valueTypeName(ValueType t) {
    switch (t) {
    case ValueType::U8: return "u8";
    case ValueType::I8: return "i8";
    case ValueType::U16: return "u16";
    case ValueType::I16: return "i16";
    case ValueType::U32: return "u32";
    case ValueType::I32: return "i32";
    case ValueType::F32: return "f32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::U64: return "u64";
    case ValueType::I64: return "i64";
    case ValueType::F64: return "f64";
    }
    return "?";
}

std::optional<int64_t> Value::asInt() const {
    if (const auto* u = std::get_if<uint64_t>(&data)) {
        if (*u > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return int64_t(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&data)) return *i;
    if (const auto* b = std::get_if<bool>(&data)) return *b ? 1 : 0;
    return std::nullopt;
}

std::optional<double> Value::asFloat() const {
    if (const auto* u = std::get_if<uint64_t>(&data)) return double(*u);
    if (const auto* i = std::get_if<int64_t>(&data)) return double(*i);
    if (const auto* d = std::get_if<double>(&data)) return *d;
    return std::nullopt;
}

const std::string* Value::asString() const { return std::get_if<std::string>(&data); }
const Array* Value::asArray() const { return std::get_if<Array>(&data); }

namespace {

// Shortest text that reads back as the same float (f32 values print as f32).
std::string formatFloat(double v, bool single) {
    char buf[64];
    const auto r = single ? std::to_chars(buf, buf + sizeof buf, float(v)) : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// A quoted string with control characters escaped; long strings are cut at a
// UTF-8 character boundary and say how long they really are.
std::string quoteString(const std::string& s) {
    constexpr size_t kMaxShown = 100;
    size_t cut = s.size();
    if (s.size() > kMaxShown + 20) {
        cut = kMaxShown;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
    }
    std::string out = "\"";
    for (size_t i = 0; i < cut; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                static const char* hex = "0123456789abcdef";
                out += "\\x";
                out += hex[c >> 4];
                out += hex[c & 15];
            } else {
                out += char(c);
            }
        }
    }
    out += "\"";
    if (cut < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

} // namespace

std::string Value::toDisplayString(size_t maxItems) const {
    switch (type) {
    case ValueType::F32: return formatFloat(std::get<double>(data), true);
    case ValueType::F64: return formatFloat(std::get<double>(data), false);
    case ValueType::Bool: return std::get<bool>(data) ? "true" : "false";
    case ValueType::String: return quoteString(std::get<std::string>(data));
    case ValueType::Array: {
        const Array& a = std::get<Array>(data);
        std::string out = "[";
        const size_t shown = std::min(maxItems, a.items.size());
        for (size_t i = 0; i < shown; ++i) {
            if (i) out += ", ";
            out += a.items[i].toDisplayString(maxItems);
        }
        if (shown < a.items.size()) out += shown ? ", ...]" : "...]";
        else out += "]";
        if (shown < a.items.size()) out += " (" + std::to_string(a.items.size()) + " items)";
        return out;
    }
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
        return std::to_string(std::get<uint64_t>(data));
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64:
        return std::to_string(std::get<int64_t>(data));
    }
    return "?";
}

} // namespace weir::gguf
