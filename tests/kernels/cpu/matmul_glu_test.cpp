// matmulGlu runs gate, up and the gated activation as one pool job; gate, up
// and the activation must be what matmulMany followed by the activation over
// whole rows gives, bit for bit, on every kernel path, for decode-sized and
// prompt-sized inputs, with and without row groups, with rows that are not a
// multiple of a tile and with activations large enough for expf's edge cases.
#include "tests/support/weir_test.h"

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu/kernel_paths.h"
#include "tests/kernels/cpu/quant_test_util.h"
#include "weir/base/error.h"

using namespace weir::kernels;

namespace {

using Matrix = weirtest::RandomMatrix;
using weirtest::randomMatrix;

// Rows in sequences of 3 and the rest, as a step mixing a short chunk with decodes.
struct Groups {
    std::vector<int32_t> size, index;
    RowGroups view;
    explicit Groups(int64_t M) {
        for (int64_t m = 0; m < M; ++m) {
            const bool first = m < 3;
            size.push_back(int32_t(first ? std::min<int64_t>(3, M) : M - 3));
            index.push_back(int32_t(first ? m : m - 3));
        }
        view = {size.data(), index.data()};
    }
};

struct Case {
    const char* name;
    GgmlType gate, up;
    int64_t rows;
};

struct Activation {
    const char* name;
    GluRowFn fn;
};

void checkSameAsSeparateSteps(const std::string& path, const Case& c, ThreadPool& pool) {
    const int64_t K = 512, N = c.rows;
    std::mt19937 rng(17);
    const Matrix gate = randomMatrix(c.gate, K, N, rng), up = randomMatrix(c.up, K, N, rng);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (const int64_t M : {1, 2, 5, 13, 40, 70}) {
        std::vector<float> x(size_t(M * K));
        for (float& v : x) v = nd(rng);
        // One row large: gates beyond GELU's table and expf's normal range.
        for (int64_t k = 0; k < K; ++k) x[size_t((M - 1) * K + k)] *= 300.0f;
        for (const Activation& a : {Activation{"GeGLU", gegluF16Table}, Activation{"SwiGLU", swiglu}}) {
            for (const bool grouped : {false, true}) {
                const Groups g(M);
                const RowGroups* groups = grouped ? &g.view : nullptr;
                const size_t size = size_t(M * N);
                std::vector<float> wantGate(size, -1.0f), wantUp(size, -1.0f), want(size, -1.0f);
                const MatmulOutput separate[] = {{gate.view, wantGate.data()}, {up.view, wantUp.data()}};
                matmulMany(separate, x.data(), M, pool, groups);
                for (int64_t m = 0; m < M; ++m) a.fn(wantGate.data() + m * N, wantUp.data() + m * N, want.data() + m * N, N);

                std::vector<float> gotGate(size, -2.0f), gotUp(size, -2.0f), got(size, -2.0f);
                matmulGlu({gate.view, gotGate.data()}, {up.view, gotUp.data()}, a.fn, got.data(), x.data(), M, pool, groups);
                const std::string what = path + ", " + c.name + ", " + a.name + ", M = " + std::to_string(M) + (grouped ? ", grouped" : "");
                CHECK_MSG(std::memcmp(gotGate.data(), wantGate.data(), size * 4) == 0, what + ": gate differs");
                CHECK_MSG(std::memcmp(gotUp.data(), wantUp.data(), size * 4) == 0, what + ": up differs");
                CHECK_MSG(std::memcmp(got.data(), want.data(), size * 4) == 0, what + ": activation differs");
            }
        }
    }
}

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        {"Gemma gate/up: Q4_K", GgmlType::Q4_K, GgmlType::Q4_K, 64},
        {"Q4_K rows not a multiple of 16", GgmlType::Q4_K, GgmlType::Q4_K, 40},
        {"Q4_K and Q6_K, rows not a multiple of 8", GgmlType::Q4_K, GgmlType::Q6_K, 36},
        {"legacy pairs, odd rows", GgmlType::Q4_0, GgmlType::Q4_0, 33},
        {"SmolLM gate/up: Q4_1", GgmlType::Q4_1, GgmlType::Q4_1, 48},
        {"Q8_0 and Q5_0", GgmlType::Q8_0, GgmlType::Q5_0, 23},
        {"F16", GgmlType::F16, GgmlType::F16, 20},
    };
    return table;
}

} // namespace

WEIR_TEST(MatmulGlu, gateUpAndActivationAreTheSeparateStepsBitForBit) {
    ThreadPool pool(3);
    weirtest::forEachKernelPath([&](const std::string& path) {
        weirtest::eachRow(cases(), [&](const Case& c) { checkSameAsSeparateSteps(path, c, pool); });
    });
}

WEIR_TEST(MatmulGlu, decodeRowsAreOneRoundTrip) {
    ThreadPool pool(2);
    std::mt19937 rng(3);
    const int64_t K = 256, N = 2048;
    const Matrix gate = randomMatrix(GgmlType::Q4_K, K, N, rng), up = randomMatrix(GgmlType::Q4_K, K, N, rng);
    for (const int64_t M : {1, 16}) {
        std::vector<float> x(size_t(M * K), 0.5f), yg(size_t(M * N)), yu(size_t(M * N)), act(size_t(M * N));
        const uint64_t trips = weirtest::poolRoundTripsOf([&] {
            matmulGlu({gate.view, yg.data()}, {up.view, yu.data()}, gegluF16Table, act.data(), x.data(), M, pool);
        });
        CHECK_MSG(trips == 1, std::to_string(trips) + " round trips for " + std::to_string(M) + " rows");
    }
}

WEIR_TEST(MatmulGlu, weightsOfDifferentShapesAreRefused) {
    ThreadPool pool(2);
    std::mt19937 rng(5);
    const Matrix a = randomMatrix(GgmlType::Q8_0, 256, 16, rng), b = randomMatrix(GgmlType::Q8_0, 256, 32, rng);
    std::vector<float> x(256, 1.0f), ya(32), yb(32), act(32);
    CHECK_THROWS(weir::Error, matmulGlu({a.view, ya.data()}, {b.view, yb.data()}, swiglu, act.data(), x.data(), 1, pool));
}
