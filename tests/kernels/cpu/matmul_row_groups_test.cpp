// matmul's row groups pick between kernels that sum in llama.cpp's different
// orders (Q4_K four-row / one-row, the tiled K-quant kernel, the plain row
// dot). Whatever the grouping, every result must be the same exact sum up to
// float rounding: checked against a double-precision sum of the dequantized
// weights times the Q8_K-quantized activations, which all orders approximate.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstring>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weir::kernels;

namespace {

// x rounded through Q8_K the way matmul converts activations: d * q per element.
std::vector<double> q8kRoundTrip(const float* x, int64_t n) {
    std::vector<uint8_t> q(static_cast<size_t>(n / 256) * kQ8_KBlockBytes);
    quantizeRowQ8_K(x, q.data(), n);
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = q.data() + size_t(b) * kQ8_KBlockBytes;
        float d;
        std::memcpy(&d, blk, 4);
        for (int j = 0; j < 256; ++j) out[size_t(b * 256 + j)] = double(d) * double(int8_t(blk[4 + j]));
    }
    return out;
}

} // namespace

struct GroupingRow {
    const char* name;
    GgmlType type;
    int rows;
};

WEIR_TEST(MatmulRowGroups, everyGroupingGivesTheSameSums) {
    if (bestKernelPath() != KernelPath::Avx2) SKIP("the grouping only matters on the AVX2 path");
    const std::vector<GroupingRow> table = {
        {"Q4_K interleaved (rows % 8 == 0)", GgmlType::Q4_K, 64},
        {"Q4_K other rows", GgmlType::Q4_K, 60},
        {"Q5_K", GgmlType::Q5_K, 64},
        {"Q6_K", GgmlType::Q6_K, 64},
    };
    weirtest::eachRow(table, [](const GroupingRow& row) {
        const int rows = row.rows;
        const auto t = row.type;
        const int64_t K = 512, N = rows, M = 13;
        std::mt19937 rng(7);
        std::vector<uint8_t> w;
        for (int64_t r = 0; r < N; ++r) {
            const auto row = weirtest::randomRow(t, K, rng);
            w.insert(w.end(), row.begin(), row.end());
        }
        const WeightView view{t, w.data(), K, N, rowBytes(t, K)};
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(M * K));
        for (auto& v : x) v = nd(rng);

        // Reference: exact-ish sums of what every kernel computes.
        std::vector<double> ref(static_cast<size_t>(M * N)), mag(static_cast<size_t>(M * N));
        std::vector<float> wrow(static_cast<size_t>(K));
        for (int64_t m = 0; m < M; ++m) {
            const auto xq = q8kRoundTrip(x.data() + m * K, K);
            for (int64_t n = 0; n < N; ++n) {
                dequantizeRow(t, w.data() + size_t(n) * view.rowStride, wrow.data(), K);
                double s = 0, a = 0;
                for (int64_t k = 0; k < K; ++k) {
                    s += double(wrow[size_t(k)]) * xq[size_t(k)];
                    a += std::fabs(double(wrow[size_t(k)]) * xq[size_t(k)]);
                }
                ref[size_t(m * N + n)] = s;
                mag[size_t(m * N + n)] = a;  // the scale float rounding errors are relative to
            }
        }

        ThreadPool pool(2);
        // Groupings: one batch of 13 (tiled / four-row kernels), all single rows,
        // and sequences of 5, 8 and 0-sized mixes.
        std::vector<int32_t> ones(static_cast<size_t>(M), 1), zeros(static_cast<size_t>(M), 0);
        std::vector<int32_t> mixSize = {5, 5, 5, 5, 5, 8, 8, 8, 8, 8, 8, 8, 8};
        std::vector<int32_t> mixIndex = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 7};
        const RowGroups single{ones.data(), zeros.data()}, mixed{mixSize.data(), mixIndex.data()};
        std::vector<std::vector<float>> results;
        for (const RowGroups* g : {static_cast<const RowGroups*>(nullptr), &single, &mixed}) {
            std::vector<float> y(static_cast<size_t>(M * N));
            matmul(view, x.data(), M, y.data(), pool, g);
            results.push_back(y);
        }
        double worst = 0;
        for (const auto& y : results) {
            for (size_t i = 0; i < y.size(); ++i) {
                worst = std::max(worst, std::fabs(y[i] - ref[i]) / std::max(1e-30, mag[i]));
            }
        }
        std::printf("  worst difference to the double-precision sum, relative to sum |w x|: %.2e\n", worst);
        REQUIRE(worst < 1e-5);
        // The groupings do select different kernels: some results differ in the last bits.
        bool anyDiffer = false;
        for (size_t i = 0; i < results[0].size(); ++i) anyDiffer |= results[0][i] != results[1][i];
        REQUIRE_MSG(anyDiffer, "the grouping had no effect; the test would not notice a wrong kernel");
    });
}

// Rows that come alone (decode steps of different sequences) must get the bits
// they would get in a matmul of their own, whichever of them share a kernel
// call (the one-row kernels take up to four rows at once).
WEIR_TEST(MatmulRowGroups, rowsAloneGetTheBitsOfTheirOwnMatmul) {
    const std::vector<GroupingRow> table = {
        {"Q4_K interleaved (rows % 8 == 0)", GgmlType::Q4_K, 64},
        {"Q4_K other rows", GgmlType::Q4_K, 60},
        {"Q5_K", GgmlType::Q5_K, 64},
        {"Q6_K", GgmlType::Q6_K, 64},
        {"Q5_0", GgmlType::Q5_0, 64},
        {"Q8_0", GgmlType::Q8_0, 64},
    };
    weirtest::eachRow(table, [](const GroupingRow& row) {
        const int64_t K = 512, N = row.rows, M = 7;
        std::mt19937 rng(11);
        std::vector<uint8_t> w;
        for (int64_t r = 0; r < N; ++r) {
            const auto bytes = weirtest::randomRow(row.type, K, rng);
            w.insert(w.end(), bytes.begin(), bytes.end());
        }
        const WeightView view{row.type, w.data(), K, N, rowBytes(row.type, K)};
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(M * K));
        for (auto& v : x) v = nd(rng);
        ThreadPool pool(2);
        std::vector<int32_t> ones(static_cast<size_t>(M), 1), zeros(static_cast<size_t>(M), 0);
        const RowGroups alone{ones.data(), zeros.data()};
        std::vector<float> together(static_cast<size_t>(M * N)), own(static_cast<size_t>(N));
        matmul(view, x.data(), M, together.data(), pool, &alone);
        for (int64_t m = 0; m < M; ++m) {
            matmul(view, x.data() + m * K, 1, own.data(), pool, &alone);
            REQUIRE_MSG(std::memcmp(own.data(), together.data() + m * N, size_t(N) * 4) == 0,
                        weirtest::str("row ", m, ": ", together[size_t(m * N)], " in the step vs ", own[0], " alone"));
        }
    });
}
