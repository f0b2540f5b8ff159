// The row kernels (RMSNorm, GLUs, element-wise ops, row gather, embedding
// lookup and f16 dequantization) against the CPU kernels of kernels/cpu.
#include "tests/gpu/gpu_test_util.h"

#include <cmath>
#include <cstdio>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/dequantize.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/norm.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weirtest;
using weir::kernels::GgmlType;

namespace {

float maxAbs(const std::vector<float>& v) {
    float m = 0.0f;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

} // namespace

// Relative 5e-6: the GPU sums squares in f32 (32 per thread, then a tree)
// where the CPU sums in double; the scale's relative error is half the sum's.
WEIR_TEST(CudaRowKernels, rmsNormMatchesCpu) {
    REQUIRE_CUDA_DEVICE();
    for (int64_t width : {64, 576, 2304, 16384}) {
        const int64_t rows = 5;
        const auto x = randomFloats(size_t(rows * width), uint32_t(width), 3.0f);
        const auto w = randomFloats(size_t(width), uint32_t(width + 1));
        DeviceBytes dx(x), dw(w), dy(x.size() * 4, 0xFF);
        weir::cuda::rmsNormRows(dx.as<float>(), dw.as<float>(), dy.as<float>(), rows, width, 1e-6f, nullptr);
        weir::cuda::rmsNormRows(dx.as<float>(), nullptr, dx.as<float>(), rows, width, 1e-6f, nullptr);  // in place, no weight
        const auto y = dy.read<float>(), yInPlace = dx.read<float>();
        std::vector<float> ref(x.size()), refNoW(x.size());
        for (int64_t r = 0; r < rows; ++r) {
            weir::kernels::rmsNorm(x.data() + r * width, w.data(), ref.data() + r * width, width, 1e-6f);
            weir::kernels::rmsNorm(x.data() + r * width, nullptr, refNoW.data() + r * width, width, 1e-6f);
        }
        for (size_t i = 0; i < x.size(); ++i) {
            CHECK_NEAR(y[i], ref[i], 5e-6 * std::fabs(ref[i]) + 1e-7);
            CHECK_NEAR(yInPlace[i], refNoW[i], 5e-6 * std::fabs(refNoW[i]) + 1e-7);
        }
    }
    weir::cuda::rmsNormRows(nullptr, nullptr, nullptr, 0, 64, 1e-6f, nullptr);  // zero rows: nothing launched
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
}

// GeGLU: the CPU rounds gelu to f16 (its table); tanhf may differ from
// glibc's in the last bit, which can move the f16 rounding by one f16 ulp
// (2^-11 relative). SwiGLU: expf and the CPU's e^x approximation are each
// within 2 ulp: 2e-6 relative.
WEIR_TEST(CudaRowKernels, glusMatchCpu) {
    REQUIRE_CUDA_DEVICE();
    const int64_t n = 3 * 1536 + 5;
    auto gate = randomFloats(size_t(n), 11, 4.0f);
    gate[0] = -12.0f, gate[1] = 12.0f, gate[2] = -10.0f, gate[3] = 10.0f, gate[4] = 0.0f;
    const auto up = randomFloats(size_t(n), 12);
    DeviceBytes dg(gate), du(up), dy(size_t(n) * 4, 0xFF), dz(size_t(n) * 4, 0xFF);
    weir::cuda::gegluTanh(dg.as<float>(), du.as<float>(), dy.as<float>(), n, nullptr);
    weir::cuda::swiglu(dg.as<float>(), du.as<float>(), dz.as<float>(), n, nullptr);
    const auto y = dy.read<float>(), z = dz.read<float>();
    std::vector<float> ry(static_cast<size_t>(n)), rz(static_cast<size_t>(n));
    weir::kernels::gegluF16Table(gate.data(), up.data(), ry.data(), n);
    weir::kernels::swiglu(gate.data(), up.data(), rz.data(), n);
    for (int64_t i = 0; i < n; ++i) {
        CHECK_NEAR(y[size_t(i)], ry[size_t(i)], 1e-3 * std::fabs(up[size_t(i)]) * std::max(1.0f, std::fabs(gate[size_t(i)])));
        CHECK_NEAR(z[size_t(i)], rz[size_t(i)], 2e-6 * std::fabs(rz[size_t(i)]) + 1e-7);
    }
    CHECK_EQ(y[0], 0.0f);
    CHECK_EQ(y[1], 12.0f * up[1]);
}

WEIR_TEST(CudaRowKernels, elementwiseOps) {
    REQUIRE_CUDA_DEVICE();
    const int64_t rows = 7, width = 96, n = rows * width;
    const auto a = randomFloats(size_t(n), 1, 20.0f), b = randomFloats(size_t(n), 2), bias = randomFloats(size_t(width), 3);
    DeviceBytes dy(a), dx(b), db(bias);
    weir::cuda::addInPlace(dy.as<float>(), dx.as<float>(), n, nullptr);
    weir::cuda::addBiasRows(dy.as<float>(), db.as<float>(), rows, width, nullptr);
    weir::cuda::scaleInPlace(dy.as<float>(), 0.5f, n, nullptr);
    const auto y = dy.read<float>();
    for (int64_t i = 0; i < n; ++i)
        CHECK_EQ(y[size_t(i)], ((a[size_t(i)] + b[size_t(i)]) + bias[size_t(i % width)]) * 0.5f);  // exact: same operations

    DeviceBytes dc(a);
    weir::cuda::softcap(dc.as<float>(), 30.0f, n, nullptr);
    const auto c = dc.read<float>();
    for (int64_t i = 0; i < n; ++i) {
        const double ref = 30.0 * std::tanh(double(a[size_t(i)]) / 30.0);
        CHECK_NEAR(double(c[size_t(i)]), ref, 4e-6 * 30.0);
    }
}

WEIR_TEST(CudaRowKernels, gatherMovesOutputRowsDown) {
    REQUIRE_CUDA_DEVICE();
    const int64_t rows = 9, width = 33;
    const auto x = randomFloats(size_t(rows * width), 4);
    const std::vector<int32_t> src{1, 2, 5, 8};  // overlapping moves: row 1 -> 0 while row 2 -> 1
    DeviceBytes dx(x), ds(src), tmp(src.size() * size_t(width) * 4);
    weir::cuda::gatherRows(dx.as<float>(), width, ds.as<int32_t>(), int64_t(src.size()), tmp.as<float>(), nullptr);
    const auto y = dx.read<float>();
    for (size_t r = 0; r < src.size(); ++r)
        for (int64_t c = 0; c < width; ++c) CHECK_EQ(y[r * size_t(width) + size_t(c)], x[size_t(src[r] * width + c)]);
    for (size_t i = src.size() * size_t(width); i < y.size(); ++i) CHECK_EQ(y[i], x[i]);  // the rest untouched
}

// Embedding lookup and f16 dequantization: the same dequantized values as the
// CPU (exact: the same f32 arithmetic per element), scaled; f16 rounding of them.
WEIR_TEST(CudaRowKernels, embedAndDequantizeMatchCpu) {
    REQUIRE_CUDA_DEVICE();
    for (GgmlType t : allTypes()) {
        const int64_t K = 512, N = 23;
        std::mt19937 rng(uint32_t(t) + 40);
        const size_t rb = weir::kernels::rowBytes(t, K);
        std::vector<uint8_t> w;
        for (int64_t n = 0; n < N; ++n) {
            const auto row = randomRow(t, K, rng);
            w.insert(w.end(), row.begin(), row.end());
        }
        const std::vector<int32_t> ids{22, 0, 7, 7, 13};
        DeviceBytes dw(w), di(ids), dx(ids.size() * size_t(K) * 4, 0xFF), dh(size_t(N - 3) * size_t(K) * 2, 0xFF);
        weir::cuda::embedRows(t, dw.as(), rb, K, di.as<int32_t>(), int64_t(ids.size()), 2.0f, dx.as<float>(), nullptr);
        weir::cuda::dequantizeRowsF16(t, dw.as(), rb, K, 3, N - 3, dh.as<uint16_t>(), nullptr);
        const auto x = dx.read<float>();
        const auto h = dh.read<uint16_t>();
        std::vector<float> ref(static_cast<size_t>(K));
        int bad = 0;
        for (size_t i = 0; i < ids.size(); ++i) {
            weir::kernels::dequantizeRow(t, w.data() + size_t(ids[i]) * rb, ref.data(), K);
            const float big = maxAbs(ref);
            for (int64_t k = 0; k < K; ++k) {
                // The GPU fuses q * scale + min into one fma where the CPU
                // rounds twice: an ulp of the terms, not of a result that
                // cancels to near zero.
                const float want = ref[size_t(k)] * 2.0f, got = x[i * size_t(K) + size_t(k)];
                if (!(std::fabs(got - want) <= 2.5e-7f * std::fabs(want) + 1e-6f * big)) ++bad;
            }
        }
        for (int64_t n = 3; n < N; ++n) {
            weir::kernels::dequantizeRow(t, w.data() + size_t(n) * rb, ref.data(), K);
            const float big = maxAbs(ref);
            for (int64_t k = 0; k < K; ++k) {
                // One f16 ulp: the f32 value may sit on the other side of a rounding boundary.
                const float got = weir::kernels::f16ToF32(h[size_t(n - 3) * size_t(K) + size_t(k)]);
                const float want = weir::kernels::f16ToF32(weir::kernels::f32ToF16(ref[size_t(k)]));
                if (!(std::fabs(got - want) <= 1e-3f * std::fabs(want) + 1e-6f * big)) ++bad;
            }
        }
        CHECK_MSG(bad == 0, str(typeName(t), ": ", bad, " values differ"));
    }
}
