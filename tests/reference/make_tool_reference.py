#!/usr/bin/env python3
"""Reference prompts for tool calling through templates that take tools.

For every chat template in tests/data/templates (and Weir's built-in ChatML)
that renders `tools` itself, renders conversations with tool definitions and a
tool-call round trip with python jinja2, configured as HF transformers does
(the environment of make_template_reference.py). The messages are stored in
the OpenAI API's shape (tool-call arguments as JSON text); the template sees
the arguments as objects, as HF-style templates expect. Writes
tests/data/templates/tools_expected.json; tests/engine/chat/tool_format_test.cpp
renders each case through weir::ToolFormat and must match byte for byte.

Run: .venv/bin/python tests/reference/make_tool_reference.py
"""
import copy
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_template_reference as ref  # noqa: E402

OUT = ref.TEMPLATES / "tools_expected.json"

# Templates that read the `tools` variable (the others get Weir's own instruction).
NATIVE = ["gemma3-tools-pythonic", "gemma4", "llama3.1", "llama3.2", "qwen2.5", "qwen3", "builtin-chatml"]


def api_call(name, args, cid):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


U, S, A, T = ref.U, ref.S, ref.A, ref.T

ROUNDTRIP = [U("What's the weather in Paris?"),
             A("", tool_calls=[api_call("get_weather", {"city": "Paris", "unit": "celsius"}, "call_1")]),
             T('{"temperature": 18, "condition": "sunny"}', tool_call_id="call_1", name="get_weather")]

CASES = [
    ("offer", [S("You are a helpful assistant."), U("Weather in Paris?")], ref.TOOLS),
    ("offer-no-system", [U("What time is it in Tokyo?")], [ref.CLOCK]),
    ("roundtrip", ROUNDTRIP, [ref.WEATHER]),
    ("roundtrip-answer-then-user", ROUNDTRIP + [A("It is 18 °C and sunny in Paris."), U("Thanks! And Rome?")],
     [ref.WEATHER]),
]


def template_view(messages):
    """The messages as the template sees them: argument text parsed to objects."""
    out = copy.deepcopy(messages)
    for m in out:
        for c in m.get("tool_calls", []):
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return out


def main():
    builtins = ref.builtin_sources()
    cases = []
    for family in NATIVE:
        source_name, bos, eos = ref.FAMILIES[family]
        source = builtins[source_name] if source_name.startswith("builtin-") else (ref.TEMPLATES / source_name).read_text()
        for name, messages, tools in CASES:
            context = {"messages": template_view(messages), "tools": tools, "add_generation_prompt": True,
                       "bos_token": bos, "eos_token": eos}
            result = ref.render(source, context)
            if "output" not in result:
                raise SystemExit(f"{family}/{name}: jinja2 failed: {result}")
            cases.append({"family": family, "template": source_name, "bos": bos, "eos": eos, "name": name,
                          "messages": messages, "tools": tools, "expected": result["output"]})
    OUT.write_text(json.dumps({"cases": cases}, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
