// The JSON Schema compiler: each supported keyword lets exactly the documents
// the schema accepts through, each unsupported one is refused by name.
#include <string>
#include <vector>

#include "engine/grammar/json_rules.h"
#include "engine/grammar/json_schema_compiler.h"
#include "tests/engine/grammar/grammar_text.h"
#include "tests/support/weir_test.h"
#include "weir/base/error.h"

using namespace weir;
using weir::test::fit;
using weir::test::schemaAutomaton;
using weir::test::TextFit;

namespace {

struct Case {
    std::string name;
    std::string schema;
    std::vector<std::string> valid;
    std::vector<std::string> invalid;  // not a whole document (dead or an unfinished prefix)
};

void checkCase(const Case& c) {
    grammar::GrammarAutomaton a = schemaAutomaton(c.schema);
    for (const std::string& t : c.valid) CHECK_MSG(fit(a, t) == TextFit::Complete, "should accept: " + t);
    for (const std::string& t : c.invalid) CHECK_MSG(fit(a, t) != TextFit::Complete, "should refuse: " + t);
}

std::string refusal(const std::string& schema) {
    try {
        grammar::compileJsonSchema(schema);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

WEIR_TEST(JsonSchemaCompiler, keywords) {
    const std::vector<Case> cases = {
        {"string", R"({"type":"string"})", {R"("")", R"("abc")", R"("a\"b\\c\n\u00e9")", "\"caf\xc3\xa9\""},
         {R"(abc)", R"("abc)", "\"a\nb\"", R"("\x")", R"(1)"}},
        {"integer", R"({"type":"integer"})", {"0", "-7", "1234567890"}, {"01", "1.5", "-", "+1", "1e3", "\"1\""}},
        {"number", R"({"type":"number"})", {"0", "-0.5e+10", "3.25", "1E-3", "-0", "12e5"},
         {"1.", ".5", "--1", "1e", "0x10", "NaN", "00"}},
        {"boolean", R"({"type":"boolean"})", {"true", "false"}, {"True", "1", "null"}},
        {"null", R"({"type":"null"})", {"null"}, {"nul", "\"null\""}},
        {"type list", R"({"type":["string","null"]})", {"null", R"("x")"}, {"1", "true"}},
        {"enum", R"({"enum":["red","green",3,null]})", {R"("red")", R"("green")", "3", "null"},
         {R"("blue")", R"("re")", "4"}},
        {"enum filtered by type", R"({"type":"string","enum":["a",1]})", {R"("a")"}, {"1"}},
        {"const", R"({"const":{"a":[1,true]}})", {R"({"a":[1,true]})"}, {R"({"a":[1]})", R"({"a":[1,false]})"}},
        {"object required and optional",
         R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},
             "required":["b"],"additionalProperties":false})",
         {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"b":"x","c":true})", R"({"a":1,"b":"x","c":false})",
          "{\n  \"a\": 1,\n  \"b\": \"x\"\n}", R"({ "b": "x" })"},
         {R"({})", R"({"a":1})", R"({"b":"x","a":1})", R"({"b":"x","d":1})", R"({"b":"x",})", R"({,"b":"x"})"}},
        {"object all optional", R"({"type":"object","properties":{"a":{"type":"integer"}}})", {"{}", R"({"a":2})"},
         {R"({"b":2})"}},
        {"object without properties", R"({"type":"object"})", {"{}", R"({"x":[1,{"y":null}]})"}, {"[]", R"({"x"})"}},
        {"additionalProperties schema", R"({"type":"object","additionalProperties":{"type":"integer"}})",
         {"{}", R"({"a":1,"b":2})"}, {R"({"a":"x"})"}},
        {"additionalProperties false alone", R"({"type":"object","additionalProperties":false})", {"{}", "{ }"},
         {R"({"a":1})"}},
        {"array", R"({"type":"array","items":{"type":"integer"}})", {"[]", "[1]", "[1, 2, 3]", "[\n  1,\n  2\n]"},
         {"[1,]", "[,1]", R"(["a"])", "[1 2]"}},
        {"array bounds", R"({"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":2})",
         {"[true]", "[true,false]"}, {"[]", "[true,false,true]"}},
        {"array exact", R"({"type":"array","items":{"type":"null"},"minItems":3,"maxItems":3})", {"[null,null,null]"},
         {"[null,null]", "[null,null,null,null]"}},
        {"array min only", R"({"type":"array","minItems":2})", {"[1,\"a\"]", "[1,2,3,4]"}, {"[1]"}},
        {"array max zero", R"({"type":"array","maxItems":0})", {"[]"}, {"[1]"}},
        {"anyOf", R"({"anyOf":[{"type":"integer"},{"type":"array","items":{"type":"string"}}]})",
         {"5", R"(["a","b"])", "[]"}, {R"("a")", "[1]"}},
        {"anyOf sharing a prefix", R"({"anyOf":[{"const":"ab"},{"const":"abc"}]})", {R"("ab")", R"("abc")"},
         {R"("a")", R"("abcd")"}},
        {"allOf of one", R"({"allOf":[{"type":"boolean"}],"description":"flag"})", {"true"}, {"1"}},
        {"$ref to $defs",
         R"({"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"required":["p"],
             "$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
             "required":["x","y"]}}})",
         {R"({"p":{"x":1,"y":-2.5}})"}, {R"({"p":{"x":1}})", R"({"p":1})"}},
        {"$ref to definitions", R"({"$ref":"#/definitions/n","definitions":{"n":{"type":"null"}}})", {"null"}, {"1"}},
        {"recursive $ref",
         R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
             "kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v","kids"]}},
             "$ref":"#/$defs/node"})",
         {R"({"v":1,"kids":[]})", R"({"v":1,"kids":[{"v":2,"kids":[{"v":3,"kids":[]}]}]})"},
         {R"({"v":1,"kids":[{"v":2}]})"}},
        {"recursive root", R"({"type":"array","items":{"anyOf":[{"type":"integer"},{"$ref":"#"}]}})",
         {"[1,[2,[]],3]"}, {"[[1]"}},
        {"annotations and ignored bounds",
         R"({"type":"integer","title":"n","description":"d","default":1,"examples":[1],"minimum":0,"maximum":9,
             "$schema":"https://json-schema.org/draft/2020-12/schema","format":"int32"})",
         {"12"}, {"\"12\""}},
        {"true schema", R"(true)", {"1", "\"x\"", "[{}]"}, {"[", "x"}},
        {"empty schema", R"({})", {"null", "{\"a\":[]}"}, {"nul"}},
        {"escaped property name", R"({"type":"object","properties":{"a\"b":{"type":"null"}},"required":["a\"b"]})",
         {R"({"a\"b":null})"}, {R"({"ab":null})"}},
    };
    weirtest::eachRow(cases, checkCase);
}

WEIR_TEST(JsonSchemaCompiler, whitespaceIsBounded) {
    grammar::GrammarAutomaton a = schemaAutomaton(R"({"type":"array","items":{"type":"integer"}})");
    CHECK(fit(a, "[ 1 ]") == TextFit::Complete);
    CHECK(fit(a, "[\n" + std::string(grammar::JsonRules::kMaxIndent, ' ') + "1]") == TextFit::Complete);
    CHECK(fit(a, "[\n" + std::string(grammar::JsonRules::kMaxIndent + 1, ' ')) == TextFit::Dead);
    CHECK(fit(a, "[\n\n") == TextFit::Dead);
    CHECK(fit(a, "[  ") == TextFit::Dead);
    // Nothing may follow the document, not even whitespace.
    CHECK(fit(a, "[1] ") == TextFit::Dead);
}

// Plain JSON spacing: whitespace only where a printer puts it (after "{",
// "[", "," and before "}", "]"; one space at most after ":"), so a reply does
// not come out as `]\n,\n"name"`. Properties keep the schema's order.
WEIR_TEST(JsonSchemaCompiler, plainSpacingInTheSchemasOrder) {
    grammar::GrammarAutomaton a = schemaAutomaton(
        R"({"type":"object","properties":{"zeta":{"type":"array","items":{"type":"integer"}},"alpha":{"type":"string"},
            "mid":{"type":"object"}},"required":["zeta","alpha"]})");
    for (const char* ok : {R"({"zeta":[1,2],"alpha":"x"})", R"({"zeta": [1, 2], "alpha": "x", "mid": {"k": [true]}})",
                           "{\n  \"zeta\": [\n    1,\n    2\n  ],\n  \"alpha\": \"x\"\n}", R"({ "zeta": [ ], "alpha": "" })",
                           R"({"zeta":[],"alpha":"","mid":{ }})"})
        CHECK_MSG(fit(a, ok) == TextFit::Complete, ok);
    for (const char* bad : {"{\"zeta\": [1]\n,\n\"alpha\": \"x\"}", R"({"zeta" : [1], "alpha": "x"})",
                            R"({"zeta":  [1], "alpha": "x"})", "{\"zeta\":\n[1], \"alpha\": \"x\"}",
                            R"({"zeta": [1 ,2], "alpha": "x"})", R"({"zeta": [1], "alpha": "x", "mid": {"k" :1}})",
                            R"({"alpha": "x", "zeta": [1]})", R"({"zeta": [1], "alpha": "x" , "mid": {}})"})
        CHECK_MSG(fit(a, bad) == TextFit::Dead, bad);
}

WEIR_TEST(JsonSchemaCompiler, numbersAreBounded) {
    grammar::GrammarAutomaton a = schemaAutomaton(R"({"type":"number"})");
    const std::string longest = std::string(grammar::JsonRules::kMaxIntegerDigits, '9');
    CHECK(fit(a, longest) == TextFit::Complete);
    CHECK(fit(a, longest + "9") == TextFit::Dead);
    CHECK(fit(a, "1." + std::string(grammar::JsonRules::kMaxFractionDigits + 1, '1')) == TextFit::Dead);
    CHECK(fit(a, "1e1234") == TextFit::Dead);
}

WEIR_TEST(JsonSchemaCompiler, refusesByName) {
    struct Refusal {
        std::string name, schema, expected;
    };
    const std::vector<Refusal> rows = {
        {"pattern", R"({"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]+$"}}})",
         "JSON Schema at #/properties/code: unsupported JSON Schema keyword 'pattern'"},
        {"minLength", R"({"type":"string","minLength":2})", "unsupported JSON Schema keyword 'minLength'"},
        {"oneOf", R"({"oneOf":[{"type":"string"}]})", "unsupported JSON Schema keyword 'oneOf'"},
        {"not", R"({"not":{"type":"string"}})", "'not'"},
        {"multipleOf", R"({"type":"integer","multipleOf":2})", "'multipleOf'"},
        {"prefixItems", R"({"type":"array","prefixItems":[{"type":"string"}]})", "'prefixItems'"},
        {"uniqueItems", R"({"type":"array","uniqueItems":true})", "'uniqueItems'"},
        {"patternProperties", R"({"type":"object","patternProperties":{}})", "'patternProperties'"},
        {"nested path", R"({"type":"array","items":{"anyOf":[{"type":"string","maxLength":3}]}})",
         "at #/items/anyOf/0: unsupported JSON Schema keyword 'maxLength'"},
        {"not JSON", R"({"type":)", "the JSON Schema is not valid JSON"},
        {"unknown type", R"({"type":"date"})", "unknown type 'date'"},
        {"false schema", R"({"type":"object","properties":{"a":false},"required":["a"]})",
         "#/properties/a: the schema false allows no value"},
        {"required not defined", R"({"type":"object","properties":{"a":{}},"required":["b"]})",
         "required property 'b' is not in 'properties'"},
        {"external $ref", R"({"$ref":"https://example.com/s.json"})", "is not supported"},
        {"missing def", R"({"$ref":"#/$defs/nope"})", "'$ref' #/$defs/nope names no definition"},
        {"left recursion", R"({"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"})",
         "refers back to itself before any value is written"},
        {"maxItems below minItems", R"({"type":"array","minItems":3,"maxItems":2})", "'maxItems' is below 'minItems'"},
        {"huge maxItems", R"({"type":"array","maxItems":100000})", "'maxItems' above 1024"},
        {"$ref with siblings", R"({"$ref":"#/$defs/a","type":"string","$defs":{"a":{}}})", "'type' beside '$ref'"},
        {"empty enum", R"({"enum":[]})", "'enum' must be a non-empty array"},
        {"additionalProperties schema with properties",
         R"({"type":"object","properties":{"a":{}},"additionalProperties":{"type":"string"}})",
         "'additionalProperties' with a schema beside 'properties'"},
    };
    weirtest::eachRow(rows, [](const Refusal& r) {
        const std::string message = refusal(r.schema);
        CHECK_MSG(message.find(r.expected) != std::string::npos, "got: '" + message + "'");
    });
}

WEIR_TEST(JsonSchemaCompiler, anyJsonObject) {
    grammar::GrammarAutomaton a(std::make_shared<const grammar::Grammar>(grammar::anyJsonObjectGrammar()));
    CHECK(fit(a, R"({"a":{"b":[1,2.5,"x",true,null,{}]},"c":"\u00e9"})") == TextFit::Complete);
    CHECK(fit(a, "{}") == TextFit::Complete);
    CHECK(fit(a, "[]") == TextFit::Dead);
    CHECK(fit(a, "\"x\"") == TextFit::Dead);
    CHECK(fit(a, R"({"a":1)") == TextFit::Prefix);
    CHECK(fit(a, R"({"a":01})") == TextFit::Dead);
}
