#!/usr/bin/env bash
# Copies the screenshots the AppStream metainfo shows from the end-to-end
# test's output (build/screenshots/, `ctest -R e2e`) into resources/screenshots/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
from="${1:-$root/build/screenshots}"
for shot in chat-four pool-monitor engine-settings; do
  [ -s "$from/$shot.png" ] || { echo "update-screenshots: $from/$shot.png missing: run ctest -R e2e first" >&2; exit 1; }
  cp "$from/$shot.png" "$root/resources/screenshots/$shot.png"
done
