#!/usr/bin/env bash
# Builds the Debian packages of Weir in OUT_DIR (default: build/packages):
# weir_VERSION_ARCH.deb and, when the build tree has the CUDA module,
# weir-cuda_VERSION_ARCH.deb (packaging/install.cmake). Prints their paths,
# weir's first. Uses the build tree (default: build/, made by
# packaging/setup.sh), building only what the packages hold (weir, weir-cli,
# the icons, the CUDA module) when it is not built yet; the packaging step
# itself never rebuilds. weir's Depends: is computed by dpkg-shlibdeps, plus
# the QML modules and Qt plugins listed in packaging/install.cmake.
#   packaging/build-deb.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
out="${2:-$build/packages}"
if [ ! -f "$build/CPackConfig.cmake" ]; then
  echo "build-deb: $build is not a configured build tree (run packaging/setup.sh)" >&2
  exit 2
fi
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "build-deb: $tool not found (Debian: dpkg-dev)" >&2; exit 2; }
done
if [ "${WEIR_DEB_NO_BUILD:-0}" != 1 ]; then
  targets=(weir weir-cli weir_icons)
  if cmake --build "$build" --target help | grep -q '^[^ ]*weir_cuda:'; then targets+=(weir_cuda); fi
  cmake --build "$build" --target "${targets[@]}"
fi
mkdir -p "$out"
# -B: the package and CPack's staging folder go to OUT_DIR, not the build tree.
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1 || {
  cat "$out/cpack.log" >&2
  exit 1
}
ls -t "$out"/weir_*.deb | head -n1
ls -t "$out"/weir-cuda_*.deb 2>/dev/null | head -n1 || true
