// Row operations checked against straightforward double-precision formulas.
#include "tests/support/test_files.h"
#include "tests/support/paged_store.h"
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/ops_simd.h"
#include "kernels/cpu/cpu_features.h"

using namespace weir::kernels;
using weirtest::PagedStore;

namespace {

std::vector<float> randomVec(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

double geluExact(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}


void dequantizeRowForTest(const uint8_t* q, float* y, int64_t n) {
    // Independent of the kernels' dequantizer: d (f16) then 32 int8.
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = q + b * 34;
        const float d = f16ToF32(uint16_t(blk[0] | (blk[1] << 8)));
        for (int j = 0; j < 32; ++j) y[b * 32 + j] = d * float(int8_t(blk[2 + j]));
    }
}

struct PathRow {
    const char* name;
    bool scalar;
};
std::vector<PathRow> pathRows() { return {{"simd", false}, {"scalar", true}}; }

// Back to the CPU's own kernel path when a row ends, however it ends.
struct ResetKernelPathOnExit {
    ~ResetKernelPathOnExit() { resetKernelPath(); }
};

} // namespace

WEIR_TEST(Ops, rmsNormMatchesFormula) {
    const int64_t n = 640;
    auto x = randomVec(n, 1, 3.0f), w = randomVec(n, 2);
    std::vector<float> y(n);
    rmsNorm(x.data(), w.data(), y.data(), n, 1e-6f);
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
    for (int64_t i = 0; i < n; ++i) REQUIRE(std::fabs(y[i] - x[i] * inv * w[i]) < 1e-5 * (1 + std::fabs(x[i] * inv * w[i])));
    // In place, no weight.
    std::vector<float> z = x;
    rmsNorm(z.data(), nullptr, z.data(), n, 1e-6f);
    for (int64_t i = 0; i < n; ++i) REQUIRE(std::fabs(z[i] - x[i] * inv) < 1e-5 * (1 + std::fabs(x[i] * inv)));
}

// Rows normalised together get each row's own rmsNorm bits: any row count
// (groups of 8 and the rest), with and without weights, in place, on both paths.
WEIR_TEST(Ops, rmsNormRowsEqualsRmsNormPerRow) {
    const ResetKernelPathOnExit restore;
    for (KernelPath path : {KernelPath::Avx2, KernelPath::Scalar}) {
        if (!forceKernelPath(path)) continue;
        for (int64_t n : {64, 256, 640, 2048}) {
            for (int64_t rows : {1, 3, 8, 11, 19}) {
                // Rows of very different sizes, so the double sums round.
                std::vector<float> x = randomVec(size_t(rows * n), uint32_t(n + rows), 1.0f), w = randomVec(size_t(n), 5);
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t i = 0; i < n; ++i) x[size_t(r * n + i)] *= std::ldexp(1.0f, int((r * 7 + i) % 41) - 20);
                for (const float* weights : {static_cast<const float*>(w.data()), static_cast<const float*>(nullptr)}) {
                    std::vector<float> want(x.size()), got = x;
                    for (int64_t r = 0; r < rows; ++r) rmsNorm(x.data() + r * n, weights, want.data() + r * n, n, 1e-6f);
                    rmsNormRows(got.data(), weights, got.data(), rows, n, 1e-6f);  // in place
                    REQUIRE_MSG(std::memcmp(got.data(), want.data(), got.size() * 4) == 0,
                                weirtest::str("rows ", rows, " of ", n, weights ? " with" : " without", " weights"));
                }
                // The float results hardly ever show a double sum's last bits:
                // check the sums themselves against rmsNorm's sequential chain.
                if (path == KernelPath::Avx2 && rows >= ops_avx2::kSquareSumRows) {
                    double sums[ops_avx2::kSquareSumRows];
                    ops_avx2::squareSums(x.data(), n, n, sums);
                    for (int r = 0; r < ops_avx2::kSquareSumRows; ++r) {
                        double chain = 0.0;
                        for (int64_t i = 0; i < n; ++i) chain += double(x[size_t(r * n + i)] * x[size_t(r * n + i)]);
                        REQUIRE_MSG(std::memcmp(&chain, &sums[r], sizeof chain) == 0, weirtest::str("sum of row ", r, " of ", n));
                    }
                }
            }
        }
    }
}

// Rows a stride apart (one head of consecutive tokens) get each row's own
// rmsNorm bits too, and the values between them are left alone.
WEIR_TEST(Ops, rmsNormRowsStridedEqualsRmsNormPerRow) {
    const ResetKernelPathOnExit restore;
    for (KernelPath path : {KernelPath::Avx2, KernelPath::Scalar}) {
        if (!forceKernelPath(path)) continue;
        const int64_t n = 256, stride = 4 * n + 32;
        for (int64_t rows : {1, 3, 8, 11, 17}) {
            std::vector<float> x = randomVec(size_t(rows * stride), uint32_t(rows), 1.0f), w = randomVec(size_t(n), 9);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t i = 0; i < n; ++i) x[size_t(r * stride + i)] *= std::ldexp(1.0f, int((r * 5 + i) % 37) - 18);
            for (const float* weights : {static_cast<const float*>(w.data()), static_cast<const float*>(nullptr)}) {
                std::vector<float> want = x, got = x;
                for (int64_t r = 0; r < rows; ++r)
                    rmsNorm(x.data() + r * stride, weights, want.data() + r * stride, n, 1e-6f);
                rmsNormRowsStrided(got.data(), weights, got.data(), rows, n, stride, 1e-6f);  // in place
                REQUIRE_MSG(std::memcmp(got.data(), want.data(), got.size() * 4) == 0,
                            weirtest::str("rows ", rows, " at stride ", stride, weights ? " with" : " without", " weights"));
            }
        }
    }
}

WEIR_TEST(Ops, ropeNeoxAndNormal) {
    const int64_t headDim = 64;
    const int32_t nRot = 48;  // partial rotation: the last 16 dims pass through
    for (bool neox : {true, false}) {
        for (int32_t pos : {0, 1, 17, 4095}) {
            RopeParams p;
            p.neox = neox;
            p.nRot = nRot;
            p.base = 10000.0f;
            p.freqScale = 0.5f;
            std::vector<float> cs(nRot);
            ropeAngles(p, pos, cs.data());
            auto x = randomVec(2 * headDim, 10 + pos);
            auto y = x;
            ropeApply(y.data(), 2, headDim, nRot, neox, cs.data());
            for (int h = 0; h < 2; ++h) {
                const float* a = x.data() + h * headDim;
                const float* b = y.data() + h * headDim;
                for (int i = 0; i < nRot / 2; ++i) {
                    const double theta = pos * 0.5 * std::pow(10000.0, -2.0 * i / nRot);
                    const int i0 = neox ? i : 2 * i, i1 = neox ? i + nRot / 2 : 2 * i + 1;
                    const double e0 = a[i0] * std::cos(theta) - a[i1] * std::sin(theta);
                    const double e1 = a[i0] * std::sin(theta) + a[i1] * std::cos(theta);
                    // Angles are stepped in float like the reference; allow for that at large pos.
                    const double tol = 1e-5 + 2e-7 * pos;
                    REQUIRE_MSG(std::fabs(b[i0] - e0) < tol, weirtest::str("pos ", pos, " i ", i));
                    REQUIRE(std::fabs(b[i1] - e1) < tol);
                }
                for (int i = nRot; i < headDim; ++i) REQUIRE_EQ(b[i], a[i]);
            }
        }
    }
}

WEIR_TEST(Ops, ropeFreqFactorsDivideTheta) {
    RopeParams p;
    p.nRot = 8;
    p.base = 500000.0f;
    std::vector<float> ff = {1.0f, 2.0f, 4.0f, 8.0f};
    p.freqFactors = ff.data();
    std::vector<float> cs(8);
    ropeAngles(p, 100, cs.data());
    for (int i = 0; i < 4; ++i) {
        const double theta = 100.0 * std::pow(500000.0, -2.0 * i / 8) / ff[i];
        REQUIRE(std::fabs(cs[2 * i] - std::cos(theta)) < 1e-5);
        REQUIRE(std::fabs(cs[2 * i + 1] - std::sin(theta)) < 1e-5);
    }
}

WEIR_TEST(Ops, geluAndGeglu) {
    weirtest::eachRow(pathRows(), [](const PathRow& row) {
        const bool scalar = row.scalar;
        if (!scalar && bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
        REQUIRE(forceKernelPath(scalar ? KernelPath::Scalar : KernelPath::Avx2));
        const ResetKernelPathOnExit restore;
        for (float x : {-12.0f, -3.0f, -0.5f, 0.0f, 0.3f, 1.0f, 2.5f, 9.9f}) REQUIRE(std::fabs(geluTanh(x) - geluExact(x)) < 1e-6 * (1 + std::fabs(x)));
        const int64_t n = 1003;  // odd length exercises the tail
        auto g = randomVec(n, 3, 4.0f), u = randomVec(n, 4);
        g[0] = -11.0f;
        g[1] = 12.0f;
        std::vector<float> y(n);
        gegluF16Table(g.data(), u.data(), y.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            const double e = geluExact(g[i]) * u[i];
            // Input and output are rounded to f16: relative error ~1e-3.
            REQUIRE_MSG(std::fabs(y[i] - e) < 2e-3 * (std::fabs(e) + std::fabs(u[i]) * 1e-2) + 1e-6,
                     weirtest::str("i ", i, " g ", g[i], " y ", y[i], " e ", e));
        }
        REQUIRE_EQ(y[0], 0.0f);
        REQUIRE_EQ(y[1], 12.0f * u[1]);
    });
}

WEIR_TEST(Ops, geluTableMatchesLlamaCpp) {
    // Every finite entry of llama.cpp's table (tests/reference/make_gelu_table_reference.py).
    const auto file = weirtest::readFile(weirtest::environment("WEIR_TEST_DATA") + "/reference/gelu_f16_table.u16");
    REQUIRE_MSG(file.has_value(), "reference table missing");
    const std::string& ref = *file;
    REQUIRE_EQ(ref.size(), 65536 * 2);
    const uint16_t* ours = geluF16Table();
    int differ = 0;
    for (uint32_t i = 0; i < 65536; ++i) {
        if (((i >> 10) & 31) == 31) continue;  // inf/NaN inputs
        const uint16_t r = uint16_t(uint8_t(ref[2 * i]) | (uint8_t(ref[2 * i + 1]) << 8));
        if (ours[i] != r && differ++ < 5) std::printf("  f16 input %04x: %04x vs reference %04x\n", unsigned(i), unsigned(ours[i]), unsigned(r));
    }
    REQUIRE_EQ(differ, 0);
}

WEIR_TEST(Ops, expApproxIsCloseAndSaturates) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-87.0f, 88.0f);
    double worst = 0;
    for (int i = 0; i < 100000; ++i) {
        const float x = u(rng);
        const double e = std::exp(double(x));
        worst = std::max(worst, std::fabs(expApprox(x) - e) / e);
    }
    std::printf("  expApprox worst relative error %.2e\n", worst);
    REQUIRE(worst < 3e-7);
    REQUIRE_EQ(expApprox(0.0f), 1.0f);
    REQUIRE_EQ(expApprox(-200.0f), 0.0f);
    REQUIRE(std::isinf(expApprox(200.0f)));
    REQUIRE(expApprox(-100.0f) > 0.0f && expApprox(-100.0f) < 1e-43f);  // subnormal range, split scaling
}

WEIR_TEST(Ops, swigluSimdAndScalarAgreeBitForBit) {
    if (bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
    const ResetKernelPathOnExit restore;
    const int64_t n = 1027;
    auto g = randomVec(n, 12, 6.0f), up = randomVec(n, 13);
    g[5] = -150.0f;
    g[6] = 120.0f;
    std::vector<float> a(n), b(n);
    REQUIRE(forceAvx512Variants(false));  // the AVX2 build's SwiGLU, which the scalar path mirrors
    swiglu(g.data(), up.data(), a.data(), n);
    REQUIRE(forceKernelPath(KernelPath::Scalar));
    swiglu(g.data(), up.data(), b.data(), n);
    for (int64_t i = 0; i < n; ++i) REQUIRE_EQ(a[i], b[i]);
}

// llama.cpp's AVX-512 build: blocks of 16 through its AVX-512 expf (the
// polynomial's 1 added before the scaling by 2^n), the tail through libm.
WEIR_TEST(Ops, swigluFollowsTheAvx512BuildWhenAsked) {
    if (!forceAvx512Variants(true)) SKIP("no AVX2 on this CPU");
    const ResetKernelPathOnExit restore;
    const int64_t n = 1027;  // 64 blocks of 16 and a tail of 3
    auto g = randomVec(n, 12, 6.0f), up = randomVec(n, 13);
    g[5] = -150.0f;  // 2^n out of the normal range: the scalar lanes
    g[6] = 120.0f;
    g[7] = -87.0f;
    std::vector<float> y(n);
    swiglu(g.data(), up.data(), y.data(), n);
    size_t differFromAvx2 = 0;
    for (int64_t i = 0; i < n; ++i) {
        const bool block = i < n - n % 16;
        const float e = block ? expApprox512(0.0f - g[i]) : std::exp(-g[i]);
        REQUIRE_EQ(y[i], g[i] / (1.0f + e) * up[i]);
        differFromAvx2 += y[i] != g[i] / (1.0f + expApprox(0.0f - g[i])) * up[i];
    }
    std::printf("  %zu of %lld values differ from the AVX2 build's\n", differFromAvx2, (long long)n);
    REQUIRE(differFromAvx2 > 0);  // the two expf variants do round differently
}

WEIR_TEST(Ops, expApprox512IsCloseAndSaturates) {
    double worst = 0;
    for (float x = -87.0f; x < 88.0f; x += 0.173f) {
        const double e = std::exp(double(x));
        worst = std::max(worst, std::fabs(expApprox512(x) - e) / e);
    }
    std::printf("  expApprox512 worst relative error %.2e\n", worst);
    REQUIRE(worst < 3e-7);
    REQUIRE_EQ(expApprox512(0.0f), 1.0f);
    REQUIRE_EQ(expApprox512(-200.0f), 0.0f);
    REQUIRE(std::isinf(expApprox512(200.0f)));
    REQUIRE(expApprox512(-100.0f) > 0.0f && expApprox512(-100.0f) < 1e-43f);  // subnormal, one rounding
}

// Scores are summed in llama.cpp's lane order, which decides the last bit.
// Products 1 (element 0) and 2^-24 (elements 2 and 3): llama.cpp's AVX-512
// build reduces its 16 lanes as ((l0 + l2) + (l1 + l3)) after folding them to
// 4, so 1 + 2^-24 rounds to 1 before the second 2^-24 comes; the AVX2 build
// adds (l0 + l1) + (l2 + l3) = 1 + 2^-23. A large scale turns that last bit
// into different attention weights for two keys whose exact scores are 1 and 1.
WEIR_TEST(Ops, attentionScoresSumInTheLaneOrderOfTheBuild) {
    if (bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
    const ResetKernelPathOnExit restore;
    const int64_t dk = 64, dv = 32;
    const int32_t pageSize = 16;
    PagedStore ks(GgmlType::F16, dk, 2, pageSize), vs(GgmlType::F16, dv, 2, pageSize);
    std::vector<float> q(dk, 0.0f), k0(dk, 0.0f), k1(dk, 0.0f), v0(dv, 1.0f), v1(dv, 0.0f);
    q[0] = k0[0] = k1[0] = 1.0f;
    q[2] = q[3] = k0[2] = k0[3] = 0x1p-12f;  // products 2^-24, exact in f16
    REQUIRE(storeKvRow(GgmlType::F16, k0.data(), ks.row(0), dk));
    REQUIRE(storeKvRow(GgmlType::F16, k1.data(), ks.row(1), dk));
    REQUIRE(storeKvRow(GgmlType::F16, v0.data(), vs.row(0), dv));
    REQUIRE(storeKvRow(GgmlType::F16, v1.data(), vs.row(1), dv));
    const float scale = 0x1p22f;  // 2^-23 of score difference -> 0.5 of logit
    std::vector<float> scratch(attendScratchFloats(dk, dv)), out(dv);

    REQUIRE(forceAvx512Variants(true));
    attendHead(q.data(), dk, dv, ks.view(0), vs.view(0), 0, 1, scale, out.data(), scratch.data());
    for (float o : out) REQUIRE_EQ(o, 0.5f);  // equal scores, equal weights

    REQUIRE(forceAvx512Variants(false));
    attendHead(q.data(), dk, dv, ks.view(0), vs.view(0), 0, 1, scale, out.data(), scratch.data());
    const double w = 1.0 / (1.0 + std::exp(-0.5));  // key 0 scores 0.5 higher
    for (float o : out) REQUIRE(std::fabs(o - w) < 1e-3);
}

WEIR_TEST(Ops, swigluAndSoftmax) {
    const int64_t n = 77;
    auto g = randomVec(n, 5, 3.0f), u = randomVec(n, 6);
    std::vector<float> y(n);
    swiglu(g.data(), u.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
        const double e = g[i] / (1.0 + std::exp(-double(g[i]))) * u[i];
        REQUIRE(std::fabs(y[i] - e) < 1e-5 * (1 + std::fabs(e)));
    }
    auto s = randomVec(n, 7, 5.0f);
    s[3] = -INFINITY;
    auto t = s;
    softmax(t.data(), n);
    double mx = -1e30, z = 0;
    for (float v : s) if (std::isfinite(v)) mx = std::max<double>(mx, v);
    for (float v : s) if (std::isfinite(v)) z += std::exp(v - mx);
    for (int64_t i = 0; i < n; ++i) {
        const double e = std::isfinite(s[i]) ? std::exp(s[i] - mx) / z : 0.0;
        REQUIRE(std::fabs(t[i] - e) < 1e-6);
    }
}

WEIR_TEST(Ops, q8_0RoundTrip) {
    weirtest::eachRow(pathRows(), [](const PathRow& row) {
        const bool scalar = row.scalar;
        if (!scalar && bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
        REQUIRE(forceKernelPath(scalar ? KernelPath::Scalar : KernelPath::Avx2));
        const ResetKernelPathOnExit restore;
        const int64_t n = 256;
        auto x = randomVec(n, 8, 2.0f);
        for (int i = 32; i < 64; ++i) x[i] = 0.0f;  // an all-zero block
        std::vector<uint8_t> q(rowBytes(GgmlType::Q8_0, n));
        REQUIRE(storeKvRow(GgmlType::Q8_0, x.data(), q.data(), n));
        std::vector<float> back(n);
        dequantizeRowForTest(q.data(), back.data(), n);
        for (int64_t b = 0; b < n / 32; ++b) {
            float amax = 0;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            for (int j = 0; j < 32; ++j) REQUIRE(std::fabs(back[b * 32 + j] - x[b * 32 + j]) <= amax / 127.0f * 0.51f + 1e-3f * amax / 127.0f);
        }
    });
}

struct AttentionRow {
    std::string name;
    GgmlType type;
    bool scalar;
};

WEIR_TEST(Ops, attentionMatchesNaive) {
    std::vector<AttentionRow> table;
    for (bool scalar : {false, true}) {
        const char* s = scalar ? "-scalar" : "-simd";
        table.push_back({std::string("f32") + s, GgmlType::F32, scalar});
        table.push_back({std::string("f16") + s, GgmlType::F16, scalar});
        table.push_back({std::string("q8_0") + s, GgmlType::Q8_0, scalar});
    }
    weirtest::eachRow(table, [](const AttentionRow& row) {
        const bool scalar = row.scalar;
        if (!scalar && bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
        REQUIRE(forceKernelPath(scalar ? KernelPath::Scalar : KernelPath::Avx2));
        const ResetKernelPathOnExit restore;
        const auto t = row.type;
        const int64_t dk = 128, dv = 96, nKvHead = 2;
        const int32_t nPos = 70, pageSize = 16;
        PagedStore ks(t, dk * nKvHead, nPos, pageSize), vs(t, dv * nKvHead, nPos, pageSize);
        std::vector<std::vector<float>> K(nPos), V(nPos);
        for (int32_t p = 0; p < nPos; ++p) {
            K[p] = randomVec(dk * nKvHead, 100 + p);
            V[p] = randomVec(dv * nKvHead, 300 + p);
            REQUIRE(storeKvRow(t, K[p].data(), ks.row(p), dk * nKvHead));
            REQUIRE(storeKvRow(t, V[p].data(), vs.row(p), dv * nKvHead));
        }
        const auto q = randomVec(dk, 999, 0.3f);
        std::vector<float> scratch(attendScratchFloats(dk, dv)), out(dv);
        const size_t elemBytes = t == GgmlType::F32 ? 4 : 2;
        for (int64_t head : {0, 1}) {
            for (auto [first, last] : {std::pair{0, 0}, std::pair{0, 69}, std::pair{37, 52}}) {
                const size_t kOff = t == GgmlType::Q8_0 ? head * dk / 32 * 34 : head * dk * elemBytes;
                const size_t vOff = t == GgmlType::Q8_0 ? head * dv / 32 * 34 : head * dv * elemBytes;
                attendHead(q.data(), dk, dv, ks.view(kOff), vs.view(vOff), first, last, 0.125f, out.data(), scratch.data());
                std::vector<double> w;
                double mx = -1e300;
                for (int32_t p = first; p <= last; ++p) {
                    double s = 0;
                    for (int64_t i = 0; i < dk; ++i) s += double(q[i]) * K[p][head * dk + i];
                    w.push_back(s * 0.125);
                    mx = std::max(mx, w.back());
                }
                double z = 0;
                for (double& x : w) z += (x = std::exp(x - mx));
                const double tol = t == GgmlType::F32 ? 1e-5 : t == GgmlType::F16 ? 3e-3 : 2e-2;
                for (int64_t i = 0; i < dv; ++i) {
                    double e = 0;
                    for (int32_t p = first; p <= last; ++p) e += w[p - first] / z * V[p][head * dv + i];
                    REQUIRE_MSG(std::fabs(out[i] - e) < tol, weirtest::str("head ", head, " [", first, ",", last, "] i ", i, ": ", out[i], " vs ", e));
                }
            }
        }
    });
}

// Flash decoding: a query's positions in parts (each its own thread in the
// CPU backend), merged. One part is attendHead bit for bit; more parts round
// differently (an f16 V accumulator rounds per part) but stay within what
// the f16 and Q8_0 caches round anyway.
WEIR_TEST(Ops, attentionInPartsMergesToTheWhole) {
    std::vector<AttentionRow> table;
    for (bool scalar : {false, true}) {
        const char* s = scalar ? "-scalar" : "-simd";
        table.push_back({std::string("f32") + s, GgmlType::F32, scalar});
        table.push_back({std::string("f16") + s, GgmlType::F16, scalar});
        table.push_back({std::string("q8_0") + s, GgmlType::Q8_0, scalar});
    }
    weirtest::eachRow(table, [](const AttentionRow& row) {
        if (!row.scalar && bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
        REQUIRE(forceKernelPath(row.scalar ? KernelPath::Scalar : KernelPath::Avx2));
        const ResetKernelPathOnExit restore;
        const auto t = row.type;
        const int64_t dk = 128, dv = 96;
        const int32_t nPos = 300, pageSize = 16;
        PagedStore ks(t, dk, nPos, pageSize), vs(t, dv, nPos, pageSize);
        for (int32_t p = 0; p < nPos; ++p) {
            REQUIRE(storeKvRow(t, randomVec(dk, 500 + p).data(), ks.row(p), dk));
            REQUIRE(storeKvRow(t, randomVec(dv, 900 + p).data(), vs.row(p), dv));
        }
        const auto q = randomVec(dk, 77, 0.5f);
        std::vector<float> scratch(attendScratchFloats(dk, dv)), whole(dv), merged(dv);
        for (auto [first, last] : {std::pair{0, 299}, std::pair{45, 260}}) {
            attendHead(q.data(), dk, dv, ks.view(0), vs.view(0), first, last, 0.125f, whole.data(), scratch.data());
            for (int parts = 1; parts <= 5; ++parts) {
                std::vector<AttendPart> state(static_cast<size_t>(parts));
                std::vector<float> accs(size_t(parts * dv));
                const int32_t keys = last - first + 1;
                for (int i = 0; i < parts; ++i)
                    state[size_t(i)] = attendHeadPart(q.data(), dk, dv, ks.view(0), vs.view(0), first + keys * i / parts,
                                                      first + keys * (i + 1) / parts - 1, 0.125f, accs.data() + i * dv,
                                                      scratch.data());
                mergeAttendParts(state.data(), accs.data(), parts, dv, merged.data());
                const double tol = parts == 1 ? 0.0 : t == GgmlType::F16 ? 2e-3 : 1e-5;
                for (int64_t i = 0; i < dv; ++i)
                    REQUIRE_MSG(std::fabs(double(merged[size_t(i)]) - whole[size_t(i)]) <= tol,
                                weirtest::str(parts, " parts of [", first, ",", last, "] value ", i, ": ", merged[size_t(i)],
                                              " vs ", whole[size_t(i)]));
            }
        }
    });
}

// Greedy decoding's argmax: the lowest index among the largest, NaN skipped,
// on every kernel path, wherever in a vector-sized group the winner sits.
WEIR_TEST(Ops, argmaxTakesTheFirstLargestAndSkipsNaN) {
    const ResetKernelPathOnExit restore;
    const float nan = std::nanf(""), inf = INFINITY;
    for (KernelPath path : {KernelPath::Scalar, KernelPath::Avx2}) {
        if (!forceKernelPath(path)) continue;
        for (int64_t n : {1, 7, 8, 33, 262144 + 5}) {
            for (int64_t at : {int64_t(0), n / 2, n - 1}) {
                auto v = randomVec(size_t(n), uint32_t(n + at));
                v[size_t(at)] = 50.0f;
                if (at + 3 < n) v[size_t(at + 3)] = 50.0f;  // a tie later: the first wins
                if (at > 0) v[0] = nan;                      // NaN compares false: never picked
                REQUIRE_EQ(argmaxF32(v.data(), n), at);
            }
        }
        std::vector<float> allNan(40, nan), negInf(40, -inf);
        REQUIRE_EQ(argmaxF32(allNan.data(), 40), 0);
        negInf[0] = nan;
        REQUIRE_EQ(argmaxF32(negInf.data(), 40), 1);  // -inf is a value, NaN is not
        std::vector<float> withInf = randomVec(40, 3);
        withInf[37] = inf;
        withInf[39] = nan;
        REQUIRE_EQ(argmaxF32(withInf.data(), 40), 37);
        REQUIRE_EQ(argmaxF32(withInf.data(), 0), 0);
    }
}
