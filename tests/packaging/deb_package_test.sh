#!/usr/bin/env bash
# The Debian package as a user gets it: builds it from the already built
# tree (packaging/build-deb.sh, no rebuild), unpacks it into a scratch root
# (dpkg -x), validates the installed desktop entry and AppStream metainfo,
# checks Depends (dpkg-shlibdeps ran; every QML module qml/ imports and the
# Qt plugins the app loads are listed), then runs the installed weir-cli
# generate and the installed app offscreen for a few seconds with only the
# scratch XDG folders: the default model is found in $XDG_DATA_HOME/weir/models,
# data and the log land in $XDG_DATA_HOME/weir.
# Environment: WEIR_SOURCE_DIR, WEIR_BUILD_DIR, WEIR_MODEL (the default model).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "ok: $*"; }

src="${WEIR_SOURCE_DIR:?}"
build="${WEIR_BUILD_DIR:?}"
model="${WEIR_MODEL:-}"
for tool in dpkg-deb dpkg-shlibdeps desktop-file-validate appstreamcli python3; do
  command -v "$tool" >/dev/null || fail "$tool not found (packaging/setup.sh installs it: packaging/apt-packages.txt)"
done
[ -x "$build/bin/weir" ] && [ -x "$build/bin/weir-cli" ] || skip "weir and weir-cli are not built in $build"
[ -s "$model" ] || skip "the default model ($model) is missing: run packaging/setup.sh"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/weir-deb-test-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# ---- build and unpack ----
debs=$(WEIR_DEB_NO_BUILD=1 "$src/packaging/build-deb.sh" "$build" "$scratch/out") || fail "build-deb.sh failed"
deb=$(sed -n 1p <<<"$debs")
cuda_deb=$(sed -n 2p <<<"$debs")
[ -s "$deb" ] || fail "no package produced"
pass "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
root="$scratch/root"
dpkg -x "$deb" "$root"
[ "$(dpkg-deb -f "$deb" Package)" = weir ] || fail "package name is not weir"
# The CUDA module, when built, is its own package: the module only, in
# lib/weir where the engine looks next to bin/, depending on this weir.
if [ -f "$build/lib/libweir-cuda.so" ]; then
  [ -s "$cuda_deb" ] || fail "the build has the CUDA module but no weir-cuda package was made"
  [ "$(dpkg-deb -f "$cuda_deb" Package)" = weir-cuda ] || fail "the CUDA package is not named weir-cuda"
  files=$(dpkg-deb -c "$cuda_deb" | awk '$1 !~ /^d/ {print $NF}')
  [ "$files" = ./usr/lib/weir/libweir-cuda.so ] || fail "weir-cuda holds more or other than the module: $files"
  version=$(dpkg-deb -f "$deb" Version)
  dpkg-deb -f "$cuda_deb" Depends | grep -qF "weir (= $version)" || fail "weir-cuda does not depend on weir $version"
  dpkg -x "$cuda_deb" "$root"
  pass "weir-cuda: only usr/lib/weir/libweir-cuda.so, depends on weir (= $version)"
elif [ -n "$cuda_deb" ]; then
  fail "a weir-cuda package was made from a build without the CUDA module"
fi

id=io.github.weir.Weir
usr="$root/usr"
for f in bin/weir bin/weir-cli share/applications/$id.desktop share/metainfo/$id.metainfo.xml \
         share/icons/hicolor/scalable/apps/$id.svg share/weir/models.json share/weir/install-models.py \
         share/doc/weir/copyright; do
  [ -e "$usr/$f" ] || fail "the package has no /usr/$f"
done
# Each hicolor PNG has the size of its folder.
for size in 16 22 24 32 48 64 128 256 512; do
  png="$usr/share/icons/hicolor/${size}x${size}/apps/$id.png"
  [ -s "$png" ] || fail "no ${size}x${size} icon"
  dims=$(python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); assert d[:8]==b'\x89PNG\r\n\x1a\n'; print('%dx%d' % struct.unpack('>II', d[16:24]))" "$png")
  [ "$dims" = "${size}x${size}" ] || fail "$png is $dims"
done
pass "binaries, desktop entry, metainfo, catalogue and icons at every hicolor size installed"

# ---- validators ----
desktop-file-validate "$usr/share/applications/$id.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$usr/share/metainfo/$id.metainfo.xml" || fail "appstreamcli validate"
grep -qx "Icon=$id" "$usr/share/applications/$id.desktop" || fail "the desktop entry's Icon is not $id"
exec_bin=$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$usr/share/applications/$id.desktop")
[ -x "$usr/bin/$exec_bin" ] || fail "the desktop entry runs $exec_bin, which the package does not install in /usr/bin"
grep -q "<launchable type=\"desktop-id\">$id.desktop</launchable>" "$usr/share/metainfo/$id.metainfo.xml" ||
  fail "the metainfo does not launch $id.desktop"
for b in $(sed -n 's:.*<binary>\(.*\)</binary>.*:\1:p' "$usr/share/metainfo/$id.metainfo.xml"); do
  [ -x "$usr/bin/$b" ] || fail "the metainfo provides $b, which is not installed"
done
pass "desktop-file-validate and appstreamcli validate pass; Icon, Exec, launchable and provides match the files"

# ---- Depends ----
depends=$(dpkg-deb -f "$deb" Depends)
has_dep() { echo ", $depends," | grep -qE ", $1( \([^)]*\))?,"; }
has_dep libqt6core6 && has_dep libc6 || fail "Depends lacks the computed library packages (dpkg-shlibdeps): $depends"
qml_root=$(realpath "$(dirname "$(dpkg -L qml6-module-qtquick | grep '/qml/QtQuick/qmldir$')")/..")
# Every module qml/ imports (plus what Qt loads for them at run time) must
# come from a package the .deb depends on; the packages found with dpkg -S.
modules=$(sed -n 's/^import \([A-Za-z][A-Za-z0-9.]*\).*/\1/p' "$src"/qml/*.qml | sort -u | grep -vx Weir)
modules="$modules QtQuick.Templates QtQuick.Window QtQml.Models QtQml.WorkerScript Qt.labs.folderlistmodel"
for m in $modules; do
  qmldir="$qml_root/${m//.//}/qmldir"
  [ -f "$qmldir" ] || fail "QML module $m is not installed here ($qmldir)"
  pkg=$(dpkg -S "$(realpath "$qmldir")" | head -n1 | cut -d: -f1)
  has_dep "$pkg" || fail "qml/ needs $m from $pkg, which Depends does not list: $depends"
done
plugins=$(dirname "$qml_root")/plugins
for p in sqldrivers/libqsqlite.so platforms/libqxcb.so; do
  pkg=$(dpkg -S "$(realpath "$plugins/$p")" | head -n1 | cut -d: -f1)
  has_dep "$pkg" || fail "the app loads $p from $pkg, which Depends does not list"
done
pass "Depends: computed libraries, every QML module imported and the Qt plugins loaded"
recommends=$(dpkg-deb -f "$deb" Recommends)
for pkg in qt6-xdgdesktopportal-platformtheme qt6-gtk-platformtheme; do
  echo ", $recommends," | grep -qE ", $pkg," || fail "Recommends lacks $pkg (native file dialogs): $recommends"
done
pass "Recommends: the platform themes that give native file dialogs"

# ---- the installed binaries, with only the scratch XDG folders ----
home="$scratch/home"
mkdir -p "$home/.local/share/weir/models" "$scratch/run"
chmod 700 "$scratch/run"
ln -s "$(realpath "$model")" "$home/.local/share/weir/models/$(basename "$model")"
# The app opens the chat model (the catalogue's role "chat") when the user's
# model folder has it, as install-models.py puts it there.
chat_model="${WEIR_SOURCE_DIR:-}/models/smollm2-135m-instruct-q4_1.gguf"
app_model="$model"
if [ -s "$chat_model" ]; then
  ln -s "$(realpath "$chat_model")" "$home/.local/share/weir/models/$(basename "$chat_model")"
  app_model="$chat_model"
fi
user_env=(env -u WEIR_MODEL -u WEIR_DATA_DIR -u DISPLAY -u WAYLAND_DISPLAY HOME="$home"
          XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" XDG_RUNTIME_DIR="$scratch/run")

"${user_env[@]}" "$usr/bin/weir-cli" --help >"$scratch/cli-help.txt" || fail "weir-cli --help"
grep -q "$home/.local/share/weir/models" "$scratch/cli-help.txt" || fail "weir-cli --help does not name the XDG model folder"
"${user_env[@]}" timeout 120 "$usr/bin/weir-cli" generate -p "The capital of France is" -n 8 --temp 0 --threads 2 --json \
  >"$scratch/generate.json" || fail "the installed weir-cli generate failed"
python3 - "$scratch/generate.json" "$home/.local/share/weir/models/$(basename "$model")" <<'PY' || fail "weir-cli generate output"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["model"] == sys.argv[2], f"used {r['model']}, not the model in the XDG folder"
assert len(r["tokens"]) == 8 and r["text"].strip(), r
PY
pass "installed weir-cli generate: 8 tokens from the model in \$XDG_DATA_HOME/weir/models"
if [ -n "$cuda_deb" ]; then
  # Unpacked beside weir-cli, the module is found; this machine may still
  # have no GPU, but the problem named must not be a missing module.
  "${user_env[@]}" "$usr/bin/weir-cli" devices --json >"$scratch/devices.json" || fail "installed weir-cli devices"
  python3 - "$scratch/devices.json" <<'PY' || fail "the installed weir-cli did not find the installed CUDA module"
import json, sys
r = json.load(open(sys.argv[1]))
gpus = [d for d in r["devices"] if d["gpu"]]
problem = r.get("gpu_problem", "")
assert gpus or "no CUDA support" not in problem, problem
print("devices:", [d["id"] for d in r["devices"]], "|", problem)
PY
  pass "installed weir-cli opens the installed CUDA module (usr/lib/weir)"
fi

QT_QPA_PLATFORM=xcb "${user_env[@]}" "$usr/bin/weir" --help >"$scratch/weir-help.txt" || fail "weir --help without a display"
grep -q -- "--quit-after" "$scratch/weir-help.txt" || fail "weir --help does not list its options"
QT_QPA_PLATFORM=offscreen "${user_env[@]}" timeout 120 "$usr/bin/weir" --quit-after 5 >"$scratch/weir.out" 2>&1 ||
  { cat "$scratch/weir.out" >&2; fail "the installed weir did not run offscreen and quit by itself"; }
data="$home/.local/share/weir"
[ -s "$data/weir.sqlite3" ] || fail "no database in $data"
log="$data/logs/weir.log"
[ -s "$log" ] || fail "no log file in $data/logs"
grep -q "weir.app: model ready: $data/models/$(basename "$app_model")" "$log" ||
  { cat "$log" >&2; fail "the app did not load $(basename "$app_model") from $data/models"; }
grep -q "weir.engine: model: loaded" "$log" || fail "the engine's lines are not in the log file"
if grep -E "weir.ui|QML|qrc:" "$scratch/weir.out" "$log"; then fail "the installed app printed QML warnings"; fi
pass "installed weir: ran offscreen 5 s on $(basename "$app_model"); database and log in \$XDG_DATA_HOME/weir"
