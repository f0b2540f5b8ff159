#!/usr/bin/env python3
"""Compares Weir's chat-template rendering with python jinja2 on a folder of
*.jinja templates (for instance llama.cpp's models/templates), outside the
test suite: for each template it renders three conversations (one user turn;
system plus several turns; a tool call with its result and tools offered)
with jinja2 set up as in make_template_reference.py and with
`weir-cli chat-template`, and lists every difference.

Usage: .venv/bin/python tests/reference/survey_templates.py DIR build/bin/weir-cli
(weir-cli reads BOS/EOS texts from the default model.)
"""
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_template_reference as ref  # noqa: E402

CONVERSATIONS = {
    "simple": ([ref.U("Hello")], None),
    "system-multi": ([ref.S("Be brief."), ref.U("Hi"), ref.A("Hello!"), ref.U("Bye")], None),
    "tools": (ref.ROUNDTRIP, [ref.WEATHER]),
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    folder, cli = pathlib.Path(sys.argv[1]), sys.argv[2]
    tmp = pathlib.Path(tempfile.mkdtemp())
    renders = mismatches = 0
    for path in sorted(folder.glob("*.jinja")):
        source = path.read_text()
        for name, (messages, tools) in CONVERSATIONS.items():
            context = {"messages": messages, "add_generation_prompt": True, "bos_token": "<bos>", "eos_token": "<eos>"}
            args = [cli, "chat-template", "--now", str(ref.NOW), "--template", str(path),
                    "--messages", str(tmp / "messages.json")]
            (tmp / "messages.json").write_text(json.dumps(messages))
            if tools:
                context["tools"] = tools
                (tmp / "tools.json").write_text(json.dumps(tools))
                args += ["--tools", str(tmp / "tools.json")]
            expected = ref.render(source, context)
            ours = subprocess.run(args, capture_output=True, text=True)
            renders += 1
            label = f"{path.name}/{name}"
            if "output" in expected:
                # weir-cli ends its output with a newline when the prompt lacks one.
                want = expected["output"] + ("" if expected["output"].endswith("\n") else "\n")
                if ours.returncode != 0:
                    mismatches += 1
                    print(f"{label}: jinja2 renders, Weir fails: {ours.stderr.strip().splitlines()[-1]}")
                elif ours.stdout != want:
                    mismatches += 1
                    got = ours.stdout
                    i = next((k for k in range(min(len(want), len(got))) if want[k] != got[k]), min(len(want), len(got)))
                    print(f"{label}: differs at byte {i}:\n  jinja2 {want[max(0, i - 40):i + 40]!r}\n"
                          f"  Weir   {got[max(0, i - 40):i + 40]!r}")
            elif ours.returncode == 0:
                mismatches += 1
                print(f"{label}: jinja2 fails ({expected['error'][:120]}), Weir renders")
    print(f"{renders} renders, {renders - mismatches} identical, {mismatches} different")


if __name__ == "__main__":
    main()
