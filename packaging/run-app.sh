#!/usr/bin/env bash
# Sets everything up, then starts the desktop app on the default model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/setup.sh"
exec "$root/build/bin/weir" --model "$root/models/gemma-3-270m-q4_k_m.gguf" "$@"
