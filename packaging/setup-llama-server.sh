#!/usr/bin/env bash
# Builds llama.cpp's own OpenAI-compatible server (`llama-server`) into
# .llama-server/bin/ for the tests that run Weir's remote client against it
# (tests/remote/llama_server_*). The sources are the llama.cpp that the
# llama-cpp-python source archive vendors: the archive packaging/setup.sh
# already fetches for the tokenizer vocabularies, so nothing new is downloaded
# when it is there. CPU only, no web UI, no HTTPS, no tests or examples; only
# the llama-server target is built. Optional: without it those tests skip.
# Safe to run again: a binary built from this version for this CPU is kept.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

version="0.3.36"   # llama-cpp-python; the same archive packaging/setup.sh fetches
dest=".llama-server"
sdist=".venv/sdist/llama_cpp_python-$version.tar.gz"
jobs="${WEIR_LLAMA_SERVER_JOBS:-$(nproc)}"

# GGML_NATIVE compiles for this CPU's instruction set, so a binary is only
# reused on a CPU with the same flags (CI builds on the machine that runs it).
cpu_flags="$(grep -m1 '^flags' /proc/cpuinfo | sha256sum | cut -c1-16)"
stamp="llama-cpp-python $version, cpu $cpu_flags"
if [ -x "$dest/bin/llama-server" ] && [ "$(cat "$dest/bin/STAMP" 2>/dev/null)" = "$stamp" ]; then
  echo "setup-llama-server: $dest/bin/llama-server is already built ($stamp)"
  exit 0
fi

if [ ! -s "$sdist" ]; then
  mkdir -p .venv/sdist
  python3 packaging/fetch_sdist.py llama-cpp-python "llama_cpp_python-$version.tar.gz" .venv/sdist
fi

# Extract the llama.cpp tree without what the server build never reads: the
# vocabulary models, docs, the web UI's sources (the UI is left out below),
# the Python packages and the tests' data (about 120 of its 176 MB).
src="$dest/src"
rm -rf "$src" "$dest/build"
mkdir -p "$src"
prefix="llama_cpp_python-$version/vendor/llama.cpp"
tar -xzf "$sdist" -C "$src" --strip-components=3 \
  --exclude="$prefix/models" --exclude="$prefix/docs" --exclude="$prefix/media" \
  --exclude="$prefix/gguf-py" --exclude="$prefix/conversion" --exclude="$prefix/benches" \
  --exclude="$prefix/tests" --exclude="$prefix/examples" --exclude="$prefix/.github" \
  --exclude="$prefix/tools/ui/src" --exclude="$prefix/tools/ui/tests" \
  --exclude="$prefix/tools/server/tests" --exclude="$prefix/tools/server/bench" \
  "$prefix"

# llama.cpp's build asks git for a commit; stop git at the source folder so it
# does not report Weir's own repository around it.
export GIT_CEILING_DIRECTORIES="$root/$dest"
# LLAMA_USE_PREBUILT_UI=OFF: the web UI would be downloaded from Hugging Face at
# build time (LLAMA_BUILD_UI would need npm); without either the server embeds
# an empty asset table and serves only the API. Static libraries keep the
# binary self-contained, so the build folder can go afterwards.
cmake -S "$src" -B "$dest/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=ON \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_OPENMP=ON \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_LLGUIDANCE=OFF
cmake --build "$dest/build" --target llama-server --parallel "$jobs"

mkdir -p "$dest/bin"
cp "$dest/build/bin/llama-server" "$dest/bin/llama-server.new"
strip "$dest/bin/llama-server.new"
mv "$dest/bin/llama-server.new" "$dest/bin/llama-server"
echo "$stamp" > "$dest/bin/STAMP"
rm -rf "$src" "$dest/build"
"$dest/bin/llama-server" --version 2>&1 | sed 's/^/setup-llama-server: /'
echo "setup-llama-server: built $dest/bin/llama-server ($(du -h "$dest/bin/llama-server" | cut -f1))"
