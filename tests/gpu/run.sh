#!/usr/bin/env bash
# Every check that needs the GPU, in one call on a bare lent machine (an H200
# with nvcc, cmake, ninja and python3; no Qt; nothing fetchable; no model
# files: they are made here by `weir-cli make-synthetic --preset`).
#
#   tests/gpu/run.sh [--with-llamacpp] [--quick] [--cpu-rehearsal] [--budget S]
#
#   1. facts: nvidia-smi, nvcc, cmake, nproc, the CPU
#   2. builds Weir Qt-free in build-gpu/ (weir-cli, then the CUDA module
#      weir_cuda and the tests labelled gpu), in the background; with
#      --with-llamacpp also llama-bench and llama-batched-bench from
#      .gpu-ref/llama.cpp.tar.gz (packaging/setup-gpu-reference.sh makes it;
#      carry .gpu-ref) with CUDA for sm_90a, flash attention off
#   3. makes the full-size presets gemma3-270m-q4_k_m, smollm2-135m-q4_1 and
#      llama3-8b-q4_k_m under $WEIR_GPU_SCRATCH (default /tmp/weir-gpu)
#   4. GPU: (a) the CUDA module's tests (ctest: labelled gpu or named gpu_*;
#      kernels against the CPU; a test that finds no device fails here) and
#      gpu_kernels_bench, (b) weir-cli
#      compare-devices on each preset, (c) a pool soak on the GPU, (d) bench
#      (pp512, tg128, pp8192) and bench-concurrency (1, 8 and 64
#      conversations; TTFT with a shared 7.7k-token prompt) on the Gemma 3 and
#      Llama 3 8B presets, and llama.cpp's llama-bench / llama-batched-bench on
#      the same files
#   5. CPU (issue 23): the pool's hand-off cost (pool_handoff_bench), bench
#      and 16 conversations at --threads 2 4 8 16 on the Gemma 3 preset (each
#      with its step split) and at 16 on the 8B, and llama.cpp's CPU numbers
#   6. writes at most 8 files to $OUT (./gpu-out when unset): summary.json,
#      compare.json, soak.json, gpu_bench.json, cpu_bench.json (with
#      llama.cpp ratios), run.log, build.log; prints the summary last.
#
# Every step runs under `timeout`; a failure is recorded and the next step
# runs. Steps that would start after --budget seconds (default 420, with
# --with-llamacpp 540; or $WEIR_GPU_BUDGET_S) are SKIPPED, so the summary
# always comes back inside the call.
# --quick: fewer steps and tokens. --cpu-rehearsal: for a machine without
# CUDA (the 2-core ones): CUDA off, -j2, the SmolLM2 preset only, tiny token
# counts; the GPU-only steps print SKIPPED and the engine steps run on the CPU.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
WITH_LLAMA=0 QUICK=0 REHEARSAL=0 BUDGET="${WEIR_GPU_BUDGET_S:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --with-llamacpp) WITH_LLAMA=1 ;;
    --quick) QUICK=1 ;;
    --cpu-rehearsal) REHEARSAL=1 ;;
    --budget) BUDGET="$2"; shift ;;
    -h|--help) sed -n '2,37p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "tests/gpu/run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# About 6 minutes of work without llama.cpp; its CUDA build alone takes
# over 4 minutes of the 16 cores, so with it about 9 (call with timeout_s 600).
[ -z "$BUDGET" ] && { [ "$WITH_LLAMA" = 1 ] && BUDGET=540 || BUDGET=420; }
T0=$SECONDS
RESERVE=20                       # seconds kept for the summary
OUT="${OUT:-$ROOT/gpu-out}"
SCRATCH="${WEIR_GPU_SCRATCH:-/tmp/weir-gpu}"
BUILD="${WEIR_GPU_BUILD_DIR:-$ROOT/build-gpu}"
RAW="$SCRATCH/raw"
mkdir -p "$OUT" "$SCRATCH" "$RAW"
rm -f "$RAW"/*
LOG="$OUT/run.log" BUILD_LOG="$OUT/build.log"
: >"$LOG"; : >"$BUILD_LOG"
STEPS="$RAW/steps.tsv"; : >"$STEPS"
CLI="$BUILD/bin/weir-cli"
LLAMA_SRC="$SCRATCH/llama.cpp" LLAMA_BUILD="$SCRATCH/llama-build"
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
export PYTHONUNBUFFERED=1

if [ "$REHEARSAL" = 1 ]; then JOBS=2; else JOBS="$(nproc)"; fi

say() { printf '%s\n' "$*" | tee -a "$LOG"; }
elapsed() { echo $((SECONDS - T0)); }
# record NAME STATUS SECONDS NOTE [RAWFILE]
record() {
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | tr '\t\n' '  ' | cut -c1-400)" "${5:-}" >>"$STEPS"
  say "    -> $2 ($3 s)${4:+: $4}"
}
skip() { say ">>> $1"; record "$1" SKIPPED 0 "$2"; }

# run_step NAME LIMIT_S RAWFILE CMD...: CMD's stdout to RAWFILE, stderr to
# RAWFILE.err and the log; status from the exit code.
run_step() {
  local name="$1" limit="$2" out="$3"; shift 3
  local left=$((BUDGET - $(elapsed) - RESERVE))
  if [ "$left" -lt 15 ]; then skip "$name" "time budget of ${BUDGET}s spent"; return 0; fi
  [ "$limit" -gt "$left" ] && limit="$left"
  say ">>> $name (limit ${limit}s, at $(elapsed)s)"
  local t=$SECONDS rc
  timeout -k 10 "$limit" "$@" >"$out" 2>"$out.err"
  rc=$?
  { echo "--- $name: $*"; cat "$out.err"; } >>"$LOG"
  local note
  note="$(grep -v '^soak: \|^\s*$' "$out.err" | tail -n 2)"
  case $rc in
    0) record "$name" ok $((SECONDS - t)) "" "$out" ;;
    124|137) record "$name" TIMEOUT $((SECONDS - t)) "after ${limit}s; $note" "$out" ;;
    *) record "$name" FAILED $((SECONDS - t)) "exit $rc; $note" "$out" ;;
  esac
  return 0
}

assemble() {
  python3 "$ROOT/tests/gpu/assemble.py" --raw "$RAW" --out "$OUT" --mode "$MODE" "$@" >/dev/null 2>>"$LOG" ||
    say "assemble.py failed (see run.log)"
}

MODE="full"; [ "$QUICK" = 1 ] && MODE="quick"; [ "$REHEARSAL" = 1 ] && MODE="cpu-rehearsal"
say "tests/gpu/run.sh: mode $MODE, llama.cpp $([ $WITH_LLAMA = 1 ] && echo on || echo off), budget ${BUDGET}s, jobs $JOBS, out $OUT"

# ---- 1. facts -------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git -C "$ROOT" log -1 --format='%h %s' 2>/dev/null || echo '?')"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "numa nodes: $(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l); smt: $(cat /sys/devices/system/cpu/smt/active 2>/dev/null || echo '?'); cpu MHz now: $(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "memory: $(grep MemTotal /proc/meminfo | awk '{printf "%.0f GiB", $2/1048576}')"
  echo "cmake: $(cmake --version 2>/dev/null | head -1)"
  echo "ninja: $(ninja --version 2>/dev/null)"
  echo "nvcc: $(nvcc --version 2>/dev/null | grep -i release | sed 's/.*release //')"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,compute_cap --format=csv,noheader 2>/dev/null | head -1)"
} >"$RAW/facts.txt"
cat "$RAW/facts.txt" | tee -a "$LOG"
nvidia-smi >>"$LOG" 2>&1 || true
HAVE_GPU=0
[ "$REHEARSAL" = 0 ] && nvidia-smi -L >/dev/null 2>&1 && HAVE_GPU=1
[ "$REHEARSAL" = 0 ] && [ "$HAVE_GPU" = 0 ] && say "WARNING: no GPU answers nvidia-smi; the GPU steps will fail"

# ---- 2. builds ------------------------------------------------------------
# llama.cpp in the background (niced: Weir's build and checks come first).
LLAMA_PID=""
if [ "$WITH_LLAMA" = 1 ]; then
  if [ ! -s "$ROOT/.gpu-ref/llama.cpp.tar.gz" ]; then
    skip "llama.cpp build" "no .gpu-ref/llama.cpp.tar.gz (run packaging/setup-gpu-reference.sh here and carry .gpu-ref)"
    WITH_LLAMA=0
  else
    say ">>> llama.cpp build (background, at $(elapsed)s)"
    llama_cuda=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a -DGGML_CUDA_FA=OFF)
    [ "$REHEARSAL" = 1 ] && llama_cuda=(-DGGML_CUDA=OFF)
    (
      set -e
      t=$SECONDS
      rm -rf "$LLAMA_SRC" && mkdir -p "$SCRATCH"
      tar -xzf "$ROOT/.gpu-ref/llama.cpp.tar.gz" -C "$SCRATCH"
      nice -n 10 cmake -S "$LLAMA_SRC" -B "$LLAMA_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${llama_cuda[@]}" \
        -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=ON
      nice -n 10 ninja -C "$LLAMA_BUILD" -j"$JOBS" llama-bench llama-batched-bench
      echo $((SECONDS - t)) >"$RAW/llama-build.seconds"
    ) >"$RAW/llama-build.log" 2>&1 &
    LLAMA_PID=$!
  fi
fi

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DWEIR_BUILD_APP=OFF -DWEIR_BUILD_FUZZERS=OFF -DWEIR_BUILD_TESTS=ON
            -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON)
if [ "$REHEARSAL" = 1 ]; then cmake_args+=(-DWEIR_CUDA=OFF); else cmake_args+=(-DWEIR_CUDA=ON -DWEIR_CUDA_ARCHITECTURES=90); fi

say ">>> Weir configure + weir-cli (background, -j$JOBS, at $(elapsed)s)"
t=$SECONDS
( cmake -S "$ROOT" -B "$BUILD" "${cmake_args[@]}" && ninja -C "$BUILD" -j"$JOBS" weir-cli pool_handoff_bench ) >>"$BUILD_LOG" 2>&1 &
WEIR_PID=$!
wait "$WEIR_PID"; rc=$?
if [ $rc = 0 ]; then record "build weir-cli" ok $((SECONDS - t)) ""
else
  record "build weir-cli" FAILED $((SECONDS - t)) "exit $rc; $(grep -m3 -E 'error|Error' "$BUILD_LOG" | tr '\n' ' ')"
  if [ "$REHEARSAL" = 0 ]; then
    # Without the CUDA code the CPU sections still run (and the GPU ones fail clearly).
    say ">>> Weir configure + weir-cli with WEIR_CUDA=OFF (fallback, at $(elapsed)s)"
    BUILD="$BUILD-nocuda" CLI="$BUILD-nocuda/bin/weir-cli" t=$SECONDS
    cmake_args=("${cmake_args[@]/-DWEIR_CUDA=ON/-DWEIR_CUDA=OFF}")
    ( cmake -S "$ROOT" -B "$BUILD" "${cmake_args[@]}" && ninja -C "$BUILD" -j"$JOBS" weir-cli pool_handoff_bench ) >>"$BUILD_LOG" 2>&1 &
    WEIR_PID=$!
    wait "$WEIR_PID"; rc=$?
    if [ $rc = 0 ]; then record "build weir-cli without CUDA (fallback)" ok $((SECONDS - t)) ""
    else record "build weir-cli without CUDA (fallback)" FAILED $((SECONDS - t)) "exit $rc"; fi
  fi
fi

# The CUDA module and the GPU tests, in the background while the models are made.
GPU_TESTS=""
STAGE2_PID=""
if [ "$REHEARSAL" = 1 ]; then
  skip "build weir_cuda + gpu tests" "cpu rehearsal: no CUDA"
elif [ -x "$CLI" ]; then
  targets=()
  if ninja -C "$BUILD" -t targets all 2>/dev/null | grep -q '^weir_cuda:'; then targets+=(weir_cuda)
  else say "    no target weir_cuda in this tree (CUDA module not merged, or WEIR_CUDA unknown)"; fi
  # The CUDA module's tests: labelled gpu, or named gpu_* (tests/gpu/CMakeLists.txt).
  GPU_TESTS="$(cd "$BUILD" && { ctest -N -L gpu; ctest -N -R '^gpu_'; } 2>/dev/null |
               sed -n 's/^ *Test *#[0-9]*: *//p' | sort -u | tr '\n' ' ')"
  for t_ in $GPU_TESTS; do targets+=("$t_"); done
  ninja -C "$BUILD" -t targets all 2>/dev/null | grep -q '^gpu_kernels_bench:' && targets+=(gpu_kernels_bench)
  if [ ${#targets[@]} -gt 0 ]; then
    say ">>> build ${targets[*]} (background, at $(elapsed)s)"
    t2=$SECONDS
    ninja -C "$BUILD" -j"$JOBS" "${targets[@]}" >>"$BUILD_LOG" 2>&1 &
    STAGE2_PID=$!
  else
    skip "build weir_cuda + gpu tests" "neither a weir_cuda target nor tests labelled gpu in this tree"
  fi
fi

# ---- 3. the models --------------------------------------------------------
declare -A MODEL
if [ "$REHEARSAL" = 1 ]; then PRESETS="smollm2-135m-q4_1"; else PRESETS="gemma3-270m-q4_k_m smollm2-135m-q4_1 llama3-8b-q4_k_m"; fi
for p in $PRESETS; do
  MODEL[$p]="$SCRATCH/$p.gguf"
  # A second call on a still-warm machine finds the files of the first (same
  # weir-cli, same bytes): kept when the first made them completely.
  if [ -s "${MODEL[$p]}" ] && [ "${MODEL[$p]}.done" -nt "$CLI" ]; then
    say ">>> make-synthetic $p"; record "make-synthetic $p" ok 0 "kept from an earlier run"; continue
  fi
  rm -f "${MODEL[$p]}.done"
  run_step "make-synthetic $p" 120 "$RAW/make-$p.txt" "$CLI" make-synthetic --preset "$p" "${MODEL[$p]}"
  [ "$(tail -n 1 "$STEPS" | cut -f2)" = ok ] && touch "${MODEL[$p]}.done"
done
# What the sections call "gemma3" and "8b" (the rehearsal has SmolLM2 only).
if [ "$REHEARSAL" = 1 ]; then G3="${MODEL[smollm2-135m-q4_1]}" L8="$G3"
else G3="${MODEL[gemma3-270m-q4_k_m]}" L8="${MODEL[llama3-8b-q4_k_m]}"; fi

if [ -n "$STAGE2_PID" ]; then
  wait "$STAGE2_PID"; rc=$?
  if [ $rc = 0 ]; then record "build weir_cuda + gpu tests" ok $((SECONDS - t2)) ""
  else record "build weir_cuda + gpu tests" FAILED $((SECONDS - t2)) "exit $rc; $(grep -m3 -E 'error' "$BUILD_LOG" | tr '\n' ' ')"; fi
fi
# weir-cli looks for the CUDA module beside it and in ../lib; point it at
# the built one wherever the build put it.
if [ -z "${WEIR_CUDA_MODULE:-}" ]; then
  module="$(find "$BUILD" -name libweir-cuda.so -type f 2>/dev/null | head -n 1)"
  [ -n "$module" ] && export WEIR_CUDA_MODULE="$module" && say "    CUDA module: $module"
fi
# What Weir sees (and why not a GPU, if it sees none).
if "$CLI" devices --help >/dev/null 2>&1; then
  run_step "weir-cli devices" 60 "$RAW/devices.json" "$CLI" devices --json
  cat "$RAW/devices.json" >>"$LOG"
fi
assemble

# Whether a weir-cli engine subcommand takes --device yet (the device
# plumbing): asked with a model that does not exist, it names the unknown
# argument before it looks for the file.
device_flag_ok() {
  local said
  said="$(timeout 30 "$CLI" "$1" -m "$SCRATCH/no-such-model.gguf" --device cpu 2>&1)"
  [[ "$said" != *"unknown argument '--device'"* ]]
}
# dev_args CMD DEVICE: the --device option for CMD, or nothing for the CPU on
# a build without it (that build runs on the CPU anyway).
dev_args() {
  if device_flag_ok "$1"; then echo "--device $2"
  elif [ "$2" = cpu ]; then echo ""
  else echo "NO-DEVICE-FLAG"; fi
}
# engine_step NAME LIMIT RAW DEVICE CMD ARGS...: a weir-cli engine subcommand on DEVICE.
engine_step() {
  local name="$1" limit="$2" out="$3" dev="$4" cmd="$5"; shift 5
  local d; d="$(dev_args "$cmd" "$dev")"
  if [ "$d" = NO-DEVICE-FLAG ]; then
    say ">>> $name"; record "$name" FAILED 0 "weir-cli $cmd has no --device option in this build" "$out"; return 0
  fi
  # shellcheck disable=SC2086
  run_step "$name" "$limit" "$out" "$CLI" "$cmd" "$@" $d
}

# ---- 4. GPU ---------------------------------------------------------------
if [ "$REHEARSAL" = 1 ]; then GDEV=cpu; TAG=" [rehearsal on cpu]"; else GDEV=cuda; TAG=""; fi

# (a) the kernels against the CPU; a test that finds no device skips in the
# normal suite but fails here. Then the kernels' throughput (figures only).
if [ "$REHEARSAL" = 1 ]; then skip "ctest gpu tests" "cpu rehearsal: no CUDA"
elif [ -z "$GPU_TESTS" ]; then skip "ctest gpu tests" "no tests labelled gpu or named gpu_* in this tree"
else
  rm -f "$BUILD/Testing/Temporary/LastTest.log"
  run_step "ctest gpu tests" 240 "$RAW/ctest-gpu.txt" ctest --test-dir "$BUILD" -R "^($(echo $GPU_TESTS | tr ' ' '|'))\$" \
    --output-on-failure --timeout 150 --no-tests=error
  cat "$RAW/ctest-gpu.txt" >>"$LOG"
  if grep -q "SKIPPED: .*no CUDA device" "$BUILD/Testing/Temporary/LastTest.log" 2>/dev/null; then
    say ">>> the GPU tests saw a device"; record "the GPU tests saw a device" FAILED 0 "a GPU test printed SKIPPED: no CUDA device"
  fi
  [ -x "$BUILD/tests/gpu_kernels_bench" ] &&
    run_step "gpu_kernels_bench" 120 "$RAW/kernels-bench.txt" "$BUILD/tests/gpu_kernels_bench" && cat "$RAW/kernels-bench.txt" >>"$LOG"
fi

# (b) the engine on the GPU against the CPU engine
if [ "$REHEARSAL" = 1 ]; then
  run_step "compare-devices smollm2$TAG" 120 "$RAW/compare-smollm2.json" "$CLI" compare-devices -m "$G3" \
    --device cpu --steps 4 --prompts 1 --long-prompt 100 --threads "$JOBS"
else
  steps=64; [ "$QUICK" = 1 ] && steps=32
  run_step "compare-devices smollm2" 120 "$RAW/compare-smollm2.json" "$CLI" compare-devices \
    -m "${MODEL[smollm2-135m-q4_1]}" --device cuda --steps $steps --prompts 4 --long-prompt 1100
  run_step "compare-devices gemma3" 150 "$RAW/compare-gemma3.json" "$CLI" compare-devices \
    -m "$G3" --device cuda --steps $steps --prompts 4 --long-prompt 1100
  run_step "compare-devices llama3-8b" 180 "$RAW/compare-llama3-8b.json" "$CLI" compare-devices \
    -m "$L8" --device cuda --steps 16 --prompts 2 --long-prompt 600
fi

# (c) the pools on the GPU: many conversations sharing a prompt, integrity
# checked at every step; 0 violations and 0 leaked pages to pass. The presets
# tokenize text byte by byte, so prompts run longer than soak's own context
# estimate: --max-context is given.
if [ "$REHEARSAL" = 1 ]; then
  engine_step "soak$TAG" 120 "$RAW/soak.json" "$GDEV" soak -m "$G3" --threads "$JOBS" --conversations 2 --requests 6 \
    --system-prompt-tokens 200 --max-tokens 8 --turns 2 --max-context 2048
else
  req=96; [ "$QUICK" = 1 ] && req=48
  engine_step "soak gemma3" 150 "$RAW/soak.json" cuda soak -m "$G3" --conversations 8 --requests $req \
    --system-prompt-tokens 2000 --max-tokens 24 --turns 4 --cancel-fraction 0.1 --max-context 8192
fi
assemble

# (d) speed on the GPU (with --with-llamacpp, its build may still run beside
# them, niced: noted in gpu_bench.json)
if [ -n "$LLAMA_PID" ] && kill -0 "$LLAMA_PID" 2>/dev/null; then
  echo "the llama.cpp build (nice 10) was still running when Weir's GPU benchmarks started" >"$RAW/overlap.txt"
fi
# gpu_bench LABEL FILE: prefill/decode, 1/8/64 conversations, TTFT with a shared prompt.
gpu_bench() {
  local label="$1" file="$2"
  if [ "$REHEARSAL" = 1 ]; then
    engine_step "bench $label pp/tg$TAG" 120 "$RAW/gpu-bench-$label-pp512.json" "$GDEV" bench -m "$file" \
      --pp 32 --tg 8 --threads "$JOBS" --no-bandwidth
    engine_step "bench-concurrency $label x2 + shared prompt$TAG" 180 "$RAW/gpu-conc-$label-8.json" "$GDEV" \
      bench-concurrency -m "$file" --threads "$JOBS" --concurrency 2 --prompt-tokens 16 --gen-tokens 8 \
      --system-prompt-tokens 300 --load-requests 0
    return 0
  fi
  local tg=128; [ "$QUICK" = 1 ] && tg=64
  # The shared prompt: 7.7k tokens; 7.3k on the 8B, whose 8192-token context
  # must also hold the overshoot of makeSystemPrompt (up to a paragraph) and the turn.
  local sys=7700; [ "$label" = llama3-8b ] && sys=7300
  engine_step "bench $label pp512 tg$tg" 120 "$RAW/gpu-bench-$label-pp512.json" cuda bench -m "$file" \
    --pp 512 --tg $tg --no-bandwidth
  [ "$QUICK" = 0 ] && engine_step "bench $label pp8192" 120 "$RAW/gpu-bench-$label-pp8192.json" cuda bench -m "$file" \
    --pp 8192 --tg 0 --no-bandwidth
  engine_step "bench-concurrency $label x8 + shared ${sys} prompt" 180 "$RAW/gpu-conc-$label-8.json" cuda \
    bench-concurrency -m "$file" --concurrency 8 --prompt-tokens 64 --gen-tokens $tg --system-prompt-tokens $sys \
    --load-requests 0
  engine_step "bench-concurrency $label x64" 180 "$RAW/gpu-conc-$label-64.json" cuda bench-concurrency -m "$file" \
    --concurrency 64 --prompt-tokens 64 --gen-tokens $tg --no-prefix --load-requests 0
}
gpu_bench gemma3 "$G3"
[ "$REHEARSAL" = 0 ] && gpu_bench llama3-8b "$L8"
assemble

# llama.cpp: the build must be done before its numbers (and before the CPU
# section, which must have the cores to itself).
LLAMA_OK=0
if [ -n "$LLAMA_PID" ]; then
  say ">>> waiting for the llama.cpp build (at $(elapsed)s)"
  t=$SECONDS
  while kill -0 "$LLAMA_PID" 2>/dev/null && [ $((BUDGET - $(elapsed) - RESERVE)) -gt 15 ]; do sleep 2; done
  if kill -0 "$LLAMA_PID" 2>/dev/null; then
    pkill -TERM -P "$LLAMA_PID" 2>/dev/null; kill "$LLAMA_PID" 2>/dev/null
    record "llama.cpp build" TIMEOUT "$(cat "$RAW/llama-build.seconds" 2>/dev/null || echo $((SECONDS - T0)))" "still building when the budget ran out"
  else
    wait "$LLAMA_PID"; rc=$?
    if [ $rc = 0 ]; then LLAMA_OK=1; record "llama.cpp build" ok "$(cat "$RAW/llama-build.seconds")" "waited $((SECONDS - t)) s"
    else record "llama.cpp build" FAILED 0 "exit $rc; $(grep -m3 -iE 'error' "$RAW/llama-build.log" | tr '\n' ' ')"; fi
  fi
  cat "$RAW/llama-build.log" >>"$BUILD_LOG"
fi
LB="$LLAMA_BUILD/bin/llama-bench" LBB="$LLAMA_BUILD/bin/llama-batched-bench"
if [ "$LLAMA_OK" = 1 ] && [ "$REHEARSAL" = 0 ]; then
  for label in gemma3 llama3-8b; do
    f="$G3"; [ $label = llama3-8b ] && f="$L8"
    pp="512,8192"; [ "$QUICK" = 1 ] && pp="512"
    run_step "llama-bench $label gpu" 180 "$RAW/llama-gpu-bench-$label.json" "$LB" -m "$f" -ngl 99 -p "$pp" -n 128 -r 2 -o json
    run_step "llama-batched-bench $label gpu" 180 "$RAW/llama-gpu-batched-$label.jsonl" "$LBB" -m "$f" -ngl 99 \
      -npp 128 -ntg 128 -npl 1,8,64 -c 16384 --output-format jsonl
  done
elif [ "$WITH_LLAMA" = 1 ] && [ "$REHEARSAL" = 1 ]; then
  skip "llama.cpp gpu benchmarks" "cpu rehearsal: no CUDA"
fi
assemble

# ---- 5. CPU (issue 23) ----------------------------------------------------
if [ "$REHEARSAL" = 1 ]; then THREADS="1 2"; elif [ "$QUICK" = 1 ]; then THREADS="2 16"; else THREADS="2 4 8 16"; fi
cpu_pp=512 cpu_tg=128 conv_gen=64
[ "$REHEARSAL" = 1 ] && cpu_pp=32 cpu_tg=8 conv_gen=8
# What one hand-off of the pool costs at each thread count (a round trip with
# 2 us of work per thread, and a bare spinning barrier for comparison).
run_step "cpu pool hand-off" 60 "$RAW/cpu-handoff.json" "$(dirname "$CLI")/pool_handoff_bench" \
  --threads "$(echo $THREADS | tr ' ' ',')" --seconds 0.5
for t_ in $THREADS; do
  # --step-split: a second, profiled pass says where a step's time went.
  engine_step "cpu bench gemma3 t$t_" 120 "$RAW/cpu-bench-gemma3-t$t_.json" cpu bench -m "$G3" --pp $cpu_pp --tg $cpu_tg \
    --threads "$t_" --step-split
  engine_step "cpu 16 conversations gemma3 t$t_" 150 "$RAW/cpu-conc-gemma3-t$t_.json" cpu bench-concurrency -m "$G3" \
    --threads "$t_" --concurrency 16 --prompt-tokens 64 --gen-tokens $conv_gen --no-prefix --load-requests 0 --step-split
done
# The pool's waiters yield from the first microsecond (best on a 2-core VM
# shared with other programs); on an idle many-core machine a yield may cost
# more than it gives: the same runs at the most threads with 1 ms of spinning
# first (WEIR_POOL_YIELD_AFTER_US) say which.
tmax_="${THREADS##* }"
# shellcheck disable=SC2046
run_step "cpu bench gemma3 t$tmax_ spin first" 120 "$RAW/cpu-spin-bench-gemma3-t$tmax_.json" \
  env WEIR_POOL_YIELD_AFTER_US=1000 "$CLI" bench -m "$G3" --pp $cpu_pp --tg $cpu_tg --threads "$tmax_" $(dev_args bench cpu)
# shellcheck disable=SC2046
run_step "cpu 16 conversations gemma3 t$tmax_ spin first" 150 "$RAW/cpu-spin-conc-gemma3-t$tmax_.json" \
  env WEIR_POOL_YIELD_AFTER_US=1000 "$CLI" bench-concurrency -m "$G3" --threads "$tmax_" --concurrency 16 \
  --prompt-tokens 64 --gen-tokens $conv_gen --no-prefix --load-requests 0 $(dev_args bench-concurrency cpu)
if [ "$REHEARSAL" = 0 ] && [ "$QUICK" = 0 ]; then
  engine_step "cpu bench llama3-8b t16" 150 "$RAW/cpu-bench-llama3-8b-t16.json" cpu bench -m "$L8" --pp 512 --tg 64 \
    --threads 16
  engine_step "cpu 16 conversations llama3-8b t16" 180 "$RAW/cpu-conc-llama3-8b-t16.json" cpu bench-concurrency \
    -m "$L8" --threads 16 --concurrency 16 --prompt-tokens 64 --gen-tokens 32 --no-prefix --load-requests 0
fi
if [ "$LLAMA_OK" = 1 ]; then
  tl="$(echo $THREADS | tr ' ' ',')"
  # CUDA_VISIBLE_DEVICES= keeps llama.cpp's CUDA build off the GPU.
  run_step "llama-bench gemma3 cpu" 180 "$RAW/llama-cpu-bench-gemma3.json" env CUDA_VISIBLE_DEVICES= "$LB" -m "$G3" \
    -ngl 0 -t "$tl" -p $cpu_pp -n $cpu_tg -r 2 -o json
  tmax="${THREADS##* }"
  run_step "llama-batched-bench gemma3 cpu t$tmax" 150 "$RAW/llama-cpu-batched-gemma3.jsonl" env CUDA_VISIBLE_DEVICES= \
    "$LBB" -m "$G3" -ngl 0 -t "$tmax" -npp 64 -ntg $conv_gen -npl 16 -c 4096 --output-format jsonl
  if [ "$REHEARSAL" = 0 ] && [ "$QUICK" = 0 ]; then
    run_step "llama-bench llama3-8b cpu" 150 "$RAW/llama-cpu-bench-llama3-8b.json" env CUDA_VISIBLE_DEVICES= "$LB" \
      -m "$L8" -ngl 0 -t 16 -p 512 -n 64 -r 1 -o json
    run_step "llama-batched-bench llama3-8b cpu t16" 150 "$RAW/llama-cpu-batched-llama3-8b.jsonl" \
      env CUDA_VISIBLE_DEVICES= "$LBB" -m "$L8" -ngl 0 -t 16 -npp 64 -ntg 32 -npl 16 -c 2048 --output-format jsonl
  fi
fi

# ---- 6. summary -----------------------------------------------------------
say "done in $(elapsed)s"
python3 "$ROOT/tests/gpu/assemble.py" --raw "$RAW" --out "$OUT" --mode "$MODE" --print 2>>"$LOG" | tee -a "$LOG"
# Non-zero when a step failed or ran out of time (skipped steps do not count).
if cut -f2 "$STEPS" | grep -qE '^(FAILED|TIMEOUT)$'; then exit 1; fi
exit 0
