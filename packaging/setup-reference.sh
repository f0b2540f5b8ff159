#!/usr/bin/env bash
# Creates .venv-ref/ with the independent references the scripts in
# tests/reference/ and tests/bench/bench_vs_llamacpp.py run against: llama.cpp
# through llama-cpp-python (built from its PyPI source archive: expect 15-30
# minutes on 2 cores), the gguf package, numpy and jinja2. Not needed for the
# test suite, whose reference data is committed in tests/data/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
llama_cpp_python_version="0.3.36"   # the version the committed reference data was made with
if [ ! -x .venv-ref/bin/python ]; then
  python3 -m venv .venv-ref
fi
if ! .venv-ref/bin/python -c "import llama_cpp, gguf, numpy, jinja2" 2>/dev/null; then
  # Build tools for the native extension; plain CPU build, no GPU backends.
  .venv-ref/bin/pip install -q --disable-pip-version-check cmake ninja scikit-build-core
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" \
    .venv-ref/bin/pip install -q --disable-pip-version-check --no-build-isolation \
      "llama-cpp-python==$llama_cpp_python_version" gguf numpy jinja2
fi
.venv-ref/bin/python -c "import llama_cpp; print('setup-reference: llama-cpp-python', llama_cpp.__version__)"
