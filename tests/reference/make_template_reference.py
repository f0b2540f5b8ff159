#!/usr/bin/env python3
"""Reference renderings of chat templates, made with python jinja2.

Renders conversations through the real chat templates in tests/data/templates
(and Weir's built-in fallbacks, read out of engine/chat/builtin_templates.cpp)
plus a set of small feature snippets, with jinja2 configured the way HF
transformers renders tokenizer.chat_template: ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, the loopcontrols extension, HF's tojson filter and
the raise_exception / strftime_now globals. Writes
tests/data/templates/expected.json; tests/engine/chat/ must reproduce every
output byte for byte (or fail where jinja2 fails).

Run: .venv/bin/python tests/reference/make_template_reference.py
"""
import datetime
import json
import pathlib
import re
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "tests" / "data" / "templates"
BUILTINS = ROOT / "engine" / "chat" / "builtin_templates.cpp"

# strftime_now() formats this instant (UTC) in every case: 2025-07-01 11:40:45.
NOW = 1751370045


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    """What raise_exception() throws, told apart from jinja2's own errors."""


class GenerationBlock(Extension):
    """{% generation %}...{% endgeneration %} as HF's AssistantTracker renders it
    when no assistant mask is requested: the body, in a scope of its own."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # HF replaces jinja2's tojson (which escapes HTML and sorts keys).
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise RaisedByTemplate(message)

    def strftime_now(fmt):
        return datetime.datetime.fromtimestamp(NOW, tz=datetime.timezone.utc).strftime(fmt)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


ENV = make_env()


def render(source, context):
    """{"output": text} or {"error": message, "raised": bool}."""
    try:
        return {"output": ENV.from_string(source).render(**context)}
    except RaisedByTemplate as e:
        return {"error": str(e), "raised": True}
    except Exception as e:  # any jinja2 or Python error: the C++ side must fail too
        return {"error": f"{type(e).__name__}: {e}", "raised": False}


def builtin_sources():
    text = BUILTINS.read_text()
    found = dict(re.findall(r'const char\* const k(\w+) = R"JINJA\((.*?)\)JINJA";', text, re.S))
    return {"builtin-gemma": found["Gemma"], "builtin-llama3": found["Llama3"], "builtin-chatml": found["ChatML"]}


# ---------------------------------------------------------------- conversations

def S(c):
    return {"role": "system", "content": c}


def U(c):
    return {"role": "user", "content": c}


def A(c, **kw):
    return {"role": "assistant", "content": c, **kw}


def T(c, **kw):
    return {"role": "tool", "content": c, **kw}


def call(name, args, cid="call_1"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time", "description": "Current time in a time zone.",
    "parameters": {"type": "object", "properties": {
        "timezone": {"type": "string", "description": "IANA name"},
        "precise": {"type": "boolean"}}, "required": []}}}
TOOLS = [WEATHER, CLOCK]

ROUNDTRIP = [U("What's the weather in Paris?"),
             A("", tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"})]),
             T('{"temperature": 18, "condition": "sunny"}', tool_call_id="call_1", name="get_weather")]

# (name, messages, add_generation_prompt, extra variables) for every family.
GENERIC = [
    ("user", [U("Hello!")], True, {}),
    ("user-no-generation-prompt", [U("Hello!")], False, {}),
    ("system-user", [S("You are a helpful assistant."), U("What is 2+2?")], True, {}),
    ("multi-turn", [U("Hi"), A("Hello! How can I help?"), U("Tell me a joke.")], True, {}),
    ("system-multi-turn-ending-with-assistant",
     [S("Answer in one word."), U("Capital of France?"), A("Paris."), U("And of Italy?"), A("Rome.")], False, {}),
    ("unicode", [S("Réponds en français 🇫🇷"), U("Grüße! 日本語で答えて。Ω≈ç√ 👋🏽"), A("Bien sûr — voilà ✓"),
                 U("Ещё раз, пожалуйста")], True, {}),
    ("whitespace-to-trim", [S("  Be brief.  \n"), U("\n\n  What's up?  \t\n"), A("  Not much.\n\n"),
                            U("  \u3000ok\u00a0 ")], True, {}),
    ("special-characters", [U('Quote "this" and \'that\' \\ backslash {{ braces }} {% tag %} <b>html</b> & done\n'
                              'line2\ttab')], True, {}),
    ("empty-content", [U("")], True, {}),
    ("three-exchanges", [U("1?"), A("one"), U("2?"), A("two"), U("3?"), A("three"), U("4?")], True, {}),
    ("tools-offered", [S("You can use tools."), U("Weather in Paris?")], True, {"tools": TOOLS}),
    ("tools-no-system", [U("What time is it in Tokyo?")], True, {"tools": [CLOCK]}),
    ("tool-call-roundtrip", ROUNDTRIP, True, {"tools": [WEATHER]}),
    ("tool-call-then-answer", ROUNDTRIP + [A("It is 18 °C and sunny in Paris."), U("Thanks!")], True,
     {"tools": [WEATHER]}),
    ("consecutive-users", [U("first"), U("second")], True, {}),
    ("assistant-first", [A("I start."), U("ok")], True, {}),
    ("system-only", [S("Just a system prompt.")], True, {}),
    ("empty-conversation", [], True, {}),
]

# Family-specific cases exercising each template's own features.
SPECIFIC = {
    "llama3.1": [
        ("builtin-tools-search-call",
         [S("Search when needed."), U("Who won the 2022 World Cup?"),
          A("", tool_calls=[call("brave_search", {"query": "2022 World Cup winner"})]),
          T("Argentina won the 2022 FIFA World Cup.", name="brave_search")], True,
         {"builtin_tools": ["brave_search", "wolfram_alpha", "code_interpreter"], "date_string": "01 Jan 2025"}),
        ("tools-in-system-message", [S("Be precise."), U("Weather in Oslo?")], True,
         {"tools": [WEATHER], "tools_in_user_message": False}),
        ("custom-tools", [U("Time in Lima?")], True, {"custom_tools": [CLOCK]}),
        ("two-tool-calls-rejected",
         [U("Paris and Rome?"), A("", tool_calls=[call("get_weather", {"city": "Paris"}),
                                                  call("get_weather", {"city": "Rome"}, "call_2")])], True,
         {"tools": [WEATHER]}),
        ("tool-result-as-object", ROUNDTRIP[:2] + [T({"temperature": 18, "ok": True})], True, {"tools": [WEATHER]}),
        ("tools-without-user-message", [S("sys")], True, {"tools": [WEATHER]}),
    ],
    "llama3.2": [
        ("date-from-strftime-now", [U("What's the date?")], True, {}),
        ("date-given", [S("Today matters."), U("What's the date?")], True, {"date_string": "29 Feb 2024"}),
        ("tools-in-system-message", [U("Weather in Oslo?")], True,
         {"tools": [WEATHER, CLOCK], "tools_in_user_message": False}),
        ("tool-result-list", ROUNDTRIP[:2] + [T([1, 2.5, "x", None])], True, {"tools": [WEATHER]}),
    ],
    "qwen2.5": [
        ("parallel-tool-calls",
         [S("Use tools."), U("Weather in Paris and Rome?"),
          A("Checking both.", tool_calls=[call("get_weather", {"city": "Paris"}),
                                          call("get_weather", {"city": "Rome"}, "call_2")]),
          T('{"temp": 18}'), T('{"temp": 24}')], True, {"tools": [WEATHER]}),
        ("tool-call-without-function-wrapper",
         [U("Time?"), A(None, tool_calls=[{"name": "get_time", "arguments": {"timezone": "UTC"}}]), T("12:00")],
         True, {"tools": [CLOCK]}),
        ("system-not-first", [U("a"), S("late system"), U("b")], True, {}),
    ],
    "qwen3": [
        ("thinking-in-history",
         [U("2+2?"), A("<think>\nsimple sum\n</think>\n\n4"), U("3+3?")], True, {}),
        ("thinking-current-turn",
         [U("2+2?"), A("<think>\nadd them\n</think>\n\n4")], False, {}),
        ("reasoning-content-field",
         [U("hi"), A("hello", reasoning_content="greet back")], False, {}),
        ("enable-thinking-false", [U("Quick answer please")], True, {"enable_thinking": False}),
        ("string-arguments",
         [U("Weather?"), A("", tool_calls=[call("get_weather", '{"city": "Paris"}')]), T("sunny")], True,
         {"tools": [WEATHER], "__raw_arguments": True}),
        ("multi-step-tools",
         [U("Plan my day"), A("", tool_calls=[call("get_time", {"timezone": "Europe/Paris"})]),
          T("<tool_response>09:00</tool_response>"), T("second result"),
          A("", tool_calls=[call("get_weather", {"city": "Paris"}, "call_2")]), T("rain")], True,
         {"tools": TOOLS}),
        ("system-with-tools", [S("Be nice."), U("Weather?")], True, {"tools": [WEATHER]}),
    ],
    "gemma3-tools-pythonic": [
        ("call-with-named-arguments",
         [U("Weather in Paris?"),
          {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris", "unit": "celsius"})],
           "content": ""},
          T("18 C, sunny")], True, {"tools": [WEATHER]}),
        ("call-with-positional-arguments",
         [U("Time?"), {"role": "assistant", "tool_calls": [call("get_time", ["UTC", True])], "content": ""},
          T("12:00")], True, {"tools": [CLOCK]}),
        ("two-calls", [U("both"), {"role": "assistant", "content": "", "tool_calls": [
            call("get_time", {"timezone": "UTC"}), call("get_weather", {"city": "Rome"}, "c2")]}], False,
         {"tools": TOOLS}),
        ("image-parts", [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": " Describe. "}]}],
         True, {}),
    ],
    "functiongemma-litert": [
        ("declarations-and-call",
         [S("You are a model that can do function calling with the following functions"),
          U("Weather in Paris?"),
          {"role": "assistant", "tool_calls": [
              {"function": {"name": "get_weather", "arguments": {"city": "<escape>Paris<escape>"}}}]},
          T("temperature:18")], True,
         {"tools": ["declaration:get_weather{description:<escape>Get weather<escape>}"]}),
        ("tool-call-left-open",
         [U("Weather?"), {"role": "assistant", "content": "Let me check.", "tool_calls": [
             {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]}], True,
         {"tools": ["declaration:get_weather{}"]}),
        ("call-without-response-rejected",
         [U("a"), {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
          U("b")], True, {}),
        ("content-parts", [{"role": "user", "content": [{"type": "text", "text": "  part one "},
                                                       {"type": "text", "text": "two"}]}], True, {}),
    ],
    "gemma4": [
        ("thinking-enabled", [S("Think first."), U("Why is the sky blue?")], True, {"enable_thinking": True}),
        ("tool-call-with-reasoning",
         [U("Weather in Paris?"),
          A("", reasoning_content="I should call the tool.",
            tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"})]),
          T('{"temperature": 18}', name="get_weather")], True, {"tools": TOOLS}),
    ],
    "builtin-chatml": [
        ("content-parts", [{"role": "system", "content": [{"type": "text", "text": "Sys "}, {"type": "text", "text": "two"}]},
                           {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Look"}]},
                           A(None)], False, {"tools": [CLOCK]}),
        ("parallel-calls-and-results",
         [S("Use tools."), U("Paris and Rome?"),
          A("", tool_calls=[call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Rome"}, "c2")]),
          T("18"), T("24")], True, {"tools": [WEATHER]}),
    ],
    "builtin-llama3": [
        ("content-parts", [{"role": "user", "content": [{"type": "text", "text": " a "}, {"type": "text", "text": "b "}]},
                           T({"ok": True})], True, {}),
        ("tool-call-and-result", ROUNDTRIP + [A("Sunny, 18 °C.")], False, {"tools": [WEATHER]}),
    ],
}

FAMILIES = {
    # family: (template file or builtin name, bos_token, eos_token)
    "gemma3": ("gemma3.jinja", "<bos>", "<eos>"),
    "gemma3-tools-pythonic": ("gemma3-tools-pythonic.jinja", "<bos>", "<eos>"),
    "functiongemma-litert": ("functiongemma-litert.jinja", "<bos>", "<eos>"),
    "gemma4": ("gemma4.jinja", "<bos>", "<eos>"),
    "llama3.1": ("llama3.1.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    "llama3.2": ("llama3.2.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    "qwen2.5": ("qwen2.5.jinja", "", "<|im_end|>"),
    "qwen3": ("qwen3.jinja", "", "<|im_end|>"),
    "builtin-gemma": ("builtin-gemma", "<bos>", "<eos>"),
    "builtin-llama3": ("builtin-llama3", "<|begin_of_text|>", "<|eot_id|>"),
    "builtin-chatml": ("builtin-chatml", "", "<|im_end|>"),
}


def family_cases():
    builtins = builtin_sources()
    out = []
    for family, (source_name, bos, eos) in FAMILIES.items():
        source = builtins[source_name] if source_name.startswith("builtin-") else (TEMPLATES / source_name).read_text()
        cases = []
        for name, messages, gen, extra in GENERIC + SPECIFIC.get(family, []):
            extra = dict(extra)
            raw_arguments = extra.pop("__raw_arguments", False)
            context = {"messages": messages, "add_generation_prompt": gen, "bos_token": bos, "eos_token": eos}
            context.update(extra)
            case = {"name": name, "context": context}
            if raw_arguments:
                case["raw_arguments"] = True  # the C++ side must not parse argument text
            case.update(render(source, context))
            cases.append(case)
        out.append({"family": family, "template": source_name, "cases": cases})
    return out


# ---------------------------------------------------------------- feature snippets

CTX = {
    "s": "  Hello World  ", "n": 7, "f": 2.5, "t": True, "z": None, "e": "", "lst": [3, 1, 2], "strs": ["b", "A", "c"],
    "d": {"b": 2, "a": 1, "C": 3}, "users": [{"name": "ann", "age": 31, "admin": True},
                                               {"name": "Bob", "age": 25},
                                               {"name": "cy", "age": 40, "admin": False}],
    "nested": {"k": [1, {"x": "y"}], "u": "é\u2028\n\x01\"\\", "f": 0.1, "big": 1e20, "neg": -0.0, "i": 10},
    "uni": "héllo wörld ✓", "items": {"items": "shadowed"},
}

SNIPPETS = [
    # whitespace control, trim_blocks, lstrip_blocks
    ("trim-lstrip-blocks", "{% if true %}\n  yes\n{% endif %}\nend"),
    ("lstrip-indented-tags", "a\n    {% if true %}\n    b\n    {% endif %}\nc"),
    ("lstrip-after-text-keeps", "x {% if true %}y{% endif %} z"),
    ("dash-strips", "a   {{- ' b ' -}}   c"),
    ("dash-blocks", "a \n {%- if true -%} \n b \n {%- endif -%} \n c"),
    ("plus-disables-lstrip", "  {%+ if true %}x{% endif %}"),
    ("plus-keeps-newline", "{% if true +%}\nx{% endif %}"),
    ("comments", "{# comment #}\nx {#- trimmed -#}   y\n  {# own line #}\nz"),
    ("raw-block", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}!"),
    ("raw-block-trimmed", "a\n  {%- raw -%}  {{ x }}  {%- endraw -%}  \nb"),
    ("crlf-normalized", "one\r\ntwo\rthree\r\n"),
    ("one-trailing-newline-dropped", "x\n\n"),
    ("variable-tags-keep-newline", "{{ 'a' }}\n{{ 'b' }}\n"),
    ("loop-with-trims", "{%- for i in range(3) %}\n  {{ i }}\n{%- endfor %}"),
    ("tag-at-start-of-template", "   {% if true %}a{% endif %}"),
    ("unicode-space-before-dash", "a\u00a0\u3000 {{- 'b' }}"),
    # literals and printing
    ("string-escapes", "{{ 'a\\nb\\t\\x41\\u00e9\\'q\\\"\\\\ \\d' }}"),
    ("adjacent-strings", "{{ \"double\" 'single' }}"),
    ("int-literals", "{{ 1_000 + 0x10 + 0o7 + 0b11 }}"),
    ("float-literals", "{{ 1.5e3 }} {{ 2.5 }} {{ 1e-5 }} {{ 1_0.5 }}"),
    ("print-none-bool", "{{ none }} {{ true }} {{ False }} {{ None }}"),
    ("print-containers", "{{ [1, 'a', none, true, 1.5, {'k': 'v'}] }} {{ (1,) }} {{ ('a', 2) }} {{ () }}"),
    ("repr-quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', '\\n\\t', 'é', '\\x00', '\\u2028'] }}"),
    ("print-dict", "{{ d }} {{ nested }}"),
    ("print-undefined", "[{{ nope }}][{{ d.nope }}][{{ lst[10] }}][{{ z.attr }}]"),
    # arithmetic
    ("division", "{{ 10 / 4 }} {{ 10 // 4 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 % 2 }} {{ -7.5 // 2 }}"),
    ("powers", "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2.0 ** 3 }} {{ 2 ** 3 ** 2 }}"),
    ("float-repr", "{{ 1/3 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 123456789.0 * 1000000000 }} "
                   "{{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }} {{ 100.0 }} {{ 3.0 * 2 }}"),
    ("repetition", "{{ 3 * 'ab' }} {{ 'xy' * 2 }} {{ [1] * 3 }} {{ 'a' * 0 }}"),
    ("concat-tilde", "{{ 'a' ~ 1 ~ none ~ true ~ nope ~ 2.0 }}"),
    ("bool-arithmetic", "{{ 1 + true }} {{ true + true }} {{ -true }}"),
    ("list-concat", "{{ [1] + [2, 3] }} {{ 'ab' + 'cd' }}"),
    ("unary", "{{ -n }} {{ +f }} {{ - - 3 }} {{ -2 ** 2 }}"),
    ("precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' ~ (1 + 2) }} {{ 2 * 3 ~ 4 }} {{ not 1 == 2 }}"),
    ("filter-binds-tight", "{{ 'x' + s | trim }} {{ -f | abs }} {{ lst | length * 2 }}"),
    # comparisons and logic
    ("comparisons", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} "
                    "{{ 'é' > 'z' }} {{ true == 1 }} {{ none == none }} {{ nope == nope2 }} {{ 1 != '1' }}"),
    ("membership", "{{ 'ab' in 'cabd' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'x' not in 'abc' }} "
                   "{{ 'a' in nope }} {{ 1 in d }} {{ [1] in [[1], 2] }}"),
    ("and-or-values", "{{ 0 or 'default' }} {{ 'a' and 'b' }} [{{ '' and 'b' }}] {{ not 0 }} {{ not none is none }} "
                      "{{ none or [] or 0 }} {{ 1 and 2 and 3 }}"),
    ("conditional-expr", "{{ 'y' if 1 else 'n' }} [{{ 'y' if 0 }}] {{ 'a' if false else 'b' if true else 'c' }}"),
    ("truthiness", "{% for v in [0, 1, 0.0, '', 'x', [], [0], {}, none, nope] %}{{ 'T' if v else 'F' }}{% endfor %}"),
    # filters
    ("trim", "[{{ s | trim }}] [{{ 'xxhixx' | trim('x') }}] [{{ '\u3000 wide \u2003' | trim }}] [{{ n | trim }}]"),
    ("case-filters", "{{ s | upper }} {{ s | lower }} {{ 'hello wORLD-foo (bar) x_y' | title }} "
                     "{{ 'hELLO world' | capitalize }} {{ uni | upper }} {{ 'ÀÉÎ Straße' | lower }}"),
    ("length", "{{ uni | length }} {{ lst | length }} {{ d | length }} {{ nope | length }} {{ 'abc' | count }}"),
    ("first-last", "{{ lst | first }} {{ lst | last }} {{ 'abc' | first }} {{ 'abc' | last }} [{{ [] | first }}] "
                   "{{ d | first }}"),
    ("join", "{{ lst | join(', ') }} {{ strs | join }} {{ users | join('/', attribute='name') }} "
             "{{ [1, none, 'a'] | join('-') }}"),
    ("default", "{{ nope | default('dflt') }} {{ z | default('x') }} {{ e | default('empty', true) }} "
                "{{ n | d(0) }} [{{ nope | default }}]"),
    ("replace", "{{ 'aaaa' | replace('a', 'b', 2) }} {{ 'hello' | replace('l', 'L') }} {{ 'ab' | replace('', '-') }}"),
    ("reverse", "{{ 'abc' | reverse }} {{ lst | reverse | list }} {% for x in lst | reverse %}{{ x }}{% endfor %}"),
    ("list-filter", "{{ 'abc' | list }} {{ d | list }} {{ nope | list }}"),
    ("items", "{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %} {{ nope | items | list }}"),
    ("dictsort", "{{ d | dictsort }} {{ d | dictsort(true) }} {{ d | dictsort(by='value', reverse=true) }}"),
    ("sort", "{{ lst | sort }} {{ strs | sort }} {{ strs | sort(case_sensitive=true) }} "
             "{{ users | sort(attribute='age', reverse=true) | map(attribute='name') | list }}"),
    ("unique", "{{ ['a', 'A', 'b', 'a'] | unique | list }} {{ [1, 2, 1, 3] | unique | list }}"),
    ("map", "{{ users | map(attribute='name') | list }} {{ strs | map('upper') | join }} "
            "{{ users | map(attribute='admin', default='?') | list }} {{ lst | map('string') | list }}"),
    ("select-reject", "{{ lst | select('odd') | list }} {{ lst | reject('odd') | list }} "
                      "{{ [0, 1, '', 'a', none] | select | list }} {{ lst | select('gt', 1) | list }} "
                      "{{ lst | select('equalto', 2) | list }}"),
    ("selectattr", "{{ users | selectattr('admin') | map(attribute='name') | list }} "
                   "{{ users | rejectattr('admin') | map(attribute='name') | list }} "
                   "{{ users | selectattr('admin', 'undefined') | map(attribute='name') | list }} "
                   "{{ users | selectattr('age', '>', 30) | map(attribute='name') | join(',') }} "
                   "{{ users | rejectattr('name', 'equalto', 'Bob') | list | length }}"),
    ("tojson", "{{ nested | tojson }}|{{ lst | tojson }}|{{ 'é\"' | tojson }}|{{ none | tojson }}|{{ 1.0 | tojson }}"),
    ("tojson-indent", "{{ nested | tojson(indent=2) }}\n{{ users[0] | tojson(indent=4) }}\n{{ [] | tojson(indent=2) }}"
                      "{{ {} | tojson(indent=2) }}{{ [[]] | tojson(indent=1) }}"),
    ("tojson-options", "{{ d | tojson(sort_keys=true) }} {{ d | tojson(separators=(',', ':')) }} "
                       "{{ d | tojson(indent='\\t') }} {{ 'é😀' | tojson(true) }} {{ [1] | tojson(false, 2) }}"),
    ("tojson-floats", "{{ [0.5, 1e-7, 1e22, 3.0, -2.5e-3, 12345678901234567890.0] | tojson }}"),
    ("numeric-filters", "{{ '42' | int }} {{ '3.9' | int }} {{ 'x' | int(7) }} {{ 3.99 | int }} {{ '0x1f' | int(0, 16) }} "
                        "{{ '2.5' | float }} {{ 'bad' | float }} {{ -3 | abs }} {{ 2.5 | round }} {{ 3.14159 | round(2) }} "
                        "{{ 2.7 | round(0, 'floor') }} {{ lst | sum }} {{ users | sum(attribute='age') }} "
                        "{{ lst | min }} {{ lst | max }} {{ strs | max }} {{ users | max(attribute='age') }}"),
    ("indent", "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent('> ', blank=true) }}"),
    ("markup", "{{ '<b>' | safe + '<i>' }} {{ '<i>' + '&' | safe }} {{ ('<' | e) + '>' }} {{ '<' | e | e }} "
               "{{ '<' | safe ~ '>' }} {{ ('a' | safe + '\"') | length }} {{ '<' | forceescape }}"),
    ("falsy-map-select", "{{ z | map('upper') | list }} {{ z | selectattr('a') | list }} {{ 0 | reject | list }} "
                         "{{ [] | map('nosuchfilter') | list }} {{ nope | select | list }}"),
    ("string-filters", "{{ 42 | string }} {{ '<a href=\"x\">&\\'' | escape }} {{ 'one two  three' | wordcount }} "
                       "{{ '%s-%d' | format('a', 3) }} {{ 'x' | safe }}"),
    ("attr-filter", "{{ users[0] | attr('name') }}|{{ 'abc' | attr('upper') is defined }}"),
    # tests
    ("type-tests", "{% for v in [1, 1.5, 'a', none, true, [1], {'a': 1}, nope] %}"
                   "{{ v is number }}{{ v is integer }}{{ v is float }}{{ v is string }}{{ v is none }}"
                   "{{ v is boolean }}{{ v is mapping }}{{ v is iterable }}{{ v is sequence }}"
                   "{{ v is defined }}{{ v is undefined }};{% endfor %}"),
    ("value-tests", "{{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} "
                    "{{ 'a' is eq 'a' }} {{ 2 is equalto 2 }} {{ 2 is in [1, 2] }} {{ true is true }} "
                    "{{ 1 is true }} {{ false is false }} {{ 'abc' is lower }} {{ 'ABC' is upper }} "
                    "{{ 2 is gt 1 }} {{ 2 is le 1 }} {{ none is sameas none }} {{ 3 is not odd }}"),
    # methods
    ("str-methods", "{{ 'abc'.startswith('a') }} {{ 'abc'.startswith(('x', 'ab')) }} {{ 'abc'.endswith('bc') }} "
                    "{{ 'abc'.startswith('b', 1) }} {{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}| "
                    "{{ 'xxhixx'.strip('x') }} {{ '--a--'.lstrip('-') }} {{ 'a.b.c'.replace('.', '/') }} "
                    "{{ 'a.b.c'.replace('.', '/', 1) }} {{ s.upper() }} {{ s.lower() }} {{ 'hello world'.title() }} "
                    "{{ 'hELLO'.capitalize() }} {{ uni.find('w') }} {{ 'abcabc'.count('bc') }} "
                    "{{ ', '.join(['x', 'y']) }} {{ 'l1\\nl2\\r\\nl3'.splitlines() }} {{ '{}-{}'.format(1, 'b') }} "
                    "{{ 'x{a}y'.format(a=5) }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ 'prefix_x'.removeprefix('prefix_') }}"),
    ("split", "{{ '  a  b c '.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }} "
              "{{ 'a b c'.split(none, 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ ''.split() }} {{ ''.split(',') }} "
              "{{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ 'a  b  c'.rsplit(none, 1) }}"),
    ("dict-methods", "{% for k, v in d.items() %}{{ k }}:{{ v }} {% endfor %}{{ d.keys() | list }} "
                     "{{ d.values() | list }} {{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dv') }} "
                     "{{ items.items() | list }} {{ items['items'] }}"),
    ("list-methods", "{{ lst.index(2) }} {{ [1, 1, 2].count(1) }}"),
    # subscripts and slices
    ("slices", "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ [1, 2, 3, 4][-2:] }} {{ [1, 2, 3, 4][::2] }} "
               "{{ 'héllo'[1] }} {{ 'abc'[-1] }} {{ [1, 2, 3][5:] }} {{ lst[1:] }} {{ lst[:-1] }} {{ lst[-1] }} "
               "{{ 'abcdef'[4:1:-1] }} {{ (1, 2, 3)[1:] }}"),
    ("attribute-and-item", "{{ users[0].name }} {{ users[1]['age'] }} {{ nested.k[1].x }} {{ nested['k'][0] }} "
                           "{{ users.0.name }}"),
    # loops
    ("loop-variables", "{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                       "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
                       "{{ loop.previtem | default('-') }}{{ loop.nextitem | default('-') }}"
                       "{{ loop.cycle('o', 'e') }};{% endfor %}"),
    ("for-else", "{% for x in [] %}x{% else %}empty{% endfor %} {% for x in [1] %}{{ x }}{% else %}no{% endfor %}"),
    ("for-filter", "{% for x in range(10) if x is odd %}{{ x }}{{ ',' if not loop.last }}{% endfor %}"),
    ("break-continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x > 5 %}"
                       "{% break %}{% endif %}{{ x }}{% endfor %}"),
    ("nested-loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }}"
                     "{% endfor %}{{ loop.index }};{% endfor %}"),
    ("loop-over-dict-and-string", "{% for k in d %}{{ k }}{% endfor %} {% for c in uni %}{{ c }}.{% endfor %}"),
    ("unpacking", "{% for a, b in [[1, 2], ('x', 'y')] %}{{ a }}{{ b }}{% endfor %} "
                  "{% for (k, v) in d.items() %}{{ k }}{% endfor %}"),
    ("range", "{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(5, 0, -2) | list }} {{ range(0) | list }}"),
    # scoping
    ("loop-scope", "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}"),
    ("loop-scope-no-leak", "{% for i in [1, 2] %}{% set inner = i %}{% endfor %}[{{ inner }}][{{ i }}]"),
    ("loop-set-not-carried", "{% for i in [1, 2, 3] %}{% if not loop.first %}{{ seen }}{% endif %}"
                             "{% set seen = i %}{% endfor %}"),
    ("namespace", "{% set ns = namespace(c=0, tag='x') %}{% for i in range(4) %}{% set ns.c = ns.c + i %}"
                  "{% endfor %}{{ ns.c }}{{ ns.tag }}{% set ns2 = namespace(d) %}{{ ns2.a }}"),
    ("if-scope-leaks", "{% if true %}{% set y = 5 %}{% endif %}{{ y }}"),
    ("set-block", "{% set b %}  inner {{ 1 + 1 }} {% endset %}[{{ b }}]{% set u | upper %}abc{% endset %}{{ u }}"),
    ("tuple-set", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}"),
    ("set-overrides-context", "{% set messages = lst[1:] %}{{ messages }}{% set n = n + 1 %}{{ n }}"),
    ("with-block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"),
    ("filter-block", "{% filter upper %}abc {{ 'def' }}{% endfilter %}{% filter trim | replace('a', 'o') %}  a a  "
                     "{% endfilter %}"),
    # macros
    ("macro-defaults", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                       "{{ greet('Bob') }} {{ greet('Al', punct='?') }} {{ greet(name='Cy') }}"),
    ("macro-recursion", "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1) | int }}{% endif %}"
                        "{% endmacro %}{{ fact(6) }}"),
    ("macro-sees-top-level", "{% set greeting = 'hey' %}{% macro m() %}{{ greeting }} {{ n }}{% endmacro %}{{ m() }}"),
    ("macro-missing-arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}"),
    ("macro-varargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }}"),
    ("macro-scope", "{% macro m() %}{% set inner = 1 %}{% endmacro %}{{ m() }}[{{ inner }}]"),
    # globals
    ("strftime-now", "{{ strftime_now('%d %b %Y %H:%M:%S %A %B %j %y %m %I %p %a %%') }}"),
    ("dict-global", "{{ dict(a=1, b='x') }} {{ dict(d) | length }}"),
    ("joiner", "{% set j = joiner('|') %}{% for x in lst %}{{ j() }}{{ x }}{% endfor %}"),
    ("unknown-filter-in-dead-branch", "{% if false %}{{ 1 | nosuchfilter }}{% endif %}{{ 1 | nosuch if false }}ok"),
    ("generation-block", "a{% generation %}b{{ 1 }}{% set g = 1 %}{% endgeneration %}c[{{ g }}]"),
    # errors: jinja2 fails, so must we
    ("err-raise", "before{{ raise_exception('Custom failure: ' ~ n) }}"),
    ("err-add-types", "{{ 1 + 'a' }}"),
    ("err-undefined-attr", "{{ nope.attr }}"),
    ("err-undefined-arith", "{{ nope + 1 }}"),
    ("err-undefined-call", "{{ nope() }}"),
    ("err-unknown-method", "{{ 'abc'.nosuch() }}"),
    ("err-syntax-for", "{% for %}{% endfor %}"),
    ("err-unclosed-if", "{% if true %}x"),
    ("err-unterminated-string", "{{ 'abc }}"),
    ("err-unknown-tag", "{% frobnicate %}"),
    ("err-unknown-filter", "{{ 1 | nosuchfilter }}"),
    ("err-unknown-filter-in-loop", "{% for x in [] %}{{ 1 | nosuchfilter }}{% endfor %}ok"),
    ("err-unknown-test", "{{ 1 is nosuchtest }}"),
    ("err-division-by-zero", "{{ 1 / 0 }}"),
    ("err-mul-strings", "{{ 'a' * 'b' }}"),
    ("err-compare-types", "{{ 1 < 'a' }}"),
    ("err-namespace-missing", "{% set nsx.a = 1 %}"),
    ("err-iterate-int", "{% for x in 5 %}{% endfor %}"),
    ("err-iterate-none", "{% for x in z %}{% endfor %}"),
    ("err-tojson-undefined", "{{ nope | tojson }}"),
    ("err-items-on-list", "{{ lst | items | list }}"),
    ("err-unbalanced", "{{ (1 }}"),
    ("err-unexpected-end", "{{ 1 + }}"),
    ("err-endfor-mismatch", "{% if true %}{% endfor %}"),
    ("err-map-unknown-filter", "{{ lst | map('nosuch') | list }}"),
    ("err-length-of-int", "{{ n | length }}"),
    ("err-unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
    ("err-extends", "{% extends 'base.html' %}"),
    ("err-list-append-unsafe", "{{ lst.append(4) }}"),
    ("err-in-none", "{{ 1 in z }}"),
    ("err-call-int", "{{ n() }}"),
    ("err-string-minus", "{{ 'a' - 'b' }}"),
    ("err-concat-binds-tighter-than-plus", "{{ 'a' ~ 1 + 2 }}"),
]


def snippet_cases():
    out = []
    for name, source in SNIPPETS:
        case = {"name": name, "template": source}
        case.update(render(source, CTX))
        expect_error = name.startswith("err-")
        if expect_error != ("error" in case):
            sys.exit(f"snippet {name}: jinja2 {'rendered' if 'output' in case else 'failed'} unexpectedly: {case}")
        out.append(case)
    return out


def main():
    families = family_cases()
    # Weir's built-in Gemma template must write what Google's does.
    by_family = {f["family"]: f for f in families}
    for g, b in zip(by_family["gemma3"]["cases"], by_family["builtin-gemma"]["cases"]):
        if g["name"] != b["name"]:
            continue
        # Same text wherever Google's renders; rejected where Google's template rejects the roles.
        if g.get("raised") and not b.get("raised"):
            sys.exit(f"built-in Gemma template accepts case {g['name']} that Google's rejects:\n{g}\n{b}")
        if "output" in g and g["output"] != b.get("output"):
            sys.exit(f"built-in Gemma template differs from Google's on case {g['name']}:\n{g}\n{b}")
    data = {
        "generator": "tests/reference/make_template_reference.py",
        "jinja2": jinja2.__version__,
        "now": NOW,
        "families": families,
        "snippet_context": CTX,
        "snippets": snippet_cases(),
    }
    path = TEMPLATES / "expected.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    count = sum(len(f["cases"]) for f in families)
    errors = sum("error" in c for f in families for c in f["cases"])
    print(f"wrote {path.relative_to(ROOT)}: {count} conversation cases ({errors} rejected by their template), "
          f"{len(data['snippets'])} snippets")


if __name__ == "__main__":
    main()
