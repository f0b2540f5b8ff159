// Which bytes of a rendered template came from the conversation: the
// interpreter follows untrusted text through concatenation, filters, methods,
// captured blocks and macros, so that the tokenizer parses control tokens only
// in what the template itself wrote (issue 16: a user message containing
// "<start_of_turn>" became a real turn marker).
#include <QtTest>

#include "engine/chat/jinja_provenance.h"
#include "engine/chat/jinja_template.h"

using weir::MarkedText;
using weir::jinja::Template;
using weir::jinja::Value;

namespace {

// The rendered text with every untrusted byte shown as '#'.
std::string masked(const MarkedText& m) {
    std::string out = m.text;
    for (const auto& r : m.untrusted.ranges())
        for (size_t i = r.begin; i < r.end; ++i) out[i] = '#';
    return out;
}

// Renders src with `c` (a string) and `d` (a dict) from the conversation and
// `t` from the template's caller, untrusted, and returns the masked text.
std::string render(const std::string& src, const std::string& c = "ab") {
    Value d = Value::dict();
    d.set("<k>", Value("<v>"));
    Value ctx = Value::dict();
    ctx.set("c", weir::jinja::markUntrusted(Value(c)));
    ctx.set("d", weir::jinja::markUntrusted(d));
    ctx.set("l", weir::jinja::markUntrusted(Value::list({Value("x"), Value("y")})));
    return masked(Template(src).renderMarked(ctx));
}

}  // namespace

class JinjaProvenanceTest : public QObject {
    Q_OBJECT

private slots:
    void templateTextIsTrusted() {
        QCOMPARE(render("<s>{{ '<t>' }}{% if true %}<u>{% endif %}"), std::string("<s><t><u>"));
    }

    void outputAndConcatenationAreExact() {
        QCOMPARE(render("<s>{{ c }}</s>"), std::string("<s>##</s>"));
        QCOMPARE(render("{{ '<s>' + c + '</s>' }}"), std::string("<s>##</s>"));
        QCOMPARE(render("{{ '<s>' ~ c ~ 1 }}"), std::string("<s>##1"));
        QCOMPARE(render("{{ ['<s>', c] | join('|') }}"), std::string("<s>|##"));
        QCOMPARE(render("{{ c.join(['<s>', '</s>']) }}"), std::string("<s>##</s>"));
    }

    void trimAndStripKeepWhatRemains() {
        QCOMPARE(render("{{ c | trim }}", "  ab \n"), std::string("##"));
        QCOMPARE(render("{% set x %} <s>{{ c }} {% endset %}{{ x | trim }}"), std::string("<s>##"));
        QCOMPARE(render("{% set x %}{{ c }}<s> {% endset %}{{ x.strip() }}"), std::string("##<s>"));
        QCOMPARE(render("{{ ('  <s>' + c).lstrip() }}"), std::string("<s>##"));
    }

    void blocksAndMacrosCarryTheirMarks() {
        QCOMPARE(render("{% macro m(x) %}<t>{{ x }}</t>{% endmacro %}{{ m(c) }}{{ m('ok') }}"),
                 std::string("<t>##</t><t>ok</t>"));
        QCOMPARE(render("{% set ns = namespace(t='<s>') %}{% for x in l %}{% set ns.t = ns.t + x %}{% endfor %}{{ ns.t }}"),
                 std::string("<s>##"));
        QCOMPARE(render("{% filter upper %}<s>{{ c }}{% endfilter %}"), std::string(5, '#'));  // mixed: all
    }

    // Anything else made from untrusted text is untrusted as a whole.
    void derivedTextIsUntrusted() {
        const std::string c = "<start_of_turn>";
        const std::string all(c.size(), '#');
        QCOMPARE(render("{{ c | upper | lower }}", c), all);
        QCOMPARE(render("{{ c | replace('x', 'y') }}", c), all);
        QCOMPARE(render("{{ c[0:] }}", c), all);
        QCOMPARE(render("{% for ch in c %}{{ ch }}{% endfor %}", c), all);
        QCOMPARE(render("{{ c | list | join('') }}", c), all);
        // The pieces stay untrusted, the template's separators do not; no
        // control token can span both (the tokenizer needs it all trusted).
        QCOMPARE(render("{{ c.split('_') | join('_') }}", c), std::string("######_##_#####"));
        QCOMPARE(render("{{ '{}'.format(c) }}", c), all);
        QCOMPARE(render("{{ '%s' % c }}", c), all);
        QCOMPARE(render("{{ c | e }}", "<x>"), std::string(9, '#'));  // &lt;x&gt;
        QCOMPARE(render("{{ c * 2 }}", c), all + all);
        QCOMPARE(render("{{ c | tojson }}", c), std::string(c.size() + 2, '#'));
    }

    // Keys of the conversation's dicts are its text too (tool schemas).
    void dictKeysAreUntrusted() {
        QCOMPARE(render("{% for k, v in d.items() %}{{ k }}={{ v }}{% endfor %}"), std::string("###=###"));
        QCOMPARE(render("{% for k in d %}{{ k }}{% endfor %}"), std::string("###"));
        QCOMPARE(render("{% for k, v in d | dictsort %}{{ k }}{% endfor %}"), std::string("###"));
        QCOMPARE(render("{{ d | tojson }}"), std::string(std::string("{\"<k>\": \"<v>\"}").size(), '#'));
        QCOMPARE(render("{% set e = {c: 1} %}{% for k in e %}{{ k }}{% endfor %}"), std::string("##"));
        QCOMPARE(render("{% for k in dict(d) %}{{ k }}{% endfor %}"), std::string("###"));
        QCOMPARE(render("{{ d }}"), std::string(std::string("{'<k>': '<v>'}").size(), '#'));
    }

    // Values passed through unchanged keep their own marks: a template literal
    // picked by a filter next to client text stays trusted.
    void passThroughKeepsTrust() {
        QCOMPARE(render("{{ [c, '<s>'] | last }}"), std::string("<s>"));
        QCOMPARE(render("{{ undefined_name | default('<s>') }}"), std::string("<s>"));
        QCOMPARE(render("{{ (c if false else '<s>') }}"), std::string("<s>"));
    }

    void textWithoutMarksIsUntrustedAtTheBoundary() {
        Value built = Value::text("<t>ab</t>", [] {
            weir::UntrustedRanges r;
            r.add(3, 5);
            return r;
        }());
        Value ctx = Value::dict();
        ctx.set("m", weir::jinja::markUntrusted(Value::list({built, Value("<plain>")})));
        QCOMPARE(masked(Template("{{ m[0] }}|{{ m[1] }}").renderMarked(ctx)), std::string("<t>##</t>|#######"));
    }
};

QTEST_APPLESS_MAIN(JinjaProvenanceTest)
#include "jinja_provenance_test.moc"
