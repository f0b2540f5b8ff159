// Unit tests of the Jinja interpreter: Python value semantics, JSON, error
// reporting with locations, and the bounds that keep hostile templates from
// hanging or crashing the engine. (Rendering against jinja2 itself is in
// jinja_reference_test.)
#include "tests/support/text_match.h"
#include "tests/support/weir_test.h"

#include <random>

#include "engine/chat/jinja_template.h"

using weir::jinja::RenderOptions;
using weir::jinja::Template;
using weir::jinja::Value;

namespace {

std::string render(const std::string& src, const Value& ctx = Value::dict(), const RenderOptions& o = {}) {
    return Template(src).render(ctx, o);
}

// The message of the weir::Error that rendering src throws ("" if none).
std::string errorOf(const std::string& src, const RenderOptions& o = {}) {
    try {
        render(src, Value::dict(), o);
    } catch (const weir::Error& e) {
        return e.what();
    }
    return "";
}

// Rendered text as a std::string, so both sides of a comparison print as text.
std::string q(std::string s) { return s; }

}  // namespace

WEIR_TEST(JinjaTemplate, pythonFloatRepr) {
    using weir::jinja::py::formatFloat;
    REQUIRE_EQ(q(formatFloat(0.1)), q("0.1"));
    REQUIRE_EQ(q(formatFloat(1.0)), q("1.0"));
    REQUIRE_EQ(q(formatFloat(-2.5)), q("-2.5"));
    REQUIRE_EQ(q(formatFloat(1e16)), q("1e+16"));
    REQUIRE_EQ(q(formatFloat(1e15)), q("1000000000000000.0"));
    REQUIRE_EQ(q(formatFloat(1e-5)), q("1e-05"));
    REQUIRE_EQ(q(formatFloat(0.0001)), q("0.0001"));
    REQUIRE_EQ(q(formatFloat(1.0 / 3)), q("0.3333333333333333"));
    REQUIRE_EQ(q(formatFloat(1.5e300)), q("1.5e+300"));
    REQUIRE_EQ(q(formatFloat(-0.0)), q("-0.0"));
}

WEIR_TEST(JinjaTemplate, pythonStrAndRepr) {
    Value list = Value::list({Value("it's"), Value(1), Value::none(), Value(true), Value(2.0)});
    REQUIRE_EQ(q(list.str()), q("[\"it's\", 1, None, True, 2.0]"));
    Value d = Value::dict();
    d.set("k", Value("v\n"));
    REQUIRE_EQ(q(d.str()), q("{'k': 'v\\n'}"));
    REQUIRE_EQ(q(Value::tuple({Value(1)}).str()), q("(1,)"));
    REQUIRE_EQ(q(Value("x").repr()), q("'x'"));
    REQUIRE_EQ(q(Value().str()), q(""));
}

WEIR_TEST(JinjaTemplate, pythonStrip) {
    using weir::jinja::py::strip;
    REQUIRE_EQ(q(strip("\xe3\x80\x80 x y \xc2\xa0\n", true, true)), q("x y"));  // U+3000, NBSP
    REQUIRE_EQ(q(strip("  x  ", true, false)), q("x  "));
    REQUIRE_EQ(q(strip("  x  ", false, true)), q("  x"));
    REQUIRE_EQ(q(strip("\xa0x\xa0", true, true)), q("\xa0x\xa0"));  // a stray byte is not NBSP
    REQUIRE_EQ(q(strip("\xe2\x9c\x93 ", true, true)), q("\xe2\x9c\x93"));  // U+2713 kept
    std::string chars = "x\xc3\xa9";
    REQUIRE_EQ(q(strip("\xc3\xa9xaxx\xc3\xa9", true, true, &chars)), q("a"));
    REQUIRE_EQ(q(strip("", true, true)), q(""));
    REQUIRE_EQ(q(strip(" \t\n", true, true)), q(""));
}

WEIR_TEST(JinjaTemplate, pythonEquality) {
    REQUIRE(Value(1).equals(Value(1.0)));
    REQUIRE(Value(true).equals(Value(1)));
    REQUIRE(!Value("1").equals(Value(1)));
    REQUIRE(!Value::list({Value(1)}).equals(Value::tuple({Value(1)})));
    Value a = Value::dict(), b = Value::dict();
    a.set("x", Value(1)).set("y", Value(2));
    b.set("y", Value(2)).set("x", Value(1));
    REQUIRE(a.equals(b));  // dict equality ignores order
    REQUIRE(!Value::none().equals(Value()));
}

WEIR_TEST(JinjaTemplate, jsonParseAndDump) {
    Value v = Value::parseJson("{\"a\": [1, 2.0, -3e2, true, null], \"s\": \"\\u00e9\\ud83d\\ude00\\n\\\"\", \"e\": {}}");
    REQUIRE(v.isMapping());
    REQUIRE(v.get("a")->asList()[0].isInt());
    REQUIRE(v.get("a")->asList()[1].isFloat());
    REQUIRE_EQ(v.get("a")->asList()[2].asDouble(), -300.0);
    REQUIRE_EQ(q(v.get("s")->asString()), q("é😀\n\""));
    REQUIRE_EQ(q(v.toJson()), q("{\"a\": [1, 2.0, -300.0, true, null], \"s\": \"é😀\\n\\\"\", \"e\": {}}"));
    Value::JsonStyle pretty;
    pretty.pretty = true;
    pretty.indent = "  ";
    pretty.itemSeparator = ",";
    REQUIRE_EQ(q(Value::parseJson("[1,{\"a\":[]}]").toJson(pretty)), q("[\n  1,\n  {\n    \"a\": []\n  }\n]"));
    REQUIRE_EQ(q(Value("\x01\t").toJson()), q("\"\\u0001\\t\""));
}

WEIR_TEST(JinjaTemplate, jsonErrorsNameThePosition) {
    for (const char* bad : {"", "[1,", "{\"a\" 1}", "[1 2]", "\"unterminated", "tru", "{\"a\":1}x", "[01x]"}) {
        try {
            Value::parseJson(bad);
            FAIL(std::string("accepted bad JSON: ") + bad);
        } catch (const weir::Error& e) {
            REQUIRE_MSG(weirtest::contains(e.what(), "at offset"), e.what());
        }
    }
    std::string deep(100000, '[');
    try {
        Value::parseJson(deep);
        FAIL("accepted absurdly deep JSON");
    } catch (const weir::Error& e) {
        REQUIRE_MSG(weirtest::contains(e.what(), "nesting"), e.what());
    }
}

WEIR_TEST(JinjaTemplate, contextVariables) {
    Value ctx = Value::dict();
    ctx.set("name", Value("Ada")).set("items", Value::list({Value(1), Value(2)}));
    REQUIRE_EQ(q(render("{{ name }}:{% for i in items %}{{ i }}{% endfor %}", ctx)), q("Ada:12"));
}

WEIR_TEST(JinjaTemplate, syntaxErrorsHaveLocations) {
    std::string e = errorOf("line one\n  {% if %}");
    REQUIRE_MSG(weirtest::startsWith(e, "chat template: line 2, column"), e.c_str());
    e = errorOf("{{ 'x' }}\n\n{% for x in y %}unclosed");
    REQUIRE_MSG(weirtest::contains(e, "line 3"), e.c_str());
    REQUIRE_MSG(weirtest::contains(e, "endfor"), e.c_str());
    e = errorOf("{% include 'other.jinja' %}");
    REQUIRE_MSG(weirtest::contains(e, "'include'"), e.c_str());
    e = errorOf("{{ 1 | no_such_filter }}");
    REQUIRE_MSG(weirtest::contains(e, "no filter named 'no_such_filter'"), e.c_str());
}

WEIR_TEST(JinjaTemplate, runtimeErrorsHaveLocations) {
    std::string e = errorOf("ok\n{{ 1 + 'a' }}");
    REQUIRE_MSG(weirtest::startsWith(e, "chat template: line 2, column"), e.c_str());
    REQUIRE_MSG(weirtest::contains(e, "unsupported operand"), e.c_str());
    e = errorOf("{{ missing.attr }}");
    REQUIRE_MSG(weirtest::contains(e, "'missing' is undefined"), e.c_str());
}

WEIR_TEST(JinjaTemplate, raiseExceptionIsTemplateRaised) {
    try {
        render("a\n  {{ raise_exception('roles must alternate') }}");
        FAIL("no exception");
    } catch (const weir::jinja::TemplateRaised& e) {
        REQUIRE_EQ(q(e.templateMessage()), q("roles must alternate"));
        REQUIRE_MSG(weirtest::startsWith(e.what(), "chat template: line 2, column"), e.what());
    }
}

WEIR_TEST(JinjaTemplate, infiniteRecursionIsBounded) {
    std::string e = errorOf("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    REQUIRE_MSG(weirtest::contains(e, "nested too deeply"), e.c_str());
}

WEIR_TEST(JinjaTemplate, workIsBounded) {
    RenderOptions o;
    o.maxSteps = 100000;
    std::string e = errorOf("{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}"
                            "{% endfor %}{% endfor %}{% endfor %}",
                            o);
    REQUIRE_MSG(weirtest::contains(e, "too many steps"), e.c_str());
}

WEIR_TEST(JinjaTemplate, outputIsBounded) {
    RenderOptions o;
    o.maxOutputBytes = 4096;
    std::string e = errorOf("{% for i in range(100000) %}0123456789{% endfor %}", o);
    REQUIRE_MSG(weirtest::contains(e, "exceeds 4096 bytes"), e.c_str());
    e = errorOf("{{ 'x' * 1000000000000 }}", o);
    REQUIRE_MSG(weirtest::contains(e, "too large"), e.c_str());
    e = errorOf("{{ range(100000000) | length }}");
    REQUIRE_MSG(weirtest::contains(e, "range too large"), e.c_str());
    e = errorOf("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                o);
    REQUIRE_MSG(weirtest::contains(e, "too large"), e.c_str());
}

WEIR_TEST(JinjaTemplate, deepNestingIsRefused) {
    for (const std::string& src : {"{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}",
                                   "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}",
                                   "{{ " + std::string(5000, '-') + "1 }}",
                                   [] {
                                       std::string s;
                                       for (int i = 0; i < 5000; ++i) s += "{% if true %}";
                                       return s;
                                   }()}) {
        std::string e = errorOf(src);
        REQUIRE_MSG(weirtest::contains(e, "nested too deeply"), e.c_str());
    }
}

WEIR_TEST(JinjaTemplate, deepValuesAreRefused) {
    // Values built ever deeper at run time stop at Value::kMaxDepth, so
    // comparing, printing or freeing them cannot exhaust the stack.
    std::string e = errorOf("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}"
                            "{% endfor %}{{ ns.l == ns.l }}");
    REQUIRE_MSG(weirtest::contains(e, "nested more than 500"), e.c_str());
    REQUIRE_MSG(weirtest::startsWith(e, "chat template: line 1"), e.c_str());
    std::string ok = render("{% set ns = namespace(l=[]) %}{% for i in range(400) %}{% set ns.l = [ns.l] %}"
                            "{% endfor %}{{ ns.l | length }}");
    REQUIRE_EQ(q(ok), q("1"));
}

WEIR_TEST(JinjaTemplate, absurdArgumentsFailCleanly) {
    for (const char* src : {"{{ 'x' | indent(1000000000000) }}", "{{ [1] | tojson(indent=1000000000000) }}",
                            "{{ '{99999999999999999999999}'.format(1) }}",
                            "{{ ('x' * 1000000) | replace('x', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy') }}",
                            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}"
                            "{% endfor %}"}) {
        std::string e = errorOf(src);
        REQUIRE_MSG(weirtest::startsWith(e, "chat template: line 1"), (std::string(src) + " -> " + e).c_str());
    }
    // Digit runs too long for an index are plain keys, not a crash.
    REQUIRE_EQ(q(render("{{ [{'a': 1}] | map(attribute='99999999999999999999999') | list }}")), q("[Undefined]"));
}

WEIR_TEST(JinjaTemplate, selfContainingNamespaceDoesNotHang) {
    std::string e = errorOf("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}");
    REQUIRE_MSG(!e.empty(), "tojson of a namespace must fail like json.dumps");
    // str() of a cycle is cut off, not recursed forever.
    std::string out = render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
    REQUIRE(out.find("...") != std::string::npos);
}

// Mutations of real templates: each either renders or throws weir::Error;
// nothing crashes, hangs or throws anything else.
WEIR_TEST(JinjaTemplate, mutatedTemplatesNeverCrash) {
    const std::string base =
        "{{ bos_token }}{%- for m in messages -%}{%- if m.role == 'user' -%}<u>{{ m.content | trim }}"
        "{%- elif m.role == 'assistant' %}<a>{{ m['content'][1:] ~ (loop.index0 % 2) }}{% else %}"
        "{{ raise_exception('bad role') }}{% endif %}{% set ns = namespace(x=[1, 2.5, 'z']) %}"
        "{{ ns.x | tojson(indent=2) }}{% endfor %}{% if add_generation_prompt %}<a>{% endif %}";
    const char* pieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "(", ")", "[", "]", "'", "\"", "|", ".",
                            "-", "~", "if", "for", "endfor", "endif", "set", "x", "0", "**", "//", "\n"};
    Value ctx = Value::parseJson(
        "{\"messages\": [{\"role\": \"user\", \"content\": \" hi \"}, {\"role\": \"assistant\", \"content\": \"yo\"}],\n"
        "                \"bos_token\": \"<bos>\", \"add_generation_prompt\": true}");
    RenderOptions o;
    o.maxSteps = 100000;
    o.maxOutputBytes = 1 << 16;
    std::mt19937 rng(1234);
    int rendered = 0, rejected = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::string s = base;
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < edits; ++k) {
            size_t pos = rng() % (s.size() + 1);
            switch (rng() % 3) {
                case 0: s.insert(pos, pieces[rng() % std::size(pieces)]); break;
                case 1: if (pos < s.size()) s.erase(pos, 1 + rng() % 3); break;
                default: if (pos < s.size()) s[pos] = static_cast<char>(rng() % 128); break;
            }
        }
        try {
            Template(s).render(ctx, o);
            ++rendered;
        } catch (const weir::Error&) {
            ++rejected;
        }
    }
    REQUIRE(rendered > 0);
    REQUIRE(rejected > 0);
}
