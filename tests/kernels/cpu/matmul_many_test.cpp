// matmulMany runs several weights over the same activations as one pool job;
// each result must be matmul's for that weight alone, bit for bit, on every
// kernel path, for decode-sized and prompt-sized inputs, with and without
// row groups, and with weights of different types side by side.
#include "tests/support/weir_test.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu/kernel_paths.h"
#include "tests/kernels/cpu/quant_test_util.h"
#include "weir/base/error.h"

using namespace weir::kernels;

namespace {

using Matrix = weirtest::RandomMatrix;
using weirtest::randomMatrix;

// Sequences of 5, 1 and the rest, as a mixed decode/prefill step groups them.
struct Groups {
    std::vector<int32_t> size, index;
    RowGroups view;
    explicit Groups(int64_t M) {
        for (int64_t m = 0; m < M; ++m) {
            const int64_t seq = m < 5 ? 0 : m < 6 ? 1 : 2;
            const int64_t first = seq == 0 ? 0 : seq == 1 ? 5 : 6;
            const int64_t len = seq == 0 ? std::min<int64_t>(5, M) : seq == 1 ? 1 : M - 6;
            size.push_back(int32_t(len));
            index.push_back(int32_t(m - first));
        }
        view = {size.data(), index.data()};
    }
};

struct Case {
    const char* name;
    std::vector<GgmlType> types;
    std::vector<int64_t> rows;  // of each weight
};

void checkSameAsMatmul(const Case& c, ThreadPool& pool) {
    const int64_t K = 512;
    std::mt19937 rng(11);
    std::vector<Matrix> weights;
    for (size_t i = 0; i < c.types.size(); ++i) weights.push_back(randomMatrix(c.types[i], K, c.rows[i], rng));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (const int64_t M : {1, 2, 5, 13, 40, 70}) {
        std::vector<float> x(size_t(M * K));
        for (float& v : x) v = nd(rng);
        for (const bool grouped : {false, true}) {
            const Groups g(M);
            const RowGroups* groups = grouped ? &g.view : nullptr;
            std::vector<std::vector<float>> alone, many;
            std::vector<MatmulOutput> outs;
            for (const Matrix& w : weights) {
                alone.emplace_back(size_t(M * w.view.rows), -1.0f);
                many.emplace_back(size_t(M * w.view.rows), -2.0f);
                matmul(w.view, x.data(), M, alone.back().data(), pool, groups);
            }
            for (size_t i = 0; i < weights.size(); ++i) outs.push_back({weights[i].view, many[i].data()});
            matmulMany(outs, x.data(), M, pool, groups);
            for (size_t i = 0; i < weights.size(); ++i)
                CHECK_MSG(std::memcmp(alone[i].data(), many[i].data(), alone[i].size() * sizeof(float)) == 0,
                          std::string(c.name) + ": weight " + std::to_string(i) + " (" + weirtest::typeName(c.types[i]) +
                              "), M = " + std::to_string(M) + (grouped ? ", grouped" : "") + " differs from matmul");
        }
    }
}

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        {"Gemma q/k/v: Q4_K, Q4_K, Q6_K", {GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K}, {64, 32, 32}},
        {"Q4_K rows not a multiple of 8", {GgmlType::Q4_K, GgmlType::Q4_K}, {60, 36}},
        {"legacy pairs, odd rows", {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0}, {33, 32, 17}},
        {"SmolLM gate/up: Q4_1", {GgmlType::Q4_1, GgmlType::Q4_1}, {48, 48}},
        {"floats and K-quants", {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q5_K}, {16, 20, 24, 32}},
        {"one weight", {GgmlType::Q5_1}, {40}},
    };
    return table;
}

} // namespace

WEIR_TEST(MatmulMany, everyResultIsMatmulsBitForBit) {
    ThreadPool pool(3);
    weirtest::forEachKernelPath([&](const std::string& path) {
        weirtest::eachRow(cases(), [&](const Case& c) {
            const std::string name = std::string(path) + ", " + c.name;
            checkSameAsMatmul({name.c_str(), c.types, c.rows}, pool);
        });
    });
}

WEIR_TEST(MatmulMany, aDecodeRowIsOneRoundTripForAllWeights) {
    ThreadPool pool(2);
    std::mt19937 rng(3);
    const int64_t K = 256;
    const Matrix q = randomMatrix(GgmlType::Q4_K, K, 64, rng), k = randomMatrix(GgmlType::Q4_K, K, 32, rng),
                 v = randomMatrix(GgmlType::Q6_K, K, 32, rng);
    std::vector<float> x(size_t(K), 0.5f), yq(64), yk(32), yv(32);
    const MatmulOutput outs[] = {{q.view, yq.data()}, {k.view, yk.data()}, {v.view, yv.data()}};
    CHECK_EQ(weirtest::poolRoundTripsOf([&] { matmulMany(outs, x.data(), 1, pool); }), uint64_t(1));
}

WEIR_TEST(MatmulMany, weightsOfDifferentRowLengthsAreRefused) {
    ThreadPool pool(2);
    std::mt19937 rng(5);
    const Matrix a = randomMatrix(GgmlType::Q8_0, 256, 16, rng), b = randomMatrix(GgmlType::Q8_0, 512, 16, rng);
    std::vector<float> x(512, 1.0f), ya(16), yb(16);
    const MatmulOutput outs[] = {{a.view, ya.data()}, {b.view, yb.data()}};
    CHECK_THROWS(weir::Error, matmulMany(outs, x.data(), 1, pool));
}
