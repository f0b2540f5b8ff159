#pragma once
// What the CPU we run on can do, and which kernel implementation matmul()
// uses. The *_avx2.cpp kernels may only run when the AVX2 path is active.
namespace weir::kernels {

struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512dq = false, avx512bw = false, avx512vl = false, avx512vnni = false;
    // AMX-TILE and AMX-INT8, and Linux granted this process the tile data
    // state (arch_prctl ARCH_REQ_XCOMP_PERM, asked for once at detection).
    bool amxInt8 = false;
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

// Back to the default choice (VNNI and the AVX-512 variants included).
void resetKernelPath();

// AVX-512 VNNI (vpdpbusd, vpdpwssd) for the integer dot products of the
// Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 kernels (Q4_0/Q5_0/Q8_0: two weight rows per
// 512-bit register) and of the Q4_K/Q5_K/Q6_K row-dot and tiled kernels: the
// same integer sums and float operations, so results are bit-identical. On
// when the AVX2 path is active and the CPU has AVX-512 F/BW/VL/DQ/VNNI, unless
// WEIR_KERNELS=avx2 is set.
bool vnniActive();
// Test hook: false turns it off; true turns it on where the CPU can run it
// (and returns false, changing nothing, where it cannot).
bool forceVnni(bool on);

// Prompt GEMMs in tiles (amx_tiles.h): rows of batches of 32 or more with
// Q4_0/Q5_0/Q8_0/Q4_K/Q6_K weights are multiplied 32 activation rows by 32
// weight rows per block or sub-block, on AMX-INT8 tiles (tdpbusd) where the
// CPU has them, else with AVX-512 VNNI over the same layout (bit for bit the
// same results). The integer sums per block are the row kernels'; the float
// sum over blocks runs in block order instead of llama.cpp's 8 lanes, so
// results differ from the row kernels (and llama.cpp's AVX2 build) in
// rounding only.
// Tiles: on when VNNI is on, unless WEIR_KERNELS is avx512-rows, avx2 or
// scalar. AMX: on where tiles are, the CPU has AMX-INT8 and the kernel grants
// the tile state, unless WEIR_KERNELS is avx512.
bool tileGemmActive();
bool amxActive();
// Test hooks, as forceVnni (AMX on needs tiles on).
bool forceTileGemm(bool on);
bool forceAmx(bool on);

// llama.cpp built for AVX-512 (F and DQ) computes two things differently
// from its AVX2 build, and a build native to this CPU is one of those:
// - f32/f16 vector dot products (its CPU flash attention's scores) sum in
//   4 accumulators of 16 lanes instead of 8, which rounds differently;
// - SwiGLU takes blocks of 16 through its AVX-512 expf, which adds the 1 of
//   the polynomial before scaling by 2^n (AVX2: j * 2^n + 2^n in one fma).
// We follow the AVX-512 build where the CPU has AVX-512 F and DQ (done on
// 256-bit registers: it needs no AVX-512 instruction). On when the AVX2 path
// is active and the CPU has them, unless WEIR_KERNELS=avx2 is set.
bool avx512VariantsActive();
// Test hook: false turns it off; true turns it on where the AVX2 path can
// run (and returns false, changing nothing, where it cannot).
bool forceAvx512Variants(bool on);

} // namespace weir::kernels
