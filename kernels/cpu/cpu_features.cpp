#include "kernels/cpu/cpu_features.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace weir::kernels {

#if defined(__x86_64__)
// AMX's tile registers are an XSAVE state Linux (5.16+) hands out per
// process on request: without the grant the first tile instruction faults.
static bool amxInt8Usable() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = d >> 24 & 1, int8 = d >> 25 & 1;  // CPUID.(7,0):EDX AMX-TILE, AMX-INT8
    if (!tile || !int8) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // asm/prctl.h, Linux's xstate numbers
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

const CpuFeatures& cpuFeatures() {
    static const CpuFeatures f = [] {
        CpuFeatures c;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
        c.avx2 = __builtin_cpu_supports("avx2");
        c.fma = __builtin_cpu_supports("fma");
        c.f16c = __builtin_cpu_supports("f16c");
        c.avx512f = __builtin_cpu_supports("avx512f");
        c.avx512dq = __builtin_cpu_supports("avx512dq");
        c.avx512bw = __builtin_cpu_supports("avx512bw");
        c.avx512vl = __builtin_cpu_supports("avx512vl");
        c.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
#if defined(__x86_64__)
        c.amxInt8 = amxInt8Usable();
#endif
        return c;
    }();
    return f;
}

const char* kernelPathName(KernelPath p) {
    switch (p) {
    case KernelPath::Scalar: return "scalar";
    case KernelPath::Avx2: return "avx2";
    }
    return "?";
}

static bool canRun(KernelPath p) {
    const CpuFeatures& f = cpuFeatures();
    switch (p) {
    case KernelPath::Scalar: return true;
    case KernelPath::Avx2: return f.avx2 && f.fma && f.f16c;
    }
    return false;
}

KernelPath bestKernelPath() {
    return canRun(KernelPath::Avx2) ? KernelPath::Avx2 : KernelPath::Scalar;
}

static KernelPath defaultPath() {
    const char* env = std::getenv("WEIR_KERNELS");
    if (env && std::strcmp(env, "scalar") == 0) return KernelPath::Scalar;
    return bestKernelPath();
}

static bool cpuHasVnni() {
    const CpuFeatures& f = cpuFeatures();
    // DQ too: the *_avx512.cpp files are compiled with it (every VNNI CPU has it).
    return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
}

// WEIR_KERNELS is one of a, b or c.
static bool envSays(const char* a, const char* b, const char* c = nullptr) {
    const char* env = std::getenv("WEIR_KERNELS");
    return env && (std::strcmp(env, a) == 0 || std::strcmp(env, b) == 0 || (c && std::strcmp(env, c) == 0));
}

static bool defaultVnni() { return cpuHasVnni() && !envSays("avx2", "scalar"); }
static bool defaultTileGemm() { return cpuHasVnni() && !envSays("avx512-rows", "avx2", "scalar"); }
static bool defaultAmx() { return defaultTileGemm() && cpuFeatures().amxInt8 && !envSays("avx512", "avx512-rows"); }

static bool defaultAvx512Variants() {
    return cpuFeatures().avx512f && cpuFeatures().avx512dq && !envSays("avx2", "scalar");
}

// -1: not chosen yet; 0 off; 1 on.
static std::atomic<int> g_vnni{-1};
static std::atomic<int> g_avx512Variants{-1};
static std::atomic<int> g_amx{-1};
static std::atomic<int> g_tileGemm{-1};

// -1: not chosen yet; otherwise a KernelPath value.
static std::atomic<int> g_path{-1};

// A switch's state, chosen by byDefault() on first use.
static bool switchOn(std::atomic<int>& flag, bool (*byDefault)()) {
    int v = flag.load(std::memory_order_relaxed);
    if (v < 0) {
        v = byDefault() ? 1 : 0;
        flag.store(v, std::memory_order_relaxed);
    }
    return v == 1;
}

KernelPath activeKernelPath() {
    int p = g_path.load(std::memory_order_relaxed);
    if (p < 0) {
        p = int(defaultPath());
        g_path.store(p, std::memory_order_relaxed);
    }
    return KernelPath(p);
}

bool vnniActive() { return activeKernelPath() == KernelPath::Avx2 && switchOn(g_vnni, defaultVnni); }

bool forceVnni(bool on) {
    if (on && !cpuHasVnni()) return false;
    g_vnni.store(on ? 1 : 0, std::memory_order_relaxed);
    return true;
}

bool tileGemmActive() { return vnniActive() && switchOn(g_tileGemm, defaultTileGemm); }

bool forceTileGemm(bool on) {
    if (on && !cpuHasVnni()) return false;
    g_tileGemm.store(on ? 1 : 0, std::memory_order_relaxed);
    return true;
}

bool amxActive() { return tileGemmActive() && switchOn(g_amx, defaultAmx); }

bool forceAmx(bool on) {
    if (on && !(cpuHasVnni() && cpuFeatures().amxInt8)) return false;
    g_amx.store(on ? 1 : 0, std::memory_order_relaxed);
    return true;
}

bool avx512VariantsActive() {
    return activeKernelPath() == KernelPath::Avx2 && switchOn(g_avx512Variants, defaultAvx512Variants);
}

bool forceAvx512Variants(bool on) {
    if (on && !canRun(KernelPath::Avx2)) return false;
    g_avx512Variants.store(on ? 1 : 0, std::memory_order_relaxed);
    return true;
}

bool forceKernelPath(KernelPath p) {
    if (!canRun(p)) return false;
    g_path.store(int(p), std::memory_order_relaxed);
    return true;
}

void resetKernelPath() {
    g_path.store(int(defaultPath()), std::memory_order_relaxed);
    g_vnni.store(defaultVnni() ? 1 : 0, std::memory_order_relaxed);
    g_avx512Variants.store(defaultAvx512Variants() ? 1 : 0, std::memory_order_relaxed);
    g_amx.store(defaultAmx() ? 1 : 0, std::memory_order_relaxed);
    g_tileGemm.store(defaultTileGemm() ? 1 : 0, std::memory_order_relaxed);
}

} // namespace weir::kernels
