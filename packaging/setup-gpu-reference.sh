#!/usr/bin/env bash
# Prepares the llama.cpp sources that `tests/gpu/run.sh --with-llamacpp`
# builds on a lent GPU machine, which can fetch nothing: llama.cpp from
# llama-cpp-python 0.3.36's source archive (the version the reference data
# was made with), cut down to what llama-bench and llama-batched-bench need
# with the CPU and CUDA backends (no models, docs, tests, web UI or other
# backends), packed as .gpu-ref/llama.cpp.tar.gz (about 6 MB).
#
# The whole archive (77 MB) is over the 64 MiB a device call carries, hence
# the cut. Run this here, then name the folder in the device tool's carry:
#     run(command="tests/gpu/run.sh --with-llamacpp", carry=[".gpu-ref"])
#
# Reuses .venv/sdist/ (packaging/setup.sh downloads the archive there) or
# fetches the archive with packaging/fetch_sdist.py.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
version="0.3.36"
name="llama_cpp_python-$version"
sdist=".venv/sdist/$name.tar.gz"
out=".gpu-ref/llama.cpp.tar.gz"

if [ ! -s "$sdist" ]; then
  python="python3"
  [ -x .venv/bin/python ] && python=".venv/bin/python"
  echo "setup-gpu-reference: fetching $name.tar.gz from PyPI"
  "$python" packaging/fetch_sdist.py llama-cpp-python "$name.tar.gz" .venv/sdist
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$sdist" -C "$work" "$name/vendor/llama.cpp"
src="$work/$name/vendor/llama.cpp"
# Not needed to build the two benchmarks (LLAMA_BUILD_TESTS, _EXAMPLES and
# _SERVER are off there; only the CPU and CUDA backends are built).
rm -rf "$src"/{models,docs,media,tests,examples,pocs,benches,gguf-py,scripts,conversion,ci,grammars,requirements,prompts,.github,.devops}
rm -rf "$src"/tools/{ui,server}
for backend in vulkan sycl opencl metal hexagon cann webgpu openvino et virtgpu zdnn zendnn blas rpc; do
  rm -rf "$src/ggml/src/ggml-$backend"
done
mkdir -p .gpu-ref
tar -czf "$out.part" -C "$src/.." llama.cpp
mv "$out.part" "$out"
echo "setup-gpu-reference: wrote $out ($(du -h "$out" | cut -f1)); carry .gpu-ref to the device machine"
