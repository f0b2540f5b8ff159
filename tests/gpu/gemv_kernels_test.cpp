// The decode GEMV against the CPU's reference dot product (kernels::dotRowF32:
// f32 dequantization, f32 products) for every weight type, on random blocks.
// Tolerance: |gpu - cpu| <= 5e-5 * sum_k |w_k x_k| + 1e-6 (both sum f32
// products of the same dequantized values, in different orders: a few
// hundred f32 additions each, 6e-8 relative apiece in the worst case).
#include "tests/gpu/gpu_test_util.h"

#include <cmath>
#include <cstdio>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_q8.h"
#include "kernels/cpu/quantize.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weirtest;
using weir::kernels::GgmlType;

namespace {

struct Case {
    int64_t K, N;
};

// Runs W (N x K, random rows of type t) times M activation rows on the GPU and
// checks each result; returns the worst error relative to its bound.
double checkGemv(GgmlType t, int64_t K, int64_t N, int64_t M, uint32_t seed) {
    std::mt19937 rng(seed);
    const size_t rowBytes = weir::kernels::rowBytes(t, K);
    std::vector<uint8_t> w;
    for (int64_t n = 0; n < N; ++n) {
        const auto row = randomRow(t, K, rng);
        w.insert(w.end(), row.begin(), row.end());
    }
    const auto x = randomFloats(size_t(M * K), seed + 1);
    DeviceBytes dw(w), dx(x), dy(size_t(M * N) * 4, 0xFF);  // NaN-filled: unwritten outputs show
    weir::cuda::gemv(t, dw.as(), rowBytes, K, N, dx.as<float>(), M, dy.as<float>(), nullptr);
    const auto y = dy.read<float>();
    std::vector<float> deq(static_cast<size_t>(K));
    double worst = 0.0;
    for (int64_t n = 0; n < N; ++n) {
        weir::kernels::dequantizeRow(t, w.data() + n * rowBytes, deq.data(), K);
        for (int64_t m = 0; m < M; ++m) {
            const float* xm = x.data() + m * K;
            const float ref = weir::kernels::dotRowF32(t, w.data() + n * rowBytes, xm, K);
            double mag = 0.0;
            for (int64_t k = 0; k < K; ++k) mag += std::fabs(double(deq[size_t(k)]) * xm[k]);
            const double bound = 5e-5 * mag + 1e-6;
            const double err = std::fabs(double(y[size_t(m * N + n)]) - ref);
            if (!(err <= bound)) {
                FAIL(str(typeName(t), " K=", K, " N=", N, " M=", M, ": row ", n, " act ", m, ": gpu ", y[size_t(m * N + n)],
                         " cpu ", ref, " (bound ", bound, ")"));
            }
            worst = std::max(worst, err / bound);
        }
    }
    return worst;
}

// The int8-activation GEMV: exact integer products of the same weight values
// with the activations' 8-bit rounding, which moves each x_k by at most half
// its block's scale (amax / 127). Bound: sum_k |w_k| * amax_k / 254 (times
// 1.01 for the scales' own rounding) plus the f32 bound above.
double checkGemvQ8(GgmlType t, int64_t K, int64_t N, int64_t M, uint32_t seed) {
    std::mt19937 rng(seed);
    const size_t rowBytes = weir::kernels::rowBytes(t, K);
    std::vector<uint8_t> w;
    for (int64_t n = 0; n < N; ++n) {
        const auto row = randomRow(t, K, rng);
        w.insert(w.end(), row.begin(), row.end());
    }
    const auto x = randomFloats(size_t(M * K), seed + 1);
    DeviceBytes dw(w), dx(x), dq(weir::cuda::q8ActivationBytes(M, K)), dy(size_t(M * N) * 4, 0xFF);
    weir::cuda::quantizeActivations(dx.as<float>(), M, K, dq.as(), nullptr);
    weir::cuda::gemvQ8(t, dw.as(), rowBytes, K, N, dq.as(), M, dy.as<float>(), nullptr);
    const auto y = dy.read<float>();
    std::vector<float> deq(static_cast<size_t>(K));
    double worst = 0.0;
    for (int64_t n = 0; n < N; ++n) {
        weir::kernels::dequantizeRow(t, w.data() + n * rowBytes, deq.data(), K);
        for (int64_t m = 0; m < M; ++m) {
            const float* xm = x.data() + m * K;
            const float ref = weir::kernels::dotRowF32(t, w.data() + n * rowBytes, xm, K);
            double mag = 0.0, quant = 0.0;
            for (int64_t b = 0; b < K / 32; ++b) {
                float amax = 0.0f;
                for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xm[b * 32 + j]));
                for (int j = 0; j < 32; ++j) {
                    mag += std::fabs(double(deq[size_t(b * 32 + j)]) * xm[b * 32 + j]);
                    quant += std::fabs(double(deq[size_t(b * 32 + j)])) * amax / 254.0;
                }
            }
            const double bound = 1.01 * quant + 5e-5 * mag + 1e-6;
            const double err = std::fabs(double(y[size_t(m * N + n)]) - ref);
            if (!(err <= bound))
                FAIL(str(typeName(t), " (int8 activations) K=", K, " N=", N, " M=", M, ": row ", n, " act ", m, ": gpu ",
                         y[size_t(m * N + n)], " cpu ", ref, " (bound ", bound, ")"));
            worst = std::max(worst, err / bound);
        }
    }
    return worst;
}

} // namespace

WEIR_TEST(CudaGemv, int8ActivationsMatchTheCpuDot) {
    REQUIRE_CUDA_DEVICE();
    for (GgmlType t : allTypes()) {
        if (!weir::cuda::gemvQ8Supported(t)) continue;
        const bool kQuant = weir::kernels::typeTraits(t)->blockElems == 256;
        const std::vector<Case> cases = kQuant ? std::vector<Case>{{256, 5}, {2048, 37}}
                                               : std::vector<Case>{{64, 3}, {576, 37}, {2048, 19}};
        for (const Case& c : cases) {
            double worst = 0.0;
            for (int64_t M : {1, 2, 3, 4, 5, 8, 11})
                worst = std::max(worst, checkGemvQ8(t, c.K, c.N, M, uint32_t(c.K * 29 + c.N * 5 + M)));
            std::printf("  %-5s K=%-5lld N=%-3lld int8 activations: worst error %.3f of the bound\n", typeName(t),
                        (long long)c.K, (long long)c.N, worst);
        }
    }
    CHECK(!weir::cuda::gemvQ8Supported(GgmlType::F16));
    CHECK(!weir::cuda::gemvQ8Supported(GgmlType::BF16));
    CHECK(!weir::cuda::gemvQ8Supported(GgmlType::F32));
}

WEIR_TEST(CudaGemv, activationQuantizationMatchesCpuQ8_0) {
    // The same scale and rounding as kernels::quantizeRowQ8_0 (whose scale is
    // stored as f16; ours stays f32): identical int8 values.
    REQUIRE_CUDA_DEVICE();
    const int64_t M = 3, K = 256;
    auto x = randomFloats(size_t(M * K), 17, 3.0f);
    for (int j = 0; j < 32; ++j) x[size_t(32 + j)] = 0.0f;  // an all-zero block
    DeviceBytes dx(x), dq(weir::cuda::q8ActivationBytes(M, K));
    weir::cuda::quantizeActivations(dx.as<float>(), M, K, dq.as(), nullptr);
    const auto q = dq.read<uint8_t>();
    std::vector<uint8_t> ref(size_t(K / 32) * 34);
    for (int64_t m = 0; m < M; ++m) {
        weir::kernels::quantizeRowQ8_0(x.data() + m * K, ref.data(), K);
        for (int64_t b = 0; b < K / 32; ++b) {
            const uint8_t* mine = q.data() + size_t(m * (K / 32) + b) * weir::cuda::kQ8ActivationBlockBytes;
            float d;
            std::memcpy(&d, mine, 4);
            float amax = 0.0f;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[size_t(m * K + b * 32 + j)]));
            CHECK_EQ(d, amax / 127.0f);
            CHECK(std::memcmp(mine + 4, ref.data() + b * 34 + 2, 32) == 0);
        }
    }
}

WEIR_TEST(CudaGemv, everyTypeMatchesTheCpuDot) {
    REQUIRE_CUDA_DEVICE();
    for (GgmlType t : allTypes()) {
        const bool kQuant = weir::kernels::typeTraits(t)->blockElems == 256;
        // K: one super-block, several, and (for 32-blocks) a width that is not
        // a multiple of 256 (SmolLM2's 576); N: not a multiple of a block's rows.
        const std::vector<Case> cases = kQuant ? std::vector<Case>{{256, 5}, {2048, 37}}
                                               : std::vector<Case>{{64, 3}, {576, 37}, {2048, 19}};
        for (const Case& c : cases) {
            double worst = 0.0;
            for (int64_t M : {1, 2, 3, 4, 5, 8, 11})  // 11: two passes of the 8-row kernel
                worst = std::max(worst, checkGemv(t, c.K, c.N, M, uint32_t(c.K * 31 + c.N * 7 + M)));
            std::printf("  %-5s K=%-5lld N=%-3lld worst error %.3f of the bound\n", typeName(t), (long long)c.K, (long long)c.N,
                        worst);
        }
    }
}

WEIR_TEST(CudaGemv, zeroRowsLaunchesNothing) {
    REQUIRE_CUDA_DEVICE();
    DeviceBytes dw(size_t(64) * 4, 0), dx(size_t(64) * 4, 0), dy(16, 0x7F);
    weir::cuda::gemv(GgmlType::F32, dw.as(), 256, 64, 1, dx.as<float>(), 0, dy.as<float>(), nullptr);
    weir::cuda::gemv(GgmlType::F32, dw.as(), 256, 64, 0, dx.as<float>(), 1, dy.as<float>(), nullptr);
    const auto y = dy.read<uint8_t>();
    for (uint8_t b : y) CHECK_EQ(b, uint8_t(0x7F));
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
}

WEIR_TEST(CudaGemv, supportedTypes) {
    // Host-side facts, checked with the device tests.
    REQUIRE_CUDA_DEVICE();
    for (GgmlType t : allTypes()) CHECK(weir::cuda::weightTypeSupported(t, 4096));
    CHECK(!weir::cuda::weightTypeSupported(GgmlType::Q4_K, 4000));
    CHECK(!weir::cuda::weightTypeSupported(GgmlType::F32, 12));
    CHECK(!weir::cuda::weightTypeSupported(GgmlType::Q2_K, 4096));
}
