// The cuBLAS GEMM path (weights dequantized to f16 in slices, activations
// converted to f16, f32 accumulation) against the CPU's reference dot.
// Tolerance: |gpu - cpu| <= 3e-3 * sum_k |w_k x_k| + 1e-5: each product
// carries the f16 rounding of its weight (2^-11 relative, none for F16/BF16
// weights stored so) and of its activation (2^-11; bf16 activations for BF16
// weights: 2^-8, so 8e-3 there).
#include "tests/gpu/gpu_test_util.h"

#include <cublas_v2.h>

#include <cmath>
#include <cstdio>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cuda/gemm_cublas.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weirtest;
using weir::kernels::GgmlType;

WEIR_TEST(CudaGemm, everyTypeMatchesTheCpuDot) {
    REQUIRE_CUDA_DEVICE();
    cublasHandle_t h = nullptr;
    REQUIRE_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    for (GgmlType t : allTypes()) {
        const int64_t K = 512, N = 45;
        for (int64_t M : {9, 33}) {
            std::mt19937 rng(uint32_t(M * 100 + int(t)));
            const size_t rb = weir::kernels::rowBytes(t, K);
            std::vector<uint8_t> w;
            for (int64_t n = 0; n < N; ++n) {
                const auto row = randomRow(t, K, rng);
                w.insert(w.end(), row.begin(), row.end());
            }
            const auto x = randomFloats(size_t(M * K), uint32_t(M));
            DeviceBytes dw(w), dx(x), dy(size_t(M * N) * 4, 0xFF),
                scratch(weir::cuda::gemmScratchBytes(t, K, N, M));
            REQUIRE_EQ(weir::cuda::gemmCublas(h, t, dw.as(), rb, K, N, dx.as<float>(), M, dy.as<float>(), scratch.as(), nullptr),
                       CUBLAS_STATUS_SUCCESS);
            const auto y = dy.read<float>();
            std::vector<float> deq(static_cast<size_t>(K));
            const double rel = t == GgmlType::BF16 ? 8e-3 : 3e-3;
            double worst = 0.0;
            for (int64_t n = 0; n < N; ++n) {
                weir::kernels::dequantizeRow(t, w.data() + n * rb, deq.data(), K);
                for (int64_t m = 0; m < M; ++m) {
                    const float* xm = x.data() + m * K;
                    const float ref = weir::kernels::dotRowF32(t, w.data() + n * rb, xm, K);
                    double mag = 0.0;
                    for (int64_t k = 0; k < K; ++k) mag += std::fabs(double(deq[size_t(k)]) * xm[k]);
                    const double bound = rel * mag + 1e-5;
                    const double err = std::fabs(double(y[size_t(m * N + n)]) - ref);
                    CHECK_MSG(err <= bound, str(typeName(t), " M=", M, " row ", n, " act ", m, ": gpu ",
                                                y[size_t(m * N + n)], " cpu ", ref, " bound ", bound));
                    worst = std::max(worst, err / bound);
                }
            }
            std::printf("  %-5s M=%-3lld worst error %.3f of the bound\n", typeName(t), (long long)M, worst);
        }
    }
    cublasDestroy(h);
}

WEIR_TEST(CudaGemm, slicesCoverEveryRow) {
    // More rows than one 64 MiB slice of f16 holds at K = 4096 (8192 rows):
    // the second slice's rows must be right too.
    REQUIRE_CUDA_DEVICE();
    cublasHandle_t h = nullptr;
    REQUIRE_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    const int64_t K = 4096, N = 8192 + 40, M = 12;
    const GgmlType t = GgmlType::Q8_0;
    std::mt19937 rng(5);
    const size_t rb = weir::kernels::rowBytes(t, K);
    std::vector<uint8_t> w;
    for (int64_t n = 0; n < N; ++n) {
        const auto row = randomRow(t, K, rng);
        w.insert(w.end(), row.begin(), row.end());
    }
    const auto x = randomFloats(size_t(M * K), 9);
    DeviceBytes dw(w), dx(x), dy(size_t(M * N) * 4, 0xFF), scratch(weir::cuda::gemmScratchBytes(t, K, N, M));
    REQUIRE_EQ(weir::cuda::gemmCublas(h, t, dw.as(), rb, K, N, dx.as<float>(), M, dy.as<float>(), scratch.as(), nullptr),
               CUBLAS_STATUS_SUCCESS);
    const auto y = dy.read<float>();
    std::vector<float> deq(static_cast<size_t>(K));
    for (int64_t n : {int64_t(0), int64_t(8191), int64_t(8192), N - 1}) {
        weir::kernels::dequantizeRow(t, w.data() + n * rb, deq.data(), K);
        for (int64_t m = 0; m < M; ++m) {
            const float* xm = x.data() + m * K;
            const float ref = weir::kernels::dotRowF32(t, w.data() + n * rb, xm, K);
            double mag = 0.0;
            for (int64_t k = 0; k < K; ++k) mag += std::fabs(double(deq[size_t(k)]) * xm[k]);
            CHECK_NEAR(double(y[size_t(m * N + n)]), double(ref), 3e-3 * mag + 1e-5);
        }
    }
    cublasDestroy(h);
}
