#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite through ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/setup.sh"
# llama.cpp's own server for the remote-engine tests (a few minutes, once).
# Without it those tests say SKIPPED; the rest of the suite still runs.
"$root/packaging/setup-llama-server.sh" ||
  echo "run-tests: llama-server could not be built (see above): its tests will be skipped" >&2
cd "$root/build"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
ctest --output-on-failure --timeout 900 "$@"
