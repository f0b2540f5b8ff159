#pragma once
// Reading the tests' JSON reference data with the engine's own JSON parser
// (jinja::Value::parseJson), and short lookups that give an undefined value
// instead of a null pointer for a missing key or index.
#include <cstddef>
#include <string>
#include <string_view>

#include "engine/chat/jinja_value.h"

namespace weirtest {

using Json = weir::jinja::Value;

// Parsed JSON, or undefined when the text is not JSON.
inline Json parseJsonOrUndefined(std::string_view text) {
    try {
        return Json::parseJson(text);
    } catch (const std::exception& e) {
        return Json::undefined(e.what());
    }
}

inline const Json& missingJson() {
    static const Json undefined;
    return undefined;
}

// obj[key]: undefined when obj is not a dict or has no such key.
inline const Json& field(const Json& obj, std::string_view key) {
    if (!obj.isDict()) return missingJson();
    const Json* v = obj.get(key);
    return v ? *v : missingJson();
}

// list[i]: undefined when list is not a list or i is past its end.
inline const Json& item(const Json& list, size_t i) {
    if (!list.isList() || i >= list.asList().size()) return missingJson();
    return list.asList()[i];
}

// Entries of a list (none when it is not a list).
inline const weir::jinja::ValueList& items(const Json& list) {
    static const weir::jinja::ValueList none;
    return list.isList() ? list.asList() : none;
}

// The lookups above return references into their argument: a temporary
// would leave them dangling (in a range-for, for one), so it is refused.
const Json& field(Json&&, std::string_view) = delete;
const Json& item(Json&&, size_t) = delete;
const weir::jinja::ValueList& items(Json&&) = delete;

inline int64_t integer(const Json& v) {
    if (v.isFloat()) return int64_t(v.asDouble());
    return v.isNumber() ? v.asInt() : 0;
}
inline double number(const Json& v) { return v.isNumber() ? v.asDouble() : 0.0; }
inline std::string text(const Json& v) { return v.isString() ? v.asString() : std::string(); }

} // namespace weirtest
