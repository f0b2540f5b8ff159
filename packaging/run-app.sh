#!/usr/bin/env bash
# Sets everything up, then starts the desktop app. On a first start it opens
# the instruction-tuned chat model (SmolLM2 135M Instruct, installed by
# set-up); later it reopens the model last used. Arguments go to the app
# (e.g. --model FILE).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/setup.sh"
exec "$root/build/bin/weir" "$@"
