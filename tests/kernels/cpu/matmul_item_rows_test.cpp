// A product's items hold 16 weight rows, or fewer where that would leave a
// many-thread pool fewer than 4 items per thread (a 640-row projection on 16
// threads: 80 items of 8 rows instead of 40 of 16, of which some threads took
// 3 and most 2). How the rows are cut must never change a result: every
// kernel path gives a 16-thread pool's products the bits of one thread's.
#include "tests/support/weir_test.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu/kernel_paths.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weir::kernels;

namespace {

// Every product of `types` x `rows` (weight rows) x `acts` (activation rows)
// from a 16-thread pool has a 1-thread pool's bits, on every kernel path.
void checkSixteenThreadsGiveOnesBits(std::initializer_list<GgmlType> types, std::initializer_list<int64_t> rows,
                                     std::initializer_list<int64_t> acts, unsigned seed) {
    constexpr int64_t K = 256;
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    ThreadPool one(1), many(16);
    for (const GgmlType t : types) {
        for (const int64_t N : rows) {
            const weirtest::RandomMatrix w = weirtest::randomMatrix(t, K, N, rng);
            for (const int64_t M : acts) {
                std::vector<float> x(size_t(M * K));
                for (float& v : x) v = nd(rng);
                weirtest::forEachKernelPath([&](const std::string& path) {
                    std::vector<float> a(size_t(M * N), -1.0f), b(size_t(M * N), -2.0f);
                    matmul(w.view, x.data(), M, a.data(), one);
                    matmul(w.view, x.data(), M, b.data(), many);
                    CHECK_MSG(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0,
                              path + ", " + weirtest::typeName(t) + ", N = " + std::to_string(N) + ", M = " +
                                  std::to_string(M) + ": 16 threads differ from 1");
                });
            }
        }
    }
}

} // namespace

WEIR_TEST(MatmulItemRows, manyThreadsGetOneThreadsBits) {
    checkSixteenThreadsGiveOnesBits({GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16},
                                    {640, 256, 40, 1002}, {1, 4, 16}, 9);
}

WEIR_TEST(MatmulItemRows, aSmallProjectionIsCutFinerOnlyForManyThreads) {
    std::mt19937 rng(10);
    const weirtest::RandomMatrix w = weirtest::randomMatrix(GgmlType::Q4_K, 1024, 640, rng);
    std::vector<float> x(1024, 0.5f), y(640);
    auto chunksOf = [&](ThreadPool& pool) {
        const uint64_t before = ThreadPool::processCounters().chunks;
        matmul(w.view, x.data(), 1, y.data(), pool);
        return ThreadPool::processCounters().chunks - before;
    };
    ThreadPool two(2), sixteen(16);
    CHECK_EQ(chunksOf(two), uint64_t(40 / 2));   // 40 items of 16 rows, in chunks of 2 (40 / (2 x 8))
    CHECK_EQ(chunksOf(sixteen), uint64_t(80));   // 80 items of 8 rows, one per chunk
}

// A prompt's tile GEMMs: items of 256 activation rows times a pair of weight
// tiles, or of fewer rows (down to 64) where that would leave fewer than 4
// items per thread. The cut must not change a bit either.
WEIR_TEST(MatmulItemRows, promptsOnManyThreadsGetOneThreadsBits) {
    checkSixteenThreadsGiveOnesBits({GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q4_K, GgmlType::Q6_K}, {640, 256, 100},
                                    {32, 100, 512}, 11);
}

WEIR_TEST(MatmulItemRows, aPromptsSmallProjectionIsCutFinerOnlyForManyThreads) {
    if (!tileGemmActive()) {
        std::printf("SKIPPED: this CPU has no tile GEMMs (VNNI or AMX), so prompts take the row kernels\n");
        return;
    }
    std::mt19937 rng(12);
    const weirtest::RandomMatrix w = weirtest::randomMatrix(GgmlType::Q4_K, 1024, 640, rng);
    std::vector<float> x(size_t(512) * 1024, 0.5f), y(size_t(512) * 640);
    auto chunksOf = [&](ThreadPool& pool) {
        const uint64_t before = ThreadPool::processCounters().chunks;
        matmul(w.view, x.data(), 512, y.data(), pool);
        return ThreadPool::processCounters().chunks - before;
    };
    ThreadPool two(2), sixteen(16);
    // Packing 40 weight tiles, then 20 tile pairs x 2 items of 256 rows: in
    // chunks of 2 items (40 / (2 x 8)) on 2 threads.
    CHECK_EQ(chunksOf(two), uint64_t(20 + 20));
    // On 16 threads one item per chunk: 40 tiles packed, then 20 pairs x 4
    // items of 128 rows (of 256 rows: 40 items, 2.5 per thread).
    CHECK_EQ(chunksOf(sixteen), uint64_t(40 + 80));
}
