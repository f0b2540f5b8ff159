#pragma once
// A JSON Schema validator for the keywords the constrained-output tests use,
// written apart from the compiler (it checks parsed values, the compiler
// builds grammars), so a compiler bug cannot hide behind itself. "" when the
// value validates, else the first reason it does not.
#include <string>

#include "engine/chat/jinja_value.h"

namespace weir::test {

using JsonValue = weir::jinja::Value;

class SchemaValidator {
public:
    explicit SchemaValidator(const JsonValue& root) : root_(root) {}

    std::string validate(const JsonValue& v) const { return check(root_, v, "$"); }

private:
    static std::string compact(const JsonValue& v) {
        JsonValue::JsonStyle s;
        s.itemSeparator = ",";
        s.keySeparator = ":";
        return v.toJson(s);
    }

    static bool isType(const JsonValue& v, const std::string& t) {
        if (t == "object") return v.isMapping();
        if (t == "array") return v.isList();
        if (t == "string") return v.isString();
        if (t == "integer") return v.isInt();
        if (t == "number") return v.isInt() || v.isFloat();
        if (t == "boolean") return v.isBool();
        if (t == "null") return v.isNone();
        return false;
    }

    const JsonValue& resolve(const std::string& ref) const {
        if (ref == "#") return root_;
        for (const char* container : {"$defs", "definitions"}) {
            const std::string prefix = std::string("#/") + container + "/";
            if (ref.rfind(prefix, 0) == 0) return *root_.get(container)->get(ref.substr(prefix.size()));
        }
        static const JsonValue none;
        return none;
    }

    std::string check(const JsonValue& s, const JsonValue& v, const std::string& at) const {
        if (s.isBool()) return s.asBool() ? "" : at + ": schema false";
        if (const JsonValue* ref = s.get("$ref")) return check(resolve(ref->asString()), v, at);
        if (const JsonValue* t = s.get("type")) {
            bool ok = false;
            if (t->isString()) ok = isType(v, t->asString());
            else
                for (const JsonValue& x : t->asList()) ok = ok || isType(v, x.asString());
            if (!ok) return at + ": not of type " + compact(*t) + ": " + compact(v);
        }
        if (const JsonValue* e = s.get("enum")) {
            bool found = false;
            for (const JsonValue& x : e->asList()) found = found || compact(x) == compact(v);
            if (!found) return at + ": not in enum: " + compact(v);
        }
        if (const JsonValue* c = s.get("const"))
            if (compact(*c) != compact(v)) return at + ": not the const: " + compact(v);
        if (const JsonValue* any = s.get("anyOf")) {
            std::string why = at + ": matches no anyOf branch";
            for (const JsonValue& x : any->asList())
                if (check(x, v, at).empty()) why.clear();
            if (!why.empty()) return why;
        }
        if (const JsonValue* all = s.get("allOf"))
            for (const JsonValue& x : all->asList())
                if (std::string w = check(x, v, at); !w.empty()) return w;
        if (v.isMapping()) {
            const JsonValue* props = s.get("properties");
            if (const JsonValue* req = s.get("required"))
                for (const JsonValue& n : req->asList())
                    if (!v.get(n.asString())) return at + ": missing required " + n.asString();
            const JsonValue* extra = s.get("additionalProperties");
            for (const auto& [key, value] : v.asDict().entries) {
                const JsonValue* sub = props ? props->get(key) : nullptr;
                if (sub) {
                    if (std::string w = check(*sub, value, at + "." + key); !w.empty()) return w;
                } else if (extra) {
                    if (std::string w = check(*extra, value, at + "." + key); !w.empty()) return w;
                }
            }
        }
        if (v.isList()) {
            const auto& items = v.asList();
            if (const JsonValue* m = s.get("minItems"); m && int64_t(items.size()) < m->asInt())
                return at + ": fewer than minItems";
            if (const JsonValue* m = s.get("maxItems"); m && int64_t(items.size()) > m->asInt())
                return at + ": more than maxItems";
            if (const JsonValue* it = s.get("items"))
                for (size_t i = 0; i < items.size(); ++i)
                    if (std::string w = check(*it, items[i], at + "[" + std::to_string(i) + "]"); !w.empty()) return w;
        }
        return "";
    }

    const JsonValue& root_;
};

} // namespace weir::test
