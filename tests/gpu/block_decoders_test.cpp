// The CUDA kernels' block decoders (kernels/cuda/ggml_blocks.cuh,
// ggml_blocks_q8.cuh, kv_rows.cuh) compiled for the host and checked against
// the CPU's dequantization on random blocks: every chunk of every type, so
// the index and bit arithmetic the GPU kernels are built on is verified on
// machines without a GPU. Runs in the normal suite.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/fp8_e4m3.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/ggml_blocks_q8.cuh"
#include "kernels/cuda/kv_rows.cuh"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weirtest;
using weir::GgmlType;

namespace {

float maxAbs(const std::vector<float>& v) {
    float m = 0.0f;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

// A 16-byte aligned copy of the row (device allocations are 256-byte aligned).
struct AlignedRow {
    std::vector<uint4> storage;
    explicit AlignedRow(const std::vector<uint8_t>& bytes) : storage((bytes.size() + 15) / 16) {
        std::memcpy(storage.data(), bytes.data(), bytes.size());
    }
    const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(storage.data()); }
};

// Differences allowed: the decoders fuse q * scale + min into one fma where
// the CPU rounds twice, an ulp of the terms (not of a result that cancels).
int mismatches(const std::vector<float>& got, const std::vector<float>& want) {
    const float big = maxAbs(want);
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (!(std::fabs(got[i] - want[i]) <= 2.5e-7f * std::fabs(want[i]) + 1e-6f * big)) ++bad;
    return bad;
}

} // namespace

WEIR_TEST(CudaBlockDecoders, load8MatchesCpuDequantization) {
    for (GgmlType t : allTypes()) {
        std::mt19937 rng(uint32_t(t) + 7);
        const int64_t K = 1024;
        const auto bytes = randomRow(t, K, rng);
        const AlignedRow row(bytes);
        std::vector<float> want(static_cast<size_t>(K)), got(static_cast<size_t>(K));
        weir::kernels::dequantizeRow(t, bytes.data(), want.data(), K);
        weir::cuda::dispatchWeightType(t, [&]<GgmlType T>() {
            for (int i8 = 0; i8 < K / 8; ++i8) weir::cuda::Blocks<T>::load8(row.data(), i8, got.data() + i8 * 8);
        });
        CHECK_MSG(mismatches(got, want) == 0, str(typeName(t), ": ", mismatches(got, want), " of ", K, " values differ"));
    }
}

WEIR_TEST(CudaBlockDecoders, int8ChunksRebuildTheWeights) {
    // w_j = d * q_j + m with q_j the chunk's bytes (signed for Q8_0).
    for (GgmlType t : allTypes()) {
        std::mt19937 rng(uint32_t(t) + 11);
        const int64_t K = 1024;
        const auto bytes = randomRow(t, K, rng);
        const AlignedRow row(bytes);
        std::vector<float> want(static_cast<size_t>(K)), got(static_cast<size_t>(K));
        weir::kernels::dequantizeRow(t, bytes.data(), want.data(), K);
        const bool handled = weir::cuda::dispatchQ8Type(t, [&]<GgmlType T>() {
            for (int i8 = 0; i8 < K / 8; ++i8) {
                const weir::cuda::Q8Chunk c = weir::cuda::Q8Dot<T>::load(row.data(), i8);
                for (int j = 0; j < 8; ++j) {
                    const uint32_t word = uint32_t(c.q[j / 4]);
                    const int byte = int((word >> (8 * (j % 4))) & 0xFF);
                    const int q = T == GgmlType::Q8_0 ? int(int8_t(byte)) : byte;
                    if (T != GgmlType::Q8_0) CHECK(q < 64);  // dp4a reads the bytes as signed
                    got[size_t(i8 * 8 + j)] = std::fma(c.d, float(q), c.m);
                }
            }
        });
        if (!handled) continue;
        CHECK_MSG(mismatches(got, want) == 0, str(typeName(t), " (int8 chunks): ", mismatches(got, want), " of ", K, " values differ"));
    }
}

WEIR_TEST(CudaBlockDecoders, kvRowsMatchCpu) {
    const int64_t n = 256;
    auto x = std::vector<float>(static_cast<size_t>(n));
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (auto& v : x) v = normal(rng);
    x[0] = 500.0f, x[1] = -0.001f, x[2] = 0.0f;  // saturation, a subnormal for e4m3, zero
    for (GgmlType t : {GgmlType::F16, GgmlType::Q8_0, GgmlType::F32, GgmlType::E4M3_KV}) {
        std::vector<uint8_t> stored(weir::cuda::kvBytes(t, n));
        REQUIRE(weir::kernels::storeKvRow(t, x.data(), stored.data(), n));
        std::vector<float> want(static_cast<size_t>(n));
        if (t == GgmlType::E4M3_KV) weir::kernels::fromE4M3Row(stored.data(), want.data(), n);
        else weir::kernels::dequantizeRow(t, stored.data(), want.data(), n);
        const AlignedRow row(stored);
        for (int64_t d = 0; d < n; ++d) {
            float got = 0.0f;
            switch (t) {
            case GgmlType::F16: got = weir::cuda::kvAt<GgmlType::F16>(row.data(), int(d)); break;
            case GgmlType::Q8_0: got = weir::cuda::kvAt<GgmlType::Q8_0>(row.data(), int(d)); break;
            case GgmlType::F32: got = weir::cuda::kvAt<GgmlType::F32>(row.data(), int(d)); break;
            default: got = weir::cuda::kvAt<GgmlType::E4M3_KV>(row.data(), int(d)); break;
            }
            CHECK_EQ(got, want[size_t(d)]);  // the same bits: one multiplication each
        }
        // Heads start kvBytes(t, h * headDim) into a row, as the engine's kvRowBytes.
        CHECK_EQ(weir::cuda::kvBytes(t, 64), t == GgmlType::F16 ? size_t(128) : t == GgmlType::Q8_0 ? size_t(68)
                                                 : t == GgmlType::F32 ? size_t(256) : size_t(64));
    }
}

WEIR_TEST(CudaBlockDecoders, pagedRowFollowsTheTable) {
    const int32_t table[] = {4, -1, 2};
    CHECK_EQ(weir::cuda::pagedRow(table, 0, 16), int64_t(64));
    CHECK_EQ(weir::cuda::pagedRow(table, 15, 16), int64_t(79));
    CHECK_EQ(weir::cuda::pagedRow(table, 20, 16), int64_t(-1));
    CHECK_EQ(weir::cuda::pagedRow(table, 33, 16), int64_t(33));
}

WEIR_TEST(CudaBlockDecoders, halfBitsDecodesEveryF16) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float want = weir::kernels::f16ToF32(uint16_t(h)), got = weir::cuda::halfBits(uint16_t(h));
        if (std::isnan(want)) CHECK(std::isnan(got));
        else CHECK_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want));
    }
}
