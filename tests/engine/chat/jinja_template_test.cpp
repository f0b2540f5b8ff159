// Unit tests of the Jinja interpreter: Python value semantics, JSON, error
// reporting with locations, and the bounds that keep hostile templates from
// hanging or crashing the engine. (Rendering against jinja2 itself is in
// jinja_reference_test.)
#include <QtTest>

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

QByteArray q(const std::string& s) { return QByteArray::fromStdString(s); }

}  // namespace

class JinjaTemplateTest : public QObject {
    Q_OBJECT

private slots:
    void pythonFloatRepr() {
        using weir::jinja::py::formatFloat;
        QCOMPARE(q(formatFloat(0.1)), q("0.1"));
        QCOMPARE(q(formatFloat(1.0)), q("1.0"));
        QCOMPARE(q(formatFloat(-2.5)), q("-2.5"));
        QCOMPARE(q(formatFloat(1e16)), q("1e+16"));
        QCOMPARE(q(formatFloat(1e15)), q("1000000000000000.0"));
        QCOMPARE(q(formatFloat(1e-5)), q("1e-05"));
        QCOMPARE(q(formatFloat(0.0001)), q("0.0001"));
        QCOMPARE(q(formatFloat(1.0 / 3)), q("0.3333333333333333"));
        QCOMPARE(q(formatFloat(1.5e300)), q("1.5e+300"));
        QCOMPARE(q(formatFloat(-0.0)), q("-0.0"));
    }

    void pythonStrAndRepr() {
        Value list = Value::list({Value("it's"), Value(1), Value::none(), Value(true), Value(2.0)});
        QCOMPARE(q(list.str()), q("[\"it's\", 1, None, True, 2.0]"));
        Value d = Value::dict();
        d.set("k", Value("v\n"));
        QCOMPARE(q(d.str()), q("{'k': 'v\\n'}"));
        QCOMPARE(q(Value::tuple({Value(1)}).str()), q("(1,)"));
        QCOMPARE(q(Value("x").repr()), q("'x'"));
        QCOMPARE(q(Value().str()), q(""));
    }

    void pythonStrip() {
        using weir::jinja::py::strip;
        QCOMPARE(q(strip("\xe3\x80\x80 x y \xc2\xa0\n", true, true)), q("x y"));  // U+3000, NBSP
        QCOMPARE(q(strip("  x  ", true, false)), q("x  "));
        QCOMPARE(q(strip("  x  ", false, true)), q("  x"));
        QCOMPARE(q(strip("\xa0x\xa0", true, true)), q("\xa0x\xa0"));  // a stray byte is not NBSP
        QCOMPARE(q(strip("\xe2\x9c\x93 ", true, true)), q("\xe2\x9c\x93"));  // U+2713 kept
        std::string chars = "x\xc3\xa9";
        QCOMPARE(q(strip("\xc3\xa9xaxx\xc3\xa9", true, true, &chars)), q("a"));
        QCOMPARE(q(strip("", true, true)), q(""));
        QCOMPARE(q(strip(" \t\n", true, true)), q(""));
    }

    void pythonEquality() {
        QVERIFY(Value(1).equals(Value(1.0)));
        QVERIFY(Value(true).equals(Value(1)));
        QVERIFY(!Value("1").equals(Value(1)));
        QVERIFY(!Value::list({Value(1)}).equals(Value::tuple({Value(1)})));
        Value a = Value::dict(), b = Value::dict();
        a.set("x", Value(1)).set("y", Value(2));
        b.set("y", Value(2)).set("x", Value(1));
        QVERIFY(a.equals(b));  // dict equality ignores order
        QVERIFY(!Value::none().equals(Value()));
    }

    void jsonParseAndDump() {
        Value v = Value::parseJson("{\"a\": [1, 2.0, -3e2, true, null], \"s\": \"\\u00e9\\ud83d\\ude00\\n\\\"\", \"e\": {}}");
        QVERIFY(v.isMapping());
        QVERIFY(v.get("a")->asList()[0].isInt());
        QVERIFY(v.get("a")->asList()[1].isFloat());
        QCOMPARE(v.get("a")->asList()[2].asDouble(), -300.0);
        QCOMPARE(q(v.get("s")->asString()), q("é😀\n\""));
        QCOMPARE(q(v.toJson()), q("{\"a\": [1, 2.0, -300.0, true, null], \"s\": \"é😀\\n\\\"\", \"e\": {}}"));
        Value::JsonStyle pretty;
        pretty.pretty = true;
        pretty.indent = "  ";
        pretty.itemSeparator = ",";
        QCOMPARE(q(Value::parseJson("[1,{\"a\":[]}]").toJson(pretty)), q("[\n  1,\n  {\n    \"a\": []\n  }\n]"));
        QCOMPARE(q(Value("\x01\t").toJson()), q("\"\\u0001\\t\""));
    }

    void jsonErrorsNameThePosition() {
        for (const char* bad : {"", "[1,", "{\"a\" 1}", "[1 2]", "\"unterminated", "tru", "{\"a\":1}x", "[01x]"}) {
            try {
                Value::parseJson(bad);
                QFAIL(qPrintable(QString("accepted bad JSON: ") + bad));
            } catch (const weir::Error& e) {
                QVERIFY2(QString(e.what()).contains("at offset"), e.what());
            }
        }
        std::string deep(100000, '[');
        try {
            Value::parseJson(deep);
            QFAIL("accepted absurdly deep JSON");
        } catch (const weir::Error& e) {
            QVERIFY2(QString(e.what()).contains("nesting"), e.what());
        }
    }

    void contextVariables() {
        Value ctx = Value::dict();
        ctx.set("name", Value("Ada")).set("items", Value::list({Value(1), Value(2)}));
        QCOMPARE(q(render("{{ name }}:{% for i in items %}{{ i }}{% endfor %}", ctx)), q("Ada:12"));
    }

    void syntaxErrorsHaveLocations() {
        std::string e = errorOf("line one\n  {% if %}");
        QVERIFY2(QString::fromStdString(e).startsWith("chat template: line 2, column"), e.c_str());
        e = errorOf("{{ 'x' }}\n\n{% for x in y %}unclosed");
        QVERIFY2(QString::fromStdString(e).contains("line 3"), e.c_str());
        QVERIFY2(QString::fromStdString(e).contains("endfor"), e.c_str());
        e = errorOf("{% include 'other.jinja' %}");
        QVERIFY2(QString::fromStdString(e).contains("'include'"), e.c_str());
        e = errorOf("{{ 1 | no_such_filter }}");
        QVERIFY2(QString::fromStdString(e).contains("no filter named 'no_such_filter'"), e.c_str());
    }

    void runtimeErrorsHaveLocations() {
        std::string e = errorOf("ok\n{{ 1 + 'a' }}");
        QVERIFY2(QString::fromStdString(e).startsWith("chat template: line 2, column"), e.c_str());
        QVERIFY2(QString::fromStdString(e).contains("unsupported operand"), e.c_str());
        e = errorOf("{{ missing.attr }}");
        QVERIFY2(QString::fromStdString(e).contains("'missing' is undefined"), e.c_str());
    }

    void raiseExceptionIsTemplateRaised() {
        try {
            render("a\n  {{ raise_exception('roles must alternate') }}");
            QFAIL("no exception");
        } catch (const weir::jinja::TemplateRaised& e) {
            QCOMPARE(q(e.templateMessage()), q("roles must alternate"));
            QVERIFY2(QString(e.what()).startsWith("chat template: line 2, column"), e.what());
        }
    }

    void infiniteRecursionIsBounded() {
        std::string e = errorOf("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
        QVERIFY2(QString::fromStdString(e).contains("nested too deeply"), e.c_str());
    }

    void workIsBounded() {
        RenderOptions o;
        o.maxSteps = 100000;
        std::string e = errorOf("{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}"
                                "{% endfor %}{% endfor %}{% endfor %}",
                                o);
        QVERIFY2(QString::fromStdString(e).contains("too many steps"), e.c_str());
    }

    void outputIsBounded() {
        RenderOptions o;
        o.maxOutputBytes = 4096;
        std::string e = errorOf("{% for i in range(100000) %}0123456789{% endfor %}", o);
        QVERIFY2(QString::fromStdString(e).contains("exceeds 4096 bytes"), e.c_str());
        e = errorOf("{{ 'x' * 1000000000000 }}", o);
        QVERIFY2(QString::fromStdString(e).contains("too large"), e.c_str());
        e = errorOf("{{ range(100000000) | length }}");
        QVERIFY2(QString::fromStdString(e).contains("range too large"), e.c_str());
        e = errorOf("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                    o);
        QVERIFY2(QString::fromStdString(e).contains("too large"), e.c_str());
    }

    void deepNestingIsRefused() {
        for (const std::string& src : {"{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}",
                                       "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}",
                                       "{{ " + std::string(5000, '-') + "1 }}",
                                       [] {
                                           std::string s;
                                           for (int i = 0; i < 5000; ++i) s += "{% if true %}";
                                           return s;
                                       }()}) {
            std::string e = errorOf(src);
            QVERIFY2(QString::fromStdString(e).contains("nested too deeply"), e.c_str());
        }
    }

    void deepValuesAreRefused() {
        // Values built ever deeper at run time stop at Value::kMaxDepth, so
        // comparing, printing or freeing them cannot exhaust the stack.
        std::string e = errorOf("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}"
                                "{% endfor %}{{ ns.l == ns.l }}");
        QVERIFY2(QString::fromStdString(e).contains("nested more than 500"), e.c_str());
        QVERIFY2(QString::fromStdString(e).startsWith("chat template: line 1"), e.c_str());
        std::string ok = render("{% set ns = namespace(l=[]) %}{% for i in range(400) %}{% set ns.l = [ns.l] %}"
                                "{% endfor %}{{ ns.l | length }}");
        QCOMPARE(q(ok), q("1"));
    }

    void absurdArgumentsFailCleanly() {
        for (const char* src : {"{{ 'x' | indent(1000000000000) }}", "{{ [1] | tojson(indent=1000000000000) }}",
                                "{{ '{99999999999999999999999}'.format(1) }}",
                                "{{ ('x' * 1000000) | replace('x', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy') }}",
                                "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}"
                                "{% endfor %}"}) {
            std::string e = errorOf(src);
            QVERIFY2(QString::fromStdString(e).startsWith("chat template: line 1"), (std::string(src) + " -> " + e).c_str());
        }
        // Digit runs too long for an index are plain keys, not a crash.
        QCOMPARE(q(render("{{ [{'a': 1}] | map(attribute='99999999999999999999999') | list }}")), q("[Undefined]"));
    }

    void selfContainingNamespaceDoesNotHang() {
        std::string e = errorOf("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}");
        QVERIFY2(!e.empty(), "tojson of a namespace must fail like json.dumps");
        // str() of a cycle is cut off, not recursed forever.
        std::string out = render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
        QVERIFY(out.find("...") != std::string::npos);
    }

    // Mutations of real templates: each either renders or throws weir::Error;
    // nothing crashes, hangs or throws anything else.
    void mutatedTemplatesNeverCrash() {
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
        QVERIFY(rendered > 0);
        QVERIFY(rejected > 0);
    }
};

QTEST_APPLESS_MAIN(JinjaTemplateTest)
#include "jinja_template_test.moc"
