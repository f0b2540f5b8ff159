// JSON Schema compiler: one rule per schema node, $refs memoized so they may recurse.
#include "engine/grammar/json_schema_compiler.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/chat/jinja_value.h"
#include "engine/grammar/json_rules.h"
#include "weir/base/error.h"

namespace weir::grammar {

namespace {

using Json = jinja::Value;

// Unrolled bounds cost one rule each: beyond this they are refused.
constexpr int64_t kMaxItemsBound = 1024;

const std::set<std::string, std::less<>>& ignoredKeywords() {
    static const std::set<std::string, std::less<>> k = {
        "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly",
        "writeOnly", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "$defs", "definitions"};
    return k;
}

const std::set<std::string, std::less<>>& usedKeywords() {
    static const std::set<std::string, std::less<>> k = {
        "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
        "enum", "const", "anyOf", "allOf", "$ref"};
    return k;
}

std::string jsonText(const Json& v) {
    Json::JsonStyle compact;
    compact.itemSeparator = ",";
    compact.keySeparator = ":";
    return v.toJson(compact);
}

// JSON Pointer token escaping (RFC 6901) for the paths in messages.
std::string pointerToken(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

class SchemaCompiler {
public:
    SchemaCompiler(Grammar& g, const Json& root) : g_(g), rules_(g), root_(root) {}

    int32_t compile(const Json& schema, const std::string& path) {
        if (schema.isBool()) {
            if (!schema.asBool()) fail(path, "the schema false allows no value");
            return rules_.anyValue();
        }
        if (!schema.isDict()) fail(path, "a schema must be an object or a boolean, not " + jsonText(schema));
        for (const auto& [key, value] : schema.asDict().entries) {
            (void)value;
            if (!ignoredKeywords().contains(key) && !usedKeywords().contains(key))
                fail(path, "unsupported JSON Schema keyword '" + key + "'");
        }
        if (const Json* ref = schema.get("$ref")) return compileRef(schema, *ref, path);

        // Bytes have to come before any recursion that goes through here again.
        if (const Json* anyOf = schema.get("anyOf")) return compileAnyOf(schema, *anyOf, path);
        if (const Json* allOf = schema.get("allOf")) {
            if (!allOf->isList() || allOf->asList().size() != 1)
                fail(path, "'allOf' is supported with exactly one schema");
            onlyAnnotations(schema, "allOf", path);
            return compile(allOf->asList()[0], path + "/allOf/0");
        }
        if (schema.get("const")) return compileEnum(schema, {*schema.get("const")}, path, "const");
        if (const Json* e = schema.get("enum")) {
            if (!e->isList() || e->asList().empty()) fail(path, "'enum' must be a non-empty array");
            return compileEnum(schema, e->asList(), path, "enum");
        }
        const std::vector<std::string> types = typesOf(schema, path);
        if (types.size() == 1) return compileType(schema, types[0], path);
        const int32_t r = g_.addRule(ruleName(path) + "-types");
        for (const std::string& t : types) g_.addAlternative(r, {ruleRef(compileType(schema, t, path))});
        return r;
    }

    int32_t compileRoot() {
        const int32_t r = compileRefTarget("#", root_, "#");
        return r;
    }

private:
    [[noreturn]] static void fail(const std::string& path, const std::string& what) {
        throw Error("JSON Schema at " + path + ": " + what);
    }

    std::string ruleName(const std::string& path) {
        return "s" + std::to_string(g_.ruleCount()) + (path.size() > 40 ? path.substr(path.size() - 40) : path);
    }

    void onlyAnnotations(const Json& schema, const char* keyword, const std::string& path) {
        for (const auto& [key, value] : schema.asDict().entries) {
            (void)value;
            if (key != keyword && !ignoredKeywords().contains(key))
                fail(path, "'" + key + "' beside '" + keyword + "' is not supported");
        }
    }

    std::vector<std::string> typesOf(const Json& schema, const std::string& path) {
        static const std::set<std::string, std::less<>> known = {"object", "array", "string", "number",
                                                                 "integer", "boolean", "null"};
        const Json* t = schema.get("type");
        std::vector<std::string> types;
        if (!t) {
            // No type: what the other keywords say, else any value.
            if (schema.get("properties") || schema.get("additionalProperties")) return {"object"};
            if (schema.get("items") || schema.get("minItems") || schema.get("maxItems")) return {"array"};
            return {"any"};
        }
        if (t->isString()) {
            types.push_back(t->asString());
        } else if (t->isList() && !t->asList().empty()) {
            for (const Json& x : t->asList()) {
                if (!x.isString()) fail(path, "'type' entries must be strings");
                types.push_back(x.asString());
            }
        } else {
            fail(path, "'type' must be a string or a non-empty array of strings");
        }
        for (const std::string& x : types)
            if (!known.contains(x)) fail(path, "unknown type '" + x + "'");
        return types;
    }

    int32_t compileType(const Json& schema, const std::string& type, const std::string& path) {
        if (type == "object") return compileObject(schema, path);
        if (type == "array") return compileArray(schema, path);
        if (type == "string") return rules_.string();
        if (type == "number") return rules_.number();
        if (type == "integer") return rules_.integer();
        if (type == "boolean") return rules_.boolean();
        if (type == "null") return rules_.null();
        return rules_.anyValue();
    }

    int32_t compileAnyOf(const Json& schema, const Json& anyOf, const std::string& path) {
        if (!anyOf.isList() || anyOf.asList().empty()) fail(path, "'anyOf' must be a non-empty array");
        onlyAnnotations(schema, "anyOf", path);
        const int32_t r = g_.addRule(ruleName(path) + "-anyOf");
        const auto& list = anyOf.asList();
        for (size_t i = 0; i < list.size(); ++i)
            g_.addAlternative(r, {ruleRef(compile(list[i], path + "/anyOf/" + std::to_string(i)))});
        return r;
    }

    static bool hasType(const Json& v, const std::string& type) {
        if (type == "any") return true;
        if (type == "object") return v.isDict();
        if (type == "array") return v.isList();
        if (type == "string") return v.isString();
        if (type == "number") return v.isNumber() && !v.isBool();
        if (type == "integer") return v.isInt() || (v.isFloat() && v.asDouble() == double(int64_t(v.asDouble())));
        if (type == "boolean") return v.isBool();
        return v.isNone();
    }

    int32_t compileEnum(const Json& schema, const std::vector<Json>& values, const std::string& path,
                        const char* keyword) {
        const std::vector<std::string> types = typesOf(schema, path);
        const int32_t r = g_.addRule(ruleName(path) + "-" + keyword);
        std::set<std::string> seen;
        for (const Json& v : values) {
            // Values of another type than the schema's can never validate.
            if (!std::any_of(types.begin(), types.end(), [&](const std::string& t) { return hasType(v, t); }))
                continue;
            const std::string text = jsonText(v);
            if (seen.insert(text).second) g_.addAlternative(r, literal(text));
        }
        if (seen.empty()) fail(path, std::string("no '") + keyword + "' value has the schema's type");
        return r;
    }

    int32_t compileObject(const Json& schema, const std::string& path) {
        const Json* props = schema.get("properties");
        const Json* additional = schema.get("additionalProperties");
        const Json* required = schema.get("required");
        if (props && !props->isDict()) fail(path, "'properties' must be an object");
        if (required && !required->isList()) fail(path, "'required' must be an array of property names");
        if (!props || props->asDict().size() == 0) {
            if (required && !required->asList().empty())
                fail(path, "'required' names properties that 'properties' does not define");
            if (!additional || (additional->isBool() && additional->asBool())) return rules_.anyObject();
            if (additional->isBool()) {
                const int32_t r = g_.addRule(ruleName(path) + "-empty");
                g_.addAlternative(r, Sequence{byteOf('{'), rules_.ws(), byteOf('}')});
                return r;
            }
            const int32_t value = compileNested(*additional, path + "/additionalProperties");
            return rules_.objectOf(value, ruleName(path) + "-map");
        }
        if (additional && !additional->isBool())
            fail(path, "'additionalProperties' with a schema beside 'properties' is not supported");

        const auto& entries = props->asDict().entries;
        std::set<std::string> requiredNames;
        if (required) {
            for (const Json& n : required->asList()) {
                if (!n.isString()) fail(path, "'required' entries must be strings");
                if (!props->get(n.asString()))
                    fail(path, "required property '" + n.asString() + "' is not in 'properties'");
                requiredNames.insert(n.asString());
            }
        }
        // member_i ::= "key" ":" colon-space value
        std::vector<int32_t> members;
        for (const auto& [key, sub] : entries) {
            const int32_t value = compileNested(sub, path + "/properties/" + pointerToken(key));
            const int32_t m = g_.addRule(ruleName(path) + "-" + key);
            g_.addAlternative(m, literal(jsonText(Json(key))) + byteOf(':') + ruleRef(rules_.colonSpace()) +
                                     ruleRef(value));
            members.push_back(m);
        }
        // Properties in the schema's order, optional ones may be left out,
        // commas only between written ones. first_i: nothing written yet from
        // i on; after_i: something was written before i (so the whitespace
        // before the closing brace comes at its end, and an empty object
        // has it once, after the opening one).
        const size_t n = entries.size();
        std::vector<int32_t> first(n + 1), after(n + 1);
        first[n] = g_.addRule(ruleName(path) + "-end");
        g_.addAlternative(first[n], {});
        after[n] = g_.addRule(ruleName(path) + "-close");
        g_.addAlternative(after[n], {rules_.ws()});
        for (size_t i = n; i-- > 0;) {
            const bool req = requiredNames.contains(entries[i].first);
            first[i] = g_.addRule(ruleName(path) + "-first" + std::to_string(i));
            after[i] = g_.addRule(ruleName(path) + "-after" + std::to_string(i));
            g_.addAlternative(first[i], {ruleRef(members[i]), ruleRef(after[i + 1])});
            g_.addAlternative(after[i], Sequence{byteOf(','), rules_.ws(), ruleRef(members[i]), ruleRef(after[i + 1])});
            if (!req) {
                g_.addAlternative(first[i], {ruleRef(first[i + 1])});
                g_.addAlternative(after[i], {ruleRef(after[i + 1])});
            }
        }
        const int32_t r = g_.addRule(ruleName(path) + "-object");
        g_.addAlternative(r, Sequence{byteOf('{'), rules_.ws(), ruleRef(first[0]), byteOf('}')});
        return r;
    }

    int64_t count(const Json& schema, const char* keyword, const std::string& path) {
        const Json* v = schema.get(keyword);
        if (!v) return -1;
        if (!v->isInt() || v->isBool() || v->asInt() < 0)
            fail(path, std::string("'") + keyword + "' must be a non-negative integer");
        if (v->asInt() > kMaxItemsBound)
            fail(path, std::string("'") + keyword + "' above " + std::to_string(kMaxItemsBound) + " is not supported");
        return v->asInt();
    }

    int32_t compileArray(const Json& schema, const std::string& path) {
        const Json* itemsSchema = schema.get("items");
        if (itemsSchema && itemsSchema->isList()) fail(path, "'items' as an array (tuple) is not supported");
        const int64_t minItems = std::max<int64_t>(0, count(schema, "minItems", path));
        const int64_t maxItems = count(schema, "maxItems", path);
        if (maxItems >= 0 && maxItems < minItems) fail(path, "'maxItems' is below 'minItems'");
        const int32_t item = itemsSchema ? compileNested(*itemsSchema, path + "/items") : rules_.anyValue();
        if (minItems == 0 && maxItems < 0) return rules_.arrayOf(item, ruleName(path) + "-array");
        if (maxItems == 0) {
            const int32_t r = g_.addRule(ruleName(path) + "-empty");
            g_.addAlternative(r, Sequence{byteOf('['), rules_.ws(), byteOf(']')});
            return r;
        }
        // tail_k: what may follow after k items (k >= 1), built from the end.
        const std::string base = ruleName(path);
        int32_t tail = -1;
        const int64_t last = maxItems < 0 ? minItems : maxItems;
        if (maxItems < 0) {
            // Past minItems: any number more.
            tail = g_.addRule(base + "-more");
            g_.addAlternative(tail, {});
            g_.addAlternative(tail, Sequence{byteOf(','), rules_.ws(), ruleRef(item), ruleRef(tail)});
        } else {
            tail = g_.addRule(base + "-tail" + std::to_string(last));
            g_.addAlternative(tail, {});
        }
        for (int64_t k = last - 1; k >= 1; --k) {
            const int32_t r = g_.addRule(base + "-tail" + std::to_string(k));
            g_.addAlternative(r, Sequence{byteOf(','), rules_.ws(), ruleRef(item), ruleRef(tail)});
            if (k >= minItems) g_.addAlternative(r, {});
            tail = r;
        }
        // "[" ws item tail ws "]", or "[" ws "]" where no item is needed.
        const int32_t r = g_.addRule(base + "-array");
        g_.addAlternative(r, Sequence{byteOf('['), rules_.ws(), ruleRef(item), ruleRef(tail), rules_.ws(), byteOf(']')});
        if (minItems == 0) g_.addAlternative(r, Sequence{byteOf('['), rules_.ws(), byteOf(']')});
        return r;
    }

    // A schema written after some bytes of its parent: a $ref chain that
    // starts here is not left-recursive through the parent.
    int32_t compileNested(const Json& schema, const std::string& path) {
        std::set<std::string> open;
        open.swap(openRefs_);
        const int32_t r = compile(schema, path);
        openRefs_.swap(open);
        return r;
    }

    const Json& resolve(const std::string& ref, const std::string& path) {
        if (ref == "#") return root_;
        for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
            const std::string p = prefix;
            if (ref.rfind(p, 0) != 0) continue;
            const std::string container = p.substr(2, p.size() - 3);
            const Json* defs = root_.isDict() ? root_.get(container) : nullptr;
            std::string name = ref.substr(p.size());
            // Undo RFC 6901 escaping.
            for (size_t i = 0; (i = name.find('~', i)) != std::string::npos; ++i)
                name.replace(i, 2, name.compare(i, 2, "~1") == 0 ? "/" : "~");
            const Json* target = defs && defs->isDict() ? defs->get(name) : nullptr;
            if (!target) fail(path, "'$ref' " + ref + " names no definition");
            return *target;
        }
        fail(path, "'$ref' " + ref + " is not supported (only \"#\", \"#/$defs/NAME\", \"#/definitions/NAME\")");
    }

    int32_t compileRef(const Json& schema, const Json& ref, const std::string& path) {
        if (!ref.isString()) fail(path, "'$ref' must be a string");
        onlyAnnotations(schema, "$ref", path);
        const std::string& target = ref.asString();
        if (openRefs_.contains(target))
            fail(path, "'$ref' " + target + " refers back to itself before any value is written (left recursion)");
        if (auto it = refRules_.find(target); it != refRules_.end()) return it->second;
        return compileRefTarget(target, resolve(target, path), target);
    }

    int32_t compileRefTarget(const std::string& ref, const Json& schema, const std::string& path) {
        // The rule exists before its body, so the body may refer to it.
        const int32_t r = g_.addRule(ruleName(path) + "-ref");
        refRules_[ref] = r;
        openRefs_.insert(ref);
        const int32_t body = compile(schema, path);
        openRefs_.erase(ref);
        g_.addAlternative(r, {ruleRef(body)});
        return r;
    }

    Grammar& g_;
    JsonRules rules_;
    const Json& root_;
    std::map<std::string, int32_t> refRules_;
    std::set<std::string> openRefs_;  // $refs being compiled with no byte written since
};

} // namespace

int32_t addJsonSchema(Grammar& g, std::string_view schemaText) {
    Json root;
    try {
        root = Json::parseJson(schemaText);
    } catch (const std::exception& e) {
        throw Error(std::string("the JSON Schema is not valid JSON: ") + e.what());
    }
    SchemaCompiler compiler(g, root);
    return compiler.compileRoot();
}

int32_t addAnyJsonObject(Grammar& g) {
    JsonRules rules(g);
    return rules.anyObject();
}

Grammar compileJsonSchema(std::string_view schemaText) {
    Grammar g;
    g.setRoot(addJsonSchema(g, schemaText));
    g.elements();  // flattened now, so a broken grammar fails here
    return g;
}

Grammar anyJsonObjectGrammar() {
    Grammar g;
    g.setRoot(addAnyJsonObject(g));
    g.elements();
    return g;
}

} // namespace weir::grammar
