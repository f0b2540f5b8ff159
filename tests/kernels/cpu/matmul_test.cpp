// matmul() on both kernel paths (forced through the test hook) against
// references built from dequantizeRow (checked against the gguf package in
// quant_rows_test) and the activation quantizers (checked against python).
#include "tests/support/weir_test.h"

#include <cstdio>

#include <cmath>
#include <cstring>
#include <memory>

#include "weir/base/error.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/weight_tiles.h"
#include "kernels/cpu/quantize.h"
#include "quant_test_util.h"

using namespace weir::kernels;
using namespace weirtest;

namespace {

// The activation format llama.cpp's CPU backend pairs with each weight type.
GgmlType actFormat(GgmlType w) {
    switch (w) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: return w;
    case GgmlType::Q4_1: case GgmlType::Q5_1: return GgmlType::Q8_1;
    case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K: return GgmlType::Q8_K;
    default: return GgmlType::Q8_0;
    }
}

float halfAt(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16ToF32(h);
}

// x as the kernel sees it after conversion (xq), and for every element the
// largest error that conversion may introduce (err), from the formulas in
// quantize.h: Q8_0/Q8_1 |x - q*f16(d)| <= d/2 + 127*d*2^-11 with d = amax/127;
// Q8_K <= |d|/2; F16 and BF16 round to nearest with 11 and 8 significant bits.
struct ConvertedRow {
    std::vector<float> xq, err;
    // Q8_1 only: per block, s - sum(xq), where s = f16(d * sum(q)) is what the
    // kernel multiplies the weight block's minimum m with in place of sum(xq).
    std::vector<double> sCorrection;
};

ConvertedRow convertRow(GgmlType act, const float* x, int64_t k) {
    ConvertedRow c;
    c.xq.resize(size_t(k));
    c.err.resize(size_t(k));
    switch (act) {
    case GgmlType::F32:
        std::memcpy(c.xq.data(), x, size_t(k) * 4);
        break;
    case GgmlType::F16:
    case GgmlType::BF16:
        for (int64_t i = 0; i < k; ++i) {
            const bool h = act == GgmlType::F16;
            c.xq[size_t(i)] = h ? f16ToF32(f32ToF16(x[i])) : bf16ToF32(f32ToBf16(x[i]));
            c.err[size_t(i)] = std::fabs(x[i]) * (h ? 0x1p-11f : 0x1p-8f) + (h ? 6e-8f : 0.0f);
        }
        break;
    case GgmlType::Q8_0:
    case GgmlType::Q8_1: {
        const bool one = act == GgmlType::Q8_1;
        const size_t bb = one ? kQ8_1BlockBytes : kQ8_0BlockBytes;
        std::vector<uint8_t> q(size_t(k / 32) * bb);
        (one ? quantizeRowQ8_1 : quantizeRowQ8_0)(x, q.data(), k);
        for (int64_t b = 0; b < k / 32; ++b) {
            const uint8_t* blk = q.data() + size_t(b) * bb;
            const float d = halfAt(blk);
            const auto* qs = reinterpret_cast<const int8_t*>(blk + (one ? 4 : 2));
            float amax = 0;
            double sum = 0;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            for (int j = 0; j < 32; ++j) {
                c.xq[size_t(b * 32 + j)] = float(qs[j]) * d;
                c.err[size_t(b * 32 + j)] = amax / 127.0f * 0.57f;
                sum += c.xq[size_t(b * 32 + j)];
            }
            if (one) c.sCorrection.push_back(double(halfAt(blk + 2)) - sum);
        }
        break;
    }
    case GgmlType::Q8_K: {
        std::vector<uint8_t> q(size_t(k / 256) * kQ8_KBlockBytes);
        quantizeRowQ8_K(x, q.data(), k);
        for (int64_t b = 0; b < k / 256; ++b) {
            const uint8_t* blk = q.data() + size_t(b) * kQ8_KBlockBytes;
            float d;
            std::memcpy(&d, blk, 4);
            const auto* qs = reinterpret_cast<const int8_t*>(blk + 4);
            for (int j = 0; j < 256; ++j) {
                c.xq[size_t(b * 256 + j)] = float(qs[j]) * d;
                c.err[size_t(b * 256 + j)] = std::fabs(d) * 0.51f;
            }
        }
        break;
    }
    default: break;
    }
    return c;
}

struct Case {
    std::vector<uint8_t> weights;  // rows at `stride` bytes
    size_t stride = 0;
    std::vector<float> x;          // M x K
    WeightView view() const { return {type, weights.data(), k, n, stride}; }
    GgmlType type;
    int64_t m, k, n;
};

Case makeCase(GgmlType type, int64_t m, int64_t k, int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    Case c;
    c.type = type;
    c.m = m;
    c.k = k;
    c.n = n;
    c.stride = rowBytes(type, k) + 24;  // padding between rows: the stride must be honoured
    c.weights.assign(c.stride * size_t(n), 0xAB);
    for (int64_t r = 0; r < n; ++r) {
        const std::vector<uint8_t> row = randomRow(type, k, rng);
        std::memcpy(c.weights.data() + size_t(r) * c.stride, row.data(), row.size());
    }
    // Activations with a different scale per row and a few outliers, like hidden states.
    std::normal_distribution<float> normal(0.0f, 1.0f);
    c.x.resize(size_t(m * k));
    for (int64_t i = 0; i < m; ++i) {
        const float scale = std::pow(10.0f, float(i % 5) - 2.0f);
        for (int64_t j = 0; j < k; ++j) c.x[size_t(i * k + j)] = normal(rng) * scale * (j % 97 == 3 ? 20.0f : 1.0f);
    }
    return c;
}

} // namespace

std::unique_ptr<ThreadPool> pool1_, pool3_;

static bool canUse(KernelPath p) {
    if (p == KernelPath::Scalar) return true;
    const CpuFeatures& f = cpuFeatures();
    return f.avx2 && f.fma && f.f16c;
}

WEIR_TEST_SUITE_SETUP(Matmul) {
    pool1_ = std::make_unique<ThreadPool>(1);
    pool3_ = std::make_unique<ThreadPool>(3);
}
WEIR_TEST_EACH_TEARDOWN(Matmul) { resetKernelPath(); }

WEIR_TEST(Matmul, dispatch_reportsAndSwitchesPath) {
    const CpuFeatures& f = cpuFeatures();
    std::printf("  CPU: avx2=%d fma=%d f16c=%d avx512f=%d avx512vnni=%d; best path %s, active path %s\n", f.avx2, f.fma,
          f.f16c, f.avx512f, f.avx512vnni, kernelPathName(bestKernelPath()), kernelPathName(activeKernelPath()));
    REQUIRE_EQ(bestKernelPath(), canUse(KernelPath::Avx2) ? KernelPath::Avx2 : KernelPath::Scalar);
    if (weirtest::environment("WEIR_KERNELS") != "scalar") REQUIRE_EQ(activeKernelPath(), bestKernelPath());
    REQUIRE(forceKernelPath(KernelPath::Scalar));
    REQUIRE_EQ(activeKernelPath(), KernelPath::Scalar);
    REQUIRE_EQ(forceKernelPath(KernelPath::Avx2), canUse(KernelPath::Avx2));
    REQUIRE_EQ(activeKernelPath(), canUse(KernelPath::Avx2) ? KernelPath::Avx2 : KernelPath::Scalar);
    if (!canUse(KernelPath::Avx2)) SKIP("this CPU has no AVX2+FMA+F16C: only the scalar path is tested");
}

struct MatmulRow {
    std::string name;
    KernelPath path;
    GgmlType type;
    int m, k, n;
};

static std::vector<MatmulRow> matmulRows() {
    std::vector<MatmulRow> rows;
    for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2}) {
        for (GgmlType t : allTypes()) {
            const int64_t be = typeTraits(t)->blockElems;
            // (M, K in blocks or elements, N): single row, odd batches, a batch past one
            // 64-row activation tile, odd N so weight tiles end part-way.
            struct Shape { int m, k, n; };
            const std::vector<Shape> shapes =
                be == 256 ? std::vector<Shape>{{1, 256, 37}, {3, 768, 19}, {17, 512, 33}, {70, 256, 5}}
                : be == 32 ? std::vector<Shape>{{1, 96, 37}, {3, 320, 19}, {17, 64, 33}, {70, 96, 5}}
                           : std::vector<Shape>{{1, 37, 37}, {3, 67, 19}, {17, 16, 33}, {70, 40, 5}};
            for (const Shape& s : shapes)
                rows.push_back({weirtest::str(kernelPathName(p), "/", typeName(t), "/M", s.m, "_K", s.k, "_N", s.n),
                                p, t, s.m, s.k, s.n});
        }
    }
    return rows;
}

WEIR_TEST(Matmul, matmul_matchesReference) {
    weirtest::eachRow(matmulRows(), [](const MatmulRow& row) {
        const int m = row.m, k = row.k, n = row.n;
        const auto kp = row.path;
        if (!canUse(kp)) SKIP("kernel path not supported by this CPU");
        REQUIRE(forceKernelPath(kp));
        const auto t = row.type;
        const Case c = makeCase(t, m, k, n, unsigned(int(row.type) * 1000 + m * 10 + n));

        std::vector<float> y1(size_t(m * n), NAN), y3(size_t(m * n), NAN);
        matmul(c.view(), c.x.data(), m, y1.data(), *pool1_);
        matmul(c.view(), c.x.data(), m, y3.data(), *pool3_);
        // Each output comes from one kernel call whatever the thread count.
        REQUIRE(std::memcmp(y1.data(), y3.data(), y1.size() * 4) == 0);

        const GgmlType act = actFormat(t);
        const bool hasMin = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
        std::vector<float> w(static_cast<size_t>(k));
        double worstTight = 0, worstLoose = 0;
        for (int i = 0; i < m; ++i) {
            const ConvertedRow xr = convertRow(act, c.x.data() + size_t(i) * size_t(k), k);
            for (int r = 0; r < n; ++r) {
                const uint8_t* wrow = c.weights.data() + size_t(r) * c.stride;
                dequantizeRow(t, wrow, w.data(), k);
                double quantized = 0, exact = 0, mag = 0, bound = 0;
                for (int j = 0; j < k; ++j) {
                    quantized += double(w[size_t(j)]) * xr.xq[size_t(j)];
                    exact += double(w[size_t(j)]) * c.x[size_t(i * k + j)];
                    mag += std::fabs(double(w[size_t(j)]) * xr.xq[size_t(j)]);
                    bound += std::fabs(double(w[size_t(j)])) * xr.err[size_t(j)];
                }
                // Q4_1/Q5_1: the kernel takes m * s for m * sum(xq) (llama.cpp's Q8_1 trick).
                if (hasMin) {
                    for (int b = 0; b < k / 32; ++b) {
                        const double mb = halfAt(wrow + size_t(b) * size_t(typeTraits(t)->blockBytes) + 2);
                        quantized += mb * xr.sCorrection[size_t(b)];
                        mag += std::fabs(mb * xr.sCorrection[size_t(b)]);
                    }
                }
                // What is left is the float rounding of the kernel's sums.
                const double tight = 5e-6 * mag + 1e-30;
                const double got = y1[size_t(i * n + r)];
                const double errTight = std::fabs(got - quantized), errLoose = std::fabs(got - exact);
                worstTight = std::max(worstTight, errTight / tight);
                worstLoose = std::max(worstLoose, errLoose / (bound + tight));
                if (errTight > tight || errLoose > bound + tight)
                    FAIL(weirtest::str("y[", i, "][", r, "] = ", got, "; with quantized activations ", quantized,
                                       " (tolerance ", tight, "); f32 dot ", exact, " (tolerance ", bound + tight, ")"));
            }
        }
        std::printf("  worst error / tolerance: %.3f against quantized activations, %.3f against f32\n", worstTight, worstLoose);
    });
}

WEIR_TEST(Matmul, matmul_scalarAndAvx2Agree) {
    if (!canUse(KernelPath::Avx2)) SKIP("no AVX2 on this CPU");
    for (GgmlType t : allTypes()) {
        const int64_t k = typeTraits(t)->blockElems == 256 ? 512 : 128;
        const Case c = makeCase(t, 5, k, 21, 99);
        std::vector<float> ys(5 * 21), ya(5 * 21);
        REQUIRE(forceKernelPath(KernelPath::Scalar));
        matmul(c.view(), c.x.data(), 5, ys.data(), *pool3_);
        REQUIRE(forceKernelPath(KernelPath::Avx2));
        matmul(c.view(), c.x.data(), 5, ya.data(), *pool3_);
        for (size_t i = 0; i < ys.size(); ++i) {
            // Same integer sums; only the order of the f32 accumulation differs.
            double mag = 0;
            std::vector<float> w(static_cast<size_t>(k));
            dequantizeRow(t, c.weights.data() + (i % 21) * c.stride, w.data(), k);
            for (int64_t j = 0; j < k; ++j) mag += std::fabs(double(w[size_t(j)]) * c.x[size_t((i / 21) * k + j)]);
            REQUIRE_MSG(std::fabs(double(ys[i]) - ya[i]) <= 2e-5 * mag + 1e-30,
                     weirtest::str(typeName(t), ": scalar ", ys[i], ", avx2 ", ya[i]));
        }
    }
}

// The AVX-512 VNNI variant of the legacy kernels (16 activation rows per
// weight row, or per pair of weight rows for Q4_0/Q5_0/Q8_0, packed once per
// matmul from 32 activation rows; 19 weight rows leave a single one in the
// last tile) gives the AVX2 variant's results bit
// for bit, for every batch size up to past its widest call; batches of 8+
// rows are how prefill runs, and the reference tests rely on exact sums.
WEIR_TEST(Matmul, matmul_vnniAndAvx2Identical) {
    if (!canUse(KernelPath::Avx2)) SKIP("no AVX2 on this CPU");
    if (!forceVnni(true)) SKIP("no AVX-512 VNNI on this CPU");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    forceTileGemm(false);  // 32+ rows would take the tile GEMM, which rounds differently (matmul_amx_test)
    int compared = 0;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0}) {
        // 19 rows: the last one alone; 32: pairs only, which from 32 activation
        // rows take the signed-weight layout with biased activations.
        for (int64_t n : {int64_t(19), int64_t(32)})
        for (int64_t m : {1, 3, 8, 9, 16, 17, 37, 64}) {
            const Case c = makeCase(t, m, 640, n, 7 + int(m + n));
            std::vector<float> yv(size_t(m * n)), ya(size_t(m * n));
            REQUIRE(forceVnni(true));
            REQUIRE(vnniActive());
            matmul(c.view(), c.x.data(), m, yv.data(), *pool3_);
            REQUIRE(forceVnni(false));
            REQUIRE(!vnniActive());
            matmul(c.view(), c.x.data(), m, ya.data(), *pool3_);
            for (size_t i = 0; i < yv.size(); ++i)
                REQUIRE_MSG(std::memcmp(&yv[i], &ya[i], sizeof(float)) == 0,
                         weirtest::str(typeName(t), " m=", m, " n=", n, " [", i, "]: vnni ", yv[i], ", avx2 ", ya[i]));
            compared += int(yv.size());
        }
    }
    std::printf("  %d outputs identical between the VNNI and AVX2 kernels\n", compared);
}

// Weights repacked at load (weight_tiles.h): the tile kernel's results are
// the unpacked kernels' up to rounding (exactly, where every sum is an exact
// integer in float), and a row's result does not depend on how many rows a
// call multiplies (what keeps speculative decoding exact). Decode and
// prefill row counts, rows not filling the last tile, a stride with padding.
WEIR_TEST(Matmul, matmul_packedTiles) {
    if (!canUse(KernelPath::Avx2)) SKIP("no AVX2 on this CPU");
    if (!forceVnni(true)) SKIP("no AVX-512 VNNI on this CPU");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    REQUIRE(forceVnni(true));
    forceTileGemm(false);
    int compared = 0;
    for (bool integral : {false, true}) {
        for (int64_t n : {int64_t(2), int64_t(19), int64_t(48)}) {
            for (int64_t m : {1, 2, 4, 5, 9, 16, 33}) {
                Case c = makeCase(GgmlType::Q8_0, m, 640, n, 11 + int(m * n));
                if (integral) {  // scales 1, activations small integers with a 127 in every block
                    for (int64_t r = 0; r < n; ++r)
                        for (int64_t b = 0; b < 20; ++b) {
                            uint8_t* blk = c.weights.data() + size_t(r) * c.stride + size_t(b) * 34;
                            blk[0] = 0x00, blk[1] = 0x3C;
                        }
                    for (int64_t i = 0; i < m * 640; ++i) c.x[size_t(i)] = i % 32 == 7 ? 127.0f : float(int(i % 7) - 3);
                }
                const WeightView plain = c.view();
                const size_t bytes = weightTilesBytes(plain);
                REQUIRE_EQ(bytes, size_t((n + 15) / 16) * 20 * 576);  // 20 blocks of (512 bytes + 16 sums + 16 scales)
                PackedBuffer buffer(bytes);
                const int64_t tiles = (n + 15) / 16;
                packWeightTiles(plain, 0, tiles / 2, buffer.data);  // in two slices, as a model packs
                packWeightTiles(plain, tiles / 2, tiles, buffer.data);
                WeightView packed = plain;
                packed.tiles = buffer.data;
                std::vector<float> yp(size_t(m * n)), yu(size_t(m * n)), one(static_cast<size_t>(n));
                matmul(plain, c.x.data(), m, yu.data(), *pool3_);
                matmul(packed, c.x.data(), m, yp.data(), *pool3_);
                std::vector<float> w(640);
                for (int64_t r = 0; r < n; ++r) {
                    dequantizeRow(GgmlType::Q8_0, c.weights.data() + size_t(r) * c.stride, w.data(), 640);
                    for (int64_t i = 0; i < m; ++i) {
                        double mag = 0;
                        for (int64_t j = 0; j < 640; ++j) mag += std::fabs(double(w[size_t(j)]) * c.x[size_t(i * 640 + j)]);
                        const size_t at = size_t(i * n + r);
                        if (integral)
                            REQUIRE_MSG(std::memcmp(&yp[at], &yu[at], 4) == 0, weirtest::str("n=", n, " m=", m, " [", i, ",", r, "]: packed ",
                                                                                             yp[at], ", unpacked ", yu[at]));
                        else
                            REQUIRE_MSG(std::fabs(double(yp[at]) - yu[at]) <= 1e-5 * mag, weirtest::str("n=", n, " m=", m, " [", i, ",", r,
                                                                                                     "]: packed ", yp[at], ", unpacked ", yu[at]));
                    }
                }
                for (int64_t i = 0; i < m; ++i) {  // each row alone: the same bits
                    matmul(packed, c.x.data() + i * 640, 1, one.data(), *pool3_);
                    REQUIRE(std::memcmp(one.data(), yp.data() + i * n, size_t(n) * 4) == 0);
                }
                compared += int(yp.size());
            }
        }
    }
    std::printf("  %d outputs of packed tiles checked against the unpacked kernels and row by row\n", compared);
    // Not worth packing: 4- and 5-bit types (their copy would be 2-3x larger),
    // and nothing without the VNNI kernels.
    REQUIRE_EQ(weightTilesBytes(makeCase(GgmlType::Q5_0, 1, 640, 4, 1).view()), size_t(0));
    REQUIRE(forceVnni(false));
    REQUIRE_EQ(weightTilesBytes(makeCase(GgmlType::Q8_0, 1, 640, 4, 1).view()), size_t(0));
}

// A few decode rows against packed weights take AMX tiles where the CPU has
// them (quant_tiles_amx.cpp): every row must keep the bits the VNNI kernel
// gives it alone, for each row count the AMX kernel takes.
WEIR_TEST(Matmul, matmul_packedTilesOnAmx) {
    if (!canUse(KernelPath::Avx2) || !forceVnni(true) || !forceTileGemm(true) || !forceAmx(true))
        SKIP("no AMX-INT8 on this CPU");
    REQUIRE(amxActive());
    int compared = 0;
    for (int64_t n : {int64_t(19), int64_t(48)}) {
        for (int64_t m = 2; m <= 9; ++m) {  // 9: past the AMX kernel's rows, back on VNNI
            Case c = makeCase(GgmlType::Q8_0, m, 640, n, 29 + int(m * n));
            const WeightView plain = c.view();
            PackedBuffer buffer(weightTilesBytes(plain));
            packWeightTiles(plain, 0, (n + 15) / 16, buffer.data);
            WeightView packed = plain;
            packed.tiles = buffer.data;
            std::vector<float> together(size_t(m * n)), alone(static_cast<size_t>(n));
            matmul(packed, c.x.data(), m, together.data(), *pool3_);
            for (int64_t i = 0; i < m; ++i) {
                matmul(packed, c.x.data() + i * 640, 1, alone.data(), *pool3_);
                REQUIRE_MSG(std::memcmp(alone.data(), together.data() + i * n, size_t(n) * 4) == 0,
                            weirtest::str("n=", n, " m=", m, " row ", i, ": ", together[size_t(i * n)], " vs ", alone[0], " alone"));
                compared += int(n);
            }
        }
    }
    std::printf("  %d outputs of AMX rows checked against the VNNI kernel row by row\n", compared);
}

// The same for the K-quant kernels in each of the float orders matmul picks
// (llama.cpp's row dot, its Q4_K four-row and one-row kernels, its tiled
// kernel): Q4_K with 16 weight rows takes the four-row/one-row pair (AVX2
// kernels either way), other matrices the row dot below 8 activation rows and
// the tiled kernel from 8.
WEIR_TEST(Matmul, matmul_vnniAndAvx2Identical_kQuants) {
    if (!canUse(KernelPath::Avx2)) SKIP("no AVX2 on this CPU");
    if (!forceVnni(true)) SKIP("no AVX-512 VNNI on this CPU");
    REQUIRE(forceKernelPath(KernelPath::Avx2));
    forceTileGemm(false);  // 32+ rows would take the tile GEMM, which rounds differently (matmul_amx_test)
    int compared = 0;
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        for (int64_t n : {16, 19}) {
            for (int64_t m : {1, 3, 4, 5, 8, 9, 13, 37}) {
                const Case c = makeCase(t, m, 512, n, 11 + int(m) + int(n));
                std::vector<float> yv(size_t(m * n)), ya(size_t(m * n));
                REQUIRE(forceVnni(true));
                matmul(c.view(), c.x.data(), m, yv.data(), *pool3_);
                REQUIRE(forceVnni(false));
                matmul(c.view(), c.x.data(), m, ya.data(), *pool3_);
                for (size_t i = 0; i < yv.size(); ++i)
                    REQUIRE_MSG(std::memcmp(&yv[i], &ya[i], sizeof(float)) == 0,
                                weirtest::str(typeName(t), " n=", n, " m=", m, " [", i, "]: vnni ", yv[i], ", avx2 ", ya[i]));
                compared += int(yv.size());
            }
        }
    }
    std::printf("  %d K-quant outputs identical between the VNNI and AVX2 kernels\n", compared);
}

WEIR_TEST(Matmul, dotQ8_0_matchesQuantizedDot) {
    for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2}) {
        if (!canUse(p)) continue;
        REQUIRE(forceKernelPath(p));
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const int64_t k = 256;
        std::vector<float> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
        for (auto& v : a) v = normal(rng);
        for (auto& v : b) v = normal(rng) * 0.1f;
        const ConvertedRow qa = convertRow(GgmlType::Q8_0, a.data(), k), qb = convertRow(GgmlType::Q8_0, b.data(), k);
        std::vector<uint8_t> ba(size_t(k / 32) * kQ8_0BlockBytes), bb(ba.size());
        quantizeRowQ8_0(a.data(), ba.data(), k);
        quantizeRowQ8_0(b.data(), bb.data(), k);
        double exact = 0, mag = 0;
        for (int64_t j = 0; j < k; ++j) {
            exact += double(qa.xq[size_t(j)]) * qb.xq[size_t(j)];
            mag += std::fabs(double(qa.xq[size_t(j)]) * qb.xq[size_t(j)]);
        }
        REQUIRE(std::fabs(dotQ8_0(ba.data(), bb.data(), k) - exact) <= 2e-5 * mag);
    }
}

WEIR_TEST(Matmul, matmul_badInput_throws) {
    const uint8_t zeros[256] = {};
    float x[64] = {}, y[4];
    const WeightView q2{GgmlType::Q2_K, zeros, 256, 1, 84};
    REQUIRE(!matmulSupports(GgmlType::Q2_K, 256));
    REQUIRE(!matmulSupports(GgmlType::Q4_K, 640));  // rows must hold whole super-blocks
    REQUIRE(matmulSupports(GgmlType::Q5_0, 640));
    REQUIRE_THROWS(weir::Error, matmul(q2, x, 1, y, *pool1_));
    const WeightView odd{GgmlType::Q8_0, zeros, 48, 1, 34};
    REQUIRE_THROWS(weir::Error, matmul(odd, x, 1, y, *pool1_));
}
