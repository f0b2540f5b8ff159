#!/usr/bin/env bash
# Builds and runs the CUDA module's tests on a machine with an NVIDIA GPU:
#   tests/gpu/run.sh [build dir, default build-gpu] [extra ctest args]
# Configures with WEIR_CUDA=ON (a missing nvcc is an error here) and the
# architectures of WEIR_CUDA_ARCHITECTURES (default: 90), builds only the
# module and its tests, and runs ctest on them. Each test prints its
# comparisons' worst errors; a test that finds no device fails here (it would
# only skip in the normal suite).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-gpu}"
shift || true
arch="${WEIR_CUDA_ARCHITECTURES:-90}"
jobs="${JOBS:-$(nproc)}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_BUILD_FUZZERS=OFF \
  -DWEIR_CUDA=ON -DWEIR_CUDA_ARCHITECTURES="$arch" >/dev/null
targets=(weir_cuda gpu_cuda_module_test gpu_block_decoders_test gpu_gemv_kernels_test gpu_gemm_kernels_test gpu_row_kernels_test
  gpu_rope_store_kernels_test gpu_paged_attention_kernels_test gpu_cuda_backend_test gpu_kernels_bench)
ninja -C "$build" -j "$jobs" "${targets[@]}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
# No skipping here: a run without a device is a failed run.
ctest --test-dir "$build" -R '^gpu_' --output-on-failure --no-tests=error "$@" | tee "$build/gpu-tests.log"
if grep -q "SKIPPED: .*no CUDA device" "$build"/Testing/Temporary/LastTest.log; then
  echo "run.sh: the GPU tests found no CUDA device" >&2
  exit 1
fi
# Throughput at an 8B model's shapes (figures only).
"$build/tests/gpu_kernels_bench"
