// matmulManyThen runs a step over each part of the outputs (a query head, a
// token's k and v) once that part's values are all computed: inside the
// products' pool job where they take the row kernels, in a job of their own
// otherwise. Each step must run exactly once per part and row tile, see its
// part's final values (matmulMany's bits), its writes must stay what the
// products leave, and a decode-sized call must be one round trip.
#include "tests/support/weir_test.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
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

struct Case {
    const char* name;
    GgmlType types[3];
    int64_t rows[3];
    std::vector<int64_t> partEnds;  // over the rows laid end to end
};

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        // Gemma 3 270M's q/k/v at head dimension 64: four query heads, then k and v.
        {"q heads, then k and v", {GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K}, {256, 64, 64}, {64, 128, 192, 256, 384}},
        // Heads of 72 values: weight tiles of 16 rows straddle two parts.
        {"parts across tiles", {GgmlType::Q8_0, GgmlType::Q8_0, GgmlType::Q8_0}, {216, 72, 72}, {72, 144, 216, 360}},
        {"one part", {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::F16}, {48, 32, 20}, {100}},
        {"a part smaller than a tile", {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q8_0}, {32, 16, 16}, {3, 32, 64}},
    };
    return table;
}

// Where a row's value v (laid end to end) is in the outputs.
struct Place {
    size_t out;
    int64_t col;
};
Place placeOf(const Case& c, int64_t v) {
    size_t o = 0;
    while (v >= c.rows[o]) v -= c.rows[o++];
    return {o, v};
}

void checkSteps(const std::string& path, const Case& c, ThreadPool& pool) {
    const int64_t K = 256;
    std::mt19937 rng(11);
    std::vector<Matrix> w;
    for (int i = 0; i < 3; ++i) w.push_back(randomMatrix(c.types[i], K, c.rows[i], rng));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const int64_t parts = int64_t(c.partEnds.size());
    for (const int64_t M : {1, 4, 16, 17, 40, 70}) {
        std::vector<float> x(size_t(M * K));
        for (float& v : x) v = nd(rng);
        std::vector<std::vector<float>> want(3), got(3);
        std::vector<MatmulOutput> separate, fused;
        for (int i = 0; i < 3; ++i) {
            want[size_t(i)].assign(size_t(M * c.rows[i]), -1.0f);
            got[size_t(i)].assign(size_t(M * c.rows[i]), -2.0f);
            separate.push_back({w[size_t(i)].view, want[size_t(i)].data()});
            fused.push_back({w[size_t(i)].view, got[size_t(i)].data()});
        }
        matmulMany(separate, x.data(), M, pool);
        // The step checks its part's values, then negates them (a write the
        // products must not overwrite); it counts its calls per row.
        auto calls = std::make_unique<std::atomic<int>[]>(size_t(parts * M));
        std::atomic<int> wrongValues{0};
        const MatmulPartFn after = [&](int64_t part, int64_t m0, int64_t m1) {
            for (int64_t m = m0; m < m1; ++m) {
                calls[size_t(part * M + m)].fetch_add(1);
                for (int64_t v = part ? c.partEnds[size_t(part - 1)] : 0; v < c.partEnds[size_t(part)]; ++v) {
                    const Place p = placeOf(c, v);
                    float& y = got[p.out][size_t(m * c.rows[p.out] + p.col)];
                    if (std::memcmp(&y, &want[p.out][size_t(m * c.rows[p.out] + p.col)], 4) != 0) wrongValues.fetch_add(1);
                    y = -y;
                }
            }
        };
        matmulManyThen(fused, c.partEnds, after, x.data(), M, pool);
        const std::string what = path + ", " + c.name + ", M = " + std::to_string(M);
        CHECK_MSG(wrongValues.load() == 0, what + ": a step saw values other than matmulMany's");
        int64_t wrongCalls = 0;
        for (int64_t i = 0; i < parts * M; ++i) wrongCalls += calls[size_t(i)].load() != 1;
        CHECK_MSG(wrongCalls == 0, what + ": " + std::to_string(wrongCalls) + " (part, row) steps not run exactly once");
        for (int i = 0; i < 3; ++i) {
            std::vector<float> negated = want[size_t(i)];
            for (float& v : negated) v = -v;
            CHECK_MSG(std::memcmp(got[size_t(i)].data(), negated.data(), negated.size() * 4) == 0,
                      what + ": output " + std::to_string(i) + " is not the steps' writes over matmulMany's values");
        }
    }
}

} // namespace

WEIR_TEST(MatmulManyThen, eachPartsStepRunsOnceOnItsFinalValues) {
    for (const int threads : {1, 3, 4}) {
        ThreadPool pool(threads);
        weirtest::forEachKernelPath([&](const std::string& path) {
            weirtest::eachRow(cases(), [&](const Case& c) {
                checkSteps(path + ", " + std::to_string(threads) + " threads", c, pool);
            });
        });
    }
}

WEIR_TEST(MatmulManyThen, decodeRowsAreOneRoundTrip) {
    ThreadPool pool(2);
    std::mt19937 rng(3);
    const int64_t K = 512;
    const Matrix q = randomMatrix(GgmlType::Q4_K, K, 1024, rng), k = randomMatrix(GgmlType::Q4_K, K, 256, rng),
                 v = randomMatrix(GgmlType::Q6_K, K, 256, rng);
    const std::vector<int64_t> ends = {256, 512, 768, 1024, 1536};
    for (const int64_t M : {1, 16}) {
        std::vector<float> x(size_t(M * K), 0.5f), yq(size_t(M * 1024)), yk(size_t(M * 256)), yv(size_t(M * 256));
        const MatmulOutput outs[] = {{q.view, yq.data()}, {k.view, yk.data()}, {v.view, yv.data()}};
        std::atomic<int> steps{0};
        const uint64_t trips = weirtest::poolRoundTripsOf([&] {
            matmulManyThen(outs, ends, [&](int64_t, int64_t, int64_t) { steps.fetch_add(1); }, x.data(), M, pool);
        });
        CHECK_MSG(trips == 1, std::to_string(trips) + " round trips for " + std::to_string(M) + " rows");
        CHECK_EQ(steps.load(), 5);
    }
}

WEIR_TEST(MatmulManyThen, partsThatDoNotCutTheOutputsAreRefused) {
    ThreadPool pool(2);
    std::mt19937 rng(5);
    const Matrix a = randomMatrix(GgmlType::Q8_0, 256, 16, rng), b = randomMatrix(GgmlType::Q8_0, 256, 32, rng);
    std::vector<float> x(256, 1.0f), ya(16), yb(32);
    const MatmulOutput outs[] = {{a.view, ya.data()}, {b.view, yb.data()}};
    const MatmulPartFn none = [](int64_t, int64_t, int64_t) {};
    const std::vector<std::vector<int64_t>> notCuts = {{}, {16, 40}, {16, 16, 48}, {20, 10, 48}, {16, 64}};
    for (const std::vector<int64_t>& ends : notCuts)
        CHECK_THROWS(weir::Error, matmulManyThen(outs, ends, none, x.data(), 1, pool));
}
