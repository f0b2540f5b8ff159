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

// Back to the default choice (VNNI included).
void resetKernelPath();

// AVX-512 VNNI (vpdpbusd on 256-bit registers) for the integer dot products
// of the Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 kernels: the same integer sums in fewer
// instructions, so results are bit-identical. On when the AVX2 path is active
// and the CPU has AVX-512 F/BW/VL/VNNI, unless WEIR_KERNELS=avx2 is set.
bool vnniActive();
// Test hook: false turns it off; true turns it on where the CPU can run it
// (and returns false, changing nothing, where it cannot).
bool forceVnni(bool on);

} // namespace weir::kernels
