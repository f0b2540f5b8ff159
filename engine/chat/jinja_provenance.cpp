#include "engine/chat/jinja_provenance.h"

#include <memory>

namespace weir::jinja {

namespace {

Value markAt(const Value& v, int depth) {
    if (depth > Value::kMaxDepth) return v;  // cannot happen: values are built at most kMaxDepth deep
    switch (v.kind()) {
        case Value::Kind::String:
            return v.hasProvenance() ? v : v.withProvenance(UntrustedRanges::whole(v.asString().size()));
        case Value::Kind::List: {
            ValueList items;
            items.reserve(v.asList().size());
            for (const auto& item : v.asList()) items.push_back(markAt(item, depth + 1));
            return v.isTuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
        }
        case Value::Kind::Dict: {
            if (v.isNamespace()) return v;
            Value d = Value::dict();
            for (const auto& e : v.asDict().entries) d.set(e.first, markAt(e.second, depth + 1));
            d.mutableDict().untrustedKeys = true;
            return d;
        }
        default: return v;
    }
}

}  // namespace

Value markUntrusted(const Value& v) { return markAt(v, 0); }

Value trustedText(std::string s) { return Value::text(std::move(s), {}); }

Value keyValue(const Dict& d, const std::string& key) {
    if (!d.untrustedKeys) return Value(key);
    return Value::text(key, UntrustedRanges::whole(key.size()));
}

UntrustedRanges rangesOfStr(const Value& v, size_t size) {
    if (v.isString()) return v.untrustedRanges();
    return v.containsUntrusted() ? UntrustedRanges::whole(size) : UntrustedRanges{};
}

Value inheritUntrusted(Value result, bool inputsUntrusted) {
    if (!inputsUntrusted) return result;
    if (result.isString())
        return result.hasProvenance() ? result : result.withProvenance(UntrustedRanges::whole(result.asString().size()));
    if (result.isList()) {
        bool changed = false;
        ValueList items = result.asList();
        for (auto& item : items) {
            if ((item.isString() && !item.hasProvenance()) || item.isList()) {
                Value marked = inheritUntrusted(item, true);
                changed = true;
                item = std::move(marked);
            }
        }
        if (changed) return result.isTuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    return result;
}

}  // namespace weir::jinja
