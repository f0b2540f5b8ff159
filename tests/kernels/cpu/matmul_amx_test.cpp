// The AMX-INT8 prefill GEMMs (amx_tiles.h; quant_legacy_amx.cpp for
// Q4_0/Q5_0/Q8_0, quant_k_amx.cpp for Q4_K/Q6_K) against the VNNI kernels.
// On a CPU with AMX, matmul() itself with AMX on and off. On any CPU with
// AVX-512 VNNI, the same kernel source compiled a second time over a
// software model of the tile instructions (amx_emulation.h), which checks
// its tile layout, packing, padding and scaling here too.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"
#include "quant_test_util.h"

using namespace weir::kernels;
using namespace weirtest;

namespace weir::kernels::detail::emulated_amx {  // the *_amx.cpp files built with WEIR_AMX_EMULATE
const TileGemmOps* tileGemmLegacyOps(GgmlType type);
const TileGemmOps* tileGemmKOps(GgmlType type);
} // namespace weir::kernels::detail::emulated_amx

namespace {

std::unique_ptr<ThreadPool> pool_;

struct Case {
    GgmlType type;
    int64_t m, k, n;
    size_t stride;
    std::vector<uint8_t> weights;
    std::vector<float> x;
    WeightView view() const { return {type, weights.data(), k, n, stride}; }
};

void setHalf(uint8_t* p, uint16_t h) { std::memcpy(p, &h, 2); }

// Random weights (padded rows) and activations. With `integral`, every
// weight block's f16 scale (and minimum scale) is 1 and the activations are
// small integers whose blocks each reach 127, so they quantize to themselves
// with scale 1: every product and sum is an exact integer in float (the
// shapes keep them below 2^24) and all kernels must agree bit for bit.
Case makeCase(GgmlType type, int64_t m, int64_t k, int64_t n, unsigned seed, bool integral) {
    std::mt19937 rng(seed);
    Case c{type, m, k, n, rowBytes(type, k) + 40, {}, {}};
    c.weights.assign(c.stride * size_t(n), 0xCD);
    const TypeTraits* tr = typeTraits(type);
    for (int64_t r = 0; r < n; ++r) {
        std::vector<uint8_t> row = randomRow(type, k, rng);
        if (integral)
            for (int64_t b = 0; b < k / tr->blockElems; ++b)
                for (int off : scaleOffsets(type)) setHalf(row.data() + size_t(b) * tr->blockBytes + off, 0x3C00);  // 1.0
        std::memcpy(c.weights.data() + size_t(r) * c.stride, row.data(), row.size());
    }
    c.x.resize(size_t(m * k));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(-3, 3);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j)
            c.x[size_t(i * k + j)] = integral ? (j % 32 == 5 ? (i + j) % 2 ? 127.0f : -127.0f : float(small(rng)))
                                              : normal(rng) * std::pow(10.0f, float(i % 5) - 2.0f);
    return c;
}

// Sum over k of |w * x|: the scale a rounding difference is measured against.
std::vector<double> magnitudes(const Case& c) {
    std::vector<double> mag(size_t(c.m * c.n));
    std::vector<float> w(size_t(c.k));
    for (int64_t r = 0; r < c.n; ++r) {
        dequantizeRow(c.type, c.weights.data() + size_t(r) * c.stride, w.data(), c.k);
        for (int64_t i = 0; i < c.m; ++i) {
            double s = 0;
            for (int64_t j = 0; j < c.k; ++j) s += std::fabs(double(w[size_t(j)]) * c.x[size_t(i * c.k + j)]);
            mag[size_t(i * c.n + r)] = s;
        }
    }
    return mag;
}

std::vector<float> vnniResult(const Case& c) {
    REQUIRE(forceTileGemm(false));  // the row kernels
    std::vector<float> y(size_t(c.m * c.n), NAN);
    matmul(c.view(), c.x.data(), c.m, y.data(), *pool_);
    return y;
}

// The emulated kernel driven as matmul drives the real one.
std::vector<float> emulatedResult(const Case& c) {
    namespace emu = detail::emulated_amx;
    const detail::TileGemmOps* legacy = emu::tileGemmLegacyOps(c.type);
    const detail::TileGemmOps& amx = legacy ? *legacy : *emu::tileGemmKOps(c.type);
    constexpr int64_t P = 2 * detail::kAmxTileRows;
    const int64_t mPadded = (c.m + P - 1) / P * P, nPairs = (c.n + P - 1) / P;
    const size_t actStride = amx.actRowBytes(c.k);
    std::vector<uint8_t> act(size_t(mPadded) * actStride, 0);
    for (int64_t i = 0; i < c.m; ++i) amx.convertAct(c.x.data() + i * c.k, act.data() + size_t(i) * actStride, c.k);
    const size_t tileBytes = amx.packedTileBytes(c.k);
    std::vector<uint8_t> packed(size_t(2 * nPairs) * tileBytes, 0xEE);
    amx.packTiles(c.weights.data(), c.stride, c.n, c.k, 0, 2 * nPairs, packed.data());
    std::vector<float> y(size_t(c.m * c.n), NAN);
    for (int64_t p = 0; p < nPairs; ++p)  // activation rows in two calls where there are enough, as matmul splits them
        for (int64_t m0 = 0; m0 < mPadded; m0 += 2 * P)
            amx.gemmTilePair(packed.data() + size_t(2 * p) * tileBytes, act.data(), actStride, m0,
                                 std::min(mPadded, m0 + 2 * P), c.m, c.k, y.data() + p * P, size_t(c.n),
                                 int(std::min(P, c.n - p * P)));
    return y;
}

int compare(const Case& c, const std::vector<float>& got, const std::vector<float>& want, bool exact, const char* what) {
    const std::vector<double> mag = exact ? std::vector<double>() : magnitudes(c);
    for (size_t i = 0; i < got.size(); ++i) {
        const std::string where = str(typeName(c.type), " m=", c.m, " k=", c.k, " n=", c.n, " [", i / size_t(c.n), ",",
                                      i % size_t(c.n), "]: ", what, " ", got[i], ", vnni ", want[i]);
        if (exact) REQUIRE_MSG(std::memcmp(&got[i], &want[i], 4) == 0, where);
        else REQUIRE_MSG(std::fabs(double(got[i]) - want[i]) <= 1e-5 * mag[i] + 1e-30, where);
    }
    return int(got.size());
}

const GgmlType kTypes[] = {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K};
struct Shape { int64_t m, k, n; };
// Whole and part tiles both ways, odd block counts, more than one work item.
const Shape kLegacyShapes[] = {{32, 640, 16}, {37, 96, 19}, {64, 640, 48}, {300, 160, 33}, {17, 2048, 5}};
const Shape kKShapes[] = {{32, 256, 16}, {37, 512, 19}, {64, 512, 48}, {300, 256, 33}, {40, 2048, 5}};

bool isK(GgmlType t) { return t == GgmlType::Q4_K || t == GgmlType::Q6_K; }
std::vector<Shape> shapesFor(GgmlType t) {
    if (isK(t)) return {std::begin(kKShapes), std::end(kKShapes)};
    return {std::begin(kLegacyShapes), std::end(kLegacyShapes)};
}
// Integer sums stay exact in float up to 512 elements with these values.
bool integralFits(const Shape& s) { return s.k <= 512 || s.m < 32; }

bool vnniHere() {
    const CpuFeatures& f = cpuFeatures();
    return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
}

} // namespace

WEIR_TEST_SUITE_SETUP(MatmulAmx) { pool_ = std::make_unique<ThreadPool>(3); }

WEIR_TEST(MatmulAmx, emulatedTilesMatchVnni) {
    if (!vnniHere()) SKIP("no AVX-512 VNNI on this CPU: the emulated kernel is built for it");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    REQUIRE(forceVnni(true));
    int exact = 0, close = 0;
    for (GgmlType t : kTypes)
        for (const Shape& s : shapesFor(t)) {
            if (integralFits(s)) {
                const Case ci = makeCase(t, s.m, s.k, s.n, unsigned(s.m * 7 + s.n), true);
                exact += compare(ci, emulatedResult(ci), vnniResult(ci), true, "emulated amx");
            }
            const Case cr = makeCase(t, s.m, s.k, s.n, unsigned(s.m * 3 + s.k), false);
            close += compare(cr, emulatedResult(cr), vnniResult(cr), false, "emulated amx");
        }
    std::printf("  emulated AMX: %d integral outputs identical to VNNI, %d random ones within 1e-5 of sum|w*x|\n", exact,
                close);
    resetKernelPath();
}

WEIR_TEST(MatmulAmx, amxMatchesVnni) {
    if (!vnniHere() || !forceTileGemm(true) || !forceAmx(true))
        SKIP("no AMX-INT8 on this CPU (or the kernel did not grant the tile state)");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    REQUIRE(forceVnni(true));
    int exact = 0, close = 0;
    for (GgmlType t : kTypes)
        for (const Shape& s : shapesFor(t)) {
            for (bool integral : {true, false}) {
                if (integral && !integralFits(s)) continue;
                const Case c = makeCase(t, s.m, s.k, s.n, unsigned(s.m + s.n + integral), integral);
                REQUIRE(forceTileGemm(true));
                REQUIRE(forceAmx(true));
                REQUIRE(amxActive());
                std::vector<float> y(size_t(c.m * c.n), NAN);
                matmul(c.view(), c.x.data(), c.m, y.data(), *pool_);
                (integral ? exact : close) += compare(c, y, vnniResult(c), integral, "amx");
            }
        }
    std::printf("  AMX: %d integral outputs identical to VNNI, %d random ones within 1e-5 of sum|w*x|\n", exact, close);
    resetKernelPath();
}

// The tile GEMM through matmul() with AVX-512 VNNI (what CPUs without AMX
// run): bit for bit the emulated AMX kernel, and so the real one.
WEIR_TEST(MatmulAmx, vnniTilesAreTheTilesBitForBit) {
    if (!vnniHere()) SKIP("no AVX-512 VNNI on this CPU");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    REQUIRE(forceVnni(true));
    int compared = 0;
    for (GgmlType t : kTypes)
        for (const Shape& s : shapesFor(t)) {
            if (s.m < 32) continue;  // matmul takes tiles from 32 rows
            const Case c = makeCase(t, s.m, s.k, s.n, unsigned(s.m * 5 + s.k), false);
            REQUIRE(forceTileGemm(true));
            forceAmx(false);
            REQUIRE(tileGemmActive() && !amxActive());
            std::vector<float> y(size_t(c.m * c.n), NAN);
            matmul(c.view(), c.x.data(), c.m, y.data(), *pool_);
            const std::vector<float> emulated = emulatedResult(c);
            REQUIRE_MSG(std::memcmp(y.data(), emulated.data(), y.size() * 4) == 0, str(typeName(t), " m=", s.m, " n=", s.n));
            compared += int(y.size());
        }
    std::printf("  %d outputs of the VNNI tile GEMM identical to the emulated AMX kernel\n", compared);
    resetKernelPath();
}

// In a step that mixes a prompt's rows (a batch of 40) with decode rows (1
// each), only the prompt's rows take the tiles (AMX where the CPU has it,
// else VNNI): every row's result is what the same rows give in a matmul of
// their own.
WEIR_TEST(MatmulAmx, onlyRowsOfLargeBatchesTakeTheTiles) {
    if (!vnniHere()) SKIP("no AVX-512 VNNI on this CPU");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    REQUIRE(forceVnni(true));
    REQUIRE(forceTileGemm(true));
    forceAmx(true);  // where it can
    for (GgmlType t : {GgmlType::Q5_0, GgmlType::Q4_K}) {
        const int64_t k = 512, n = 40, prompt = 40, m = prompt + 3;
        const Case c = makeCase(t, m, k, n, 99, false);
        std::vector<int32_t> size(size_t(m), 1), index(size_t(m), 0);
        for (int64_t i = 0; i < prompt; ++i) size[size_t(i + 1)] = int32_t(prompt), index[size_t(i + 1)] = int32_t(i);
        // Row 0 and rows 41, 42 decode; rows 1..40 are the prompt.
        const RowGroups groups{size.data(), index.data()};
        std::vector<float> y(size_t(m * n), NAN), alone(size_t(n), NAN), promptAlone(size_t(prompt * n), NAN);
        matmul(c.view(), c.x.data(), m, y.data(), *pool_, &groups);
        matmul(c.view(), c.x.data() + 1 * k, prompt, promptAlone.data(), *pool_);
        REQUIRE(std::memcmp(promptAlone.data(), y.data() + n, promptAlone.size() * 4) == 0);
        for (int64_t r : {int64_t(0), prompt + 1, prompt + 2}) {
            matmul(c.view(), c.x.data() + r * k, 1, alone.data(), *pool_);
            REQUIRE_MSG(std::memcmp(alone.data(), y.data() + r * n, alone.size() * 4) == 0, str(typeName(t), " row ", r));
        }
        // And the prompt's rows did go through the tiles: not the row kernels' results.
        REQUIRE(forceTileGemm(false));
        std::vector<float> rows(size_t(prompt * n));
        matmul(c.view(), c.x.data() + 1 * k, prompt, rows.data(), *pool_);
        REQUIRE(std::memcmp(rows.data(), promptAlone.data(), rows.size() * 4) != 0);
        REQUIRE(forceTileGemm(true));
    }
    resetKernelPath();
}
