#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite through ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/setup.sh"
# llama.cpp's own server for the remote-engine tests (a few minutes, once).
"$root/packaging/setup-llama-server.sh"
cd "$root/build"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
ctest --output-on-failure --timeout 900 "$@"
