#pragma once
// What the CPU we run on can do, and which kernel implementation matmul()
// uses. The *_avx2.cpp kernels may only run when the AVX2 path is active.
namespace weir::kernels {

struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
};

// Detected once (cpuid through __builtin_cpu_supports).
const CpuFeatures& cpuFeatures();

enum class KernelPath { Scalar, Avx2 };

const char* kernelPathName(KernelPath p);

// The fastest path this CPU supports.
KernelPath bestKernelPath();

// The path in use: bestKernelPath(), unless WEIR_KERNELS=scalar is set in the
// environment at first use, or a test forced another one.
KernelPath activeKernelPath();

// Test hook: use `p` from now on. Returns false (and changes nothing) when the
// CPU cannot run it. Not meant to be flipped while a matmul is running.
bool forceKernelPath(KernelPath p);

// Back to the default choice.
void resetKernelPath();

} // namespace weir::kernels
