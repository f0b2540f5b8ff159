#!/usr/bin/env bash
# Runs tests under a sanitizer: packaging/run-sanitizers.sh tsan|asan [ctest args]
#   tsan  ThreadSanitizer               -> build-tsan/
#   asan  AddressSanitizer + UBSan      -> build-asan/
# Configures with the CMake preset of that name (CMakePresets.json), builds
# only the test targets the ctest arguments select (plus weir-cli, which the
# CLI and server tests start), and runs ctest with the preset's *SAN_OPTIONS
# (suppressions in packaging/sanitizers/, third-party reports only; TSan's
# die_after_fork=0 because tests start programs such as chattr and weir-cli by
# fork + exec from threaded processes, which TSan otherwise stops). Without
# ctest arguments: the whole suite. Any sanitizer report fails its test.
# Run packaging/setup.sh first (Qt, the venv and the default model).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

kind="${1:-}"
case "$kind" in
  tsan|asan) shift ;;
  *) echo "usage: $0 tsan|asan [ctest args, e.g. -R 'engine_scheduler|server_']" >&2; exit 2 ;;
esac
build="build-$kind"
started=$SECONDS
phase() { echo "run-sanitizers: $kind: $1 ($((SECONDS - started)) s so far)"; }

# No CUDA module: nvcc's objects are not instrumented, and the GPU tests
# would only skip (the presets say so too).
configure_args=(-DWEIR_CUDA=OFF)
if command -v ccache >/dev/null 2>&1; then
  configure_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
phase "configuring $build"
cmake --preset "$kind" "${configure_args[@]}" >/dev/null

# The tests these arguments select, and the targets that build them (a
# Qt Test's target has the test's name; script tests need weir-cli).
mapfile -t tests < <(ctest --preset "$kind" -N "$@" | sed -n 's/^ *Test *#[0-9]*: *//p')
if [ ${#tests[@]} -eq 0 ]; then
  echo "run-sanitizers: no test matches: $*" >&2
  exit 2
fi
known_targets="$(ninja -C "$build" -t targets all | sed -n 's/^\([A-Za-z0-9_.-]*\): .*/\1/p' | sort -u)"
targets=(weir-cli)
for t in "${tests[@]}"; do
  if grep -qx "$t" <<<"$known_targets"; then targets+=("$t"); fi
done
phase "building ${#targets[@]} targets for ${#tests[@]} tests"
cmake --build --preset "$kind" --target "${targets[@]}"

phase "running ${#tests[@]} tests"
status=0
ctest --preset "$kind" "$@" || status=$?
phase "done, ctest exit status $status"
exit "$status"
