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

# Python venv: test-only tools (gguf reader/dequantizer, jinja2, the openai
# client); the models' packages come next, from the catalogue.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import gguf, jinja2, numpy, openai" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check -r packaging/requirements.txt
fi

# The models of the catalogue (resources/models.json: name, file, licence,
# architecture, the PyPI package each comes from) go to models/ (ignored by
# git, never committed): the default one (Gemma 3 270M) and SmolLM2-135M-
# Instruct for the tests that need another tokenizer and chat format (they
# skip without it). A model already there is left alone.
.venv/bin/python packaging/install-models.py --dest models --venv .venv

# Vocabulary-only GGUFs of other tokenizers for the tokenizer tests (Llama 3,
# Qwen 2, GPT-2 byte-level BPE; Llama 2 SentencePiece), with llama.cpp's test
# strings (.inp) and the ids Hugging Face tokenizers gives them (.out).
# llama.cpp keeps them in its models/ folder, which the llama-cpp-python source
# archive on PyPI vendors: fetch that archive (no build) and extract only those
# files into models/vocab/ (ignored by git). Optional: without them those tests skip.
llama_cpp_sdist_version="0.3.36"
vocab_files=""
for v in llama-bpe qwen2 gpt-2 llama-spm; do
  vocab_files="$vocab_files ggml-vocab-$v.gguf ggml-vocab-$v.gguf.inp ggml-vocab-$v.gguf.out"
done
missing_vocab=0
for f in $vocab_files; do [ -s "models/vocab/$f" ] || missing_vocab=1; done
if [ "$missing_vocab" = 1 ]; then
  echo "setup: fetching tokenizer test vocabularies (llama-cpp-python $llama_cpp_sdist_version source archive)"
  sdist=".venv/sdist/llama_cpp_python-$llama_cpp_sdist_version.tar.gz"
  if [ ! -s "$sdist" ]; then
    .venv/bin/python packaging/fetch_sdist.py llama-cpp-python \
      "llama_cpp_python-$llama_cpp_sdist_version.tar.gz" .venv/sdist || true
  fi
  if [ -s "$sdist" ]; then
    mkdir -p models/vocab
    members=""
    for f in $vocab_files; do members="$members llama_cpp_python-$llama_cpp_sdist_version/vendor/llama.cpp/models/$f"; done
    # shellcheck disable=SC2086
    tar -xzf "$sdist" -C models/vocab --strip-components=4 $members || true
  fi
  for f in $vocab_files; do
    [ -s "models/vocab/$f" ] || echo "setup: warning: models/vocab/$f not available; the tests that need it will skip"
  done
fi

# Build.
build_type="${WEIR_BUILD_TYPE:-RelWithDebInfo}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
fi
cmake --build build --parallel "$(nproc)"
