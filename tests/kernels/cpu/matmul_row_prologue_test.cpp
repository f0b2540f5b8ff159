// A matmul's row prologue (matmul.h: RowPrologue, the residual norm that
// writes its activation rows) runs once per row before the row is read, and
// where the product is one job of row kernels it runs inside that job with
// the rows' conversion, shared among the threads. Every entry point must give
// the bits of the prologue run first and the matmul after it, on every
// kernel path and pool size; the rows must really be shared (row 0's
// prologue waits for another thread to take a row: run on the caller before
// the job, it would wait in vain); and a decode-sized call, or one whose
// conversion used to be a job of its own, must be one round trip.
#include "tests/support/weir_test.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_tiles.h"
#include "tests/kernels/cpu/kernel_paths.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weir::kernels;

namespace {

using Matrix = weirtest::RandomMatrix;
using weirtest::randomMatrix;

constexpr int64_t K = 256;

// The entry points, each given its activations and a prologue.
enum class Entry { Matmul, Many, ManyThen, Glu, PackedHead };
const char* nameOf(Entry e) {
    switch (e) {
    case Entry::Matmul: return "matmul";
    case Entry::Many: return "matmulMany";
    case Entry::ManyThen: return "matmulManyThen";
    case Entry::Glu: return "matmulGlu";
    default: return "matmul of a packed head";
    }
}

struct Weights {
    std::vector<Matrix> m;             // q4_k (64 rows), q8_0 (48 rows), f16 (32 rows), q5_0 (64 rows), q8_0 (80 rows)
    std::unique_ptr<PackedBuffer> packedBuf;
    WeightView packed;                 // q8_0 of 80 rows in tiles, when this CPU packs them
    explicit Weights(std::mt19937& rng) {
        m.push_back(randomMatrix(GgmlType::Q4_K, K, 64, rng));
        m.push_back(randomMatrix(GgmlType::Q8_0, K, 48, rng));
        m.push_back(randomMatrix(GgmlType::F16, K, 32, rng));
        m.push_back(randomMatrix(GgmlType::Q5_0, K, 64, rng));
        m.push_back(randomMatrix(GgmlType::Q8_0, K, 80, rng));
        const WeightView& head = m.back().view;
        if (const size_t bytes = weightTilesBytes(head)) {
            packedBuf = std::make_unique<PackedBuffer>(bytes);
            packWeightTiles(head, 0, (head.rows + kWeightTileRows - 1) / kWeightTileRows, packedBuf->data);
            packed = head;
            packed.tiles = packedBuf->data;
        }
    }
};

// Output values per activation row of an entry.
int64_t widthOf(Entry e, const Weights& w) {
    switch (e) {
    case Entry::Matmul: return w.m[0].view.rows;
    case Entry::Many:
    case Entry::ManyThen: return w.m[0].view.rows + w.m[1].view.rows + w.m[2].view.rows;
    case Entry::Glu: return 3 * w.m[3].view.rows;  // gate, up, act
    default: return w.m[4].view.rows;
    }
}

// Runs the entry into out (M x widthOf), ManyThen's step doubling its part's values.
void run(Entry e, const Weights& w, const float* x, int64_t M, float* out, ThreadPool& pool, const RowPrologue* before) {
    const int64_t width = widthOf(e, w);
    std::vector<std::vector<float>> ys;
    auto product = [&](int64_t n) {
        ys.emplace_back(size_t(M * n), 0.0f);
        return ys.back().data();
    };
    switch (e) {
    case Entry::Matmul: {
        matmul(w.m[0].view, x, M, out, pool, nullptr, before);
        return;
    }
    case Entry::PackedHead: {
        matmul(w.packed, x, M, out, pool, nullptr, before);
        return;
    }
    case Entry::Many:
    case Entry::ManyThen: {
        std::vector<MatmulOutput> outs;
        for (int i = 0; i < 3; ++i) outs.push_back({w.m[size_t(i)].view, product(w.m[size_t(i)].view.rows)});
        if (e == Entry::Many) {
            matmulMany(outs, x, M, pool, nullptr, before);
        } else {
            const int64_t ends[] = {32, 64, width};
            matmulManyThen(
                outs, ends,
                [&](int64_t part, int64_t m0, int64_t m1) {
                    for (int64_t m = m0; m < m1; ++m)
                        for (int64_t v = part ? ends[part - 1] : 0; v < ends[part]; ++v) {
                            int64_t o = 0, col = v;
                            while (col >= outs[size_t(o)].w.rows) col -= outs[size_t(o)].w.rows, ++o;
                            outs[size_t(o)].y[m * outs[size_t(o)].w.rows + col] *= 2.0f;
                        }
                },
                x, M, pool, nullptr, before);
        }
        for (int64_t m = 0; m < M; ++m) {
            int64_t at = 0;
            for (int i = 0; i < 3; ++i) {
                const int64_t n = outs[size_t(i)].w.rows;
                std::memcpy(out + m * width + at, outs[size_t(i)].y + m * n, size_t(n) * sizeof(float));
                at += n;
            }
        }
        return;
    }
    case Entry::Glu: {
        const int64_t n = w.m[3].view.rows;
        float *gate = product(n), *up = product(n), *act = product(n);
        // Gate and up of different types: two conversions of each row.
        matmulGlu({w.m[3].view, gate}, {w.m[0].view, up}, swiglu, act, x, M, pool, nullptr, before);
        for (int64_t m = 0; m < M; ++m) {
            std::memcpy(out + m * width, gate + m * n, size_t(n) * sizeof(float));
            std::memcpy(out + m * width + n, up + m * n, size_t(n) * sizeof(float));
            std::memcpy(out + m * width + 2 * n, act + m * n, size_t(n) * sizeof(float));
        }
        return;
    }
    }
}

std::vector<Entry> entries(const Weights& w) {
    std::vector<Entry> all = {Entry::Matmul, Entry::Many, Entry::ManyThen, Entry::Glu};
    if (w.packed.tiles) all.push_back(Entry::PackedHead);
    return all;
}

// The prologue: row m of x from the raw rows, as a residual norm writes it.
void writeRow(const std::vector<float>& raw, float* x, int64_t m) {
    for (int64_t k = 0; k < K; ++k) x[m * K + k] = raw[size_t(m * K + k)] * 0.5f + 0.25f;
}

} // namespace

WEIR_TEST(MatmulRowPrologue, everyEntryGivesTheBitsOfThePrologueRunFirst) {
    std::mt19937 rng(5);
    const Weights w(rng);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    weirtest::forEachKernelPath([&](const std::string& path) {
        for (const int threads : {1, 2, 4}) {
            ThreadPool pool(threads);
            for (const int64_t M : {1, 2, 5, 16, 40, 70}) {
                std::vector<float> raw(size_t(M * K));
                for (float& v : raw) v = nd(rng);
                for (const Entry e : entries(w)) {
                    const int64_t width = widthOf(e, w);
                    // Reference: every row written first, no prologue.
                    std::vector<float> x0(size_t(M * K)), want(size_t(M * width));
                    for (int64_t m = 0; m < M; ++m) writeRow(raw, x0.data(), m);
                    run(e, w, x0.data(), M, want.data(), pool, nullptr);
                    // With the prologue: x starts as garbage the prologue overwrites.
                    std::vector<float> x(size_t(M * K), std::nanf("")), got(size_t(M * width));
                    std::unique_ptr<std::atomic<int>[]> calls(new std::atomic<int>[size_t(M)]);
                    for (int64_t m = 0; m < M; ++m) calls[size_t(m)].store(0);
                    const RowPrologue before = [&](int64_t b, int64_t e) {
                        for (int64_t m = b; m < e; ++m) {
                            calls[size_t(m)].fetch_add(1);
                            writeRow(raw, x.data(), m);
                        }
                    };
                    run(e, w, x.data(), M, got.data(), pool, &before);
                    const std::string where = path + ", " + nameOf(e) + ", " + std::to_string(threads) + " threads, M = " +
                                              std::to_string(M);
                    int wrongCalls = 0;
                    for (int64_t m = 0; m < M; ++m) wrongCalls += calls[size_t(m)].load() != 1;
                    CHECK_MSG(wrongCalls == 0, where + ": " + std::to_string(wrongCalls) + " rows' prologue not run exactly once");
                    CHECK_MSG(std::memcmp(x.data(), x0.data(), x.size() * sizeof(float)) == 0, where + ": rows not written");
                    CHECK_MSG(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0,
                              where + ": differs from the prologue run first");
                }
            }
        }
    });
}

// Row 0's prologue returns only once another thread has taken a row: run by
// the caller before the job (or by one thread alone), it would wait in vain.
WEIR_TEST(MatmulRowPrologue, decodeRowsAreSharedAmongThreads) {
    std::mt19937 rng(6);
    const Weights w(rng);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    ThreadPool pool(4);
    constexpr int64_t M = 16;
    std::vector<float> raw(size_t(M * K));
    for (float& v : raw) v = nd(rng);
    for (const Entry e : entries(w)) {
        std::vector<float> x(size_t(M * K)), out(size_t(M * widthOf(e, w)));
        std::atomic<bool> otherThread{false}, notShared{false};
        std::thread::id first;
        std::atomic<bool> firstKnown{false};
        const RowPrologue before = [&](int64_t begin, int64_t end) {
            if (end != begin + 1) {  // a range of rows: run by one thread, before the job or in it
                notShared.store(true);
                for (int64_t m = begin; m < end; ++m) writeRow(raw, x.data(), m);
                return;
            }
            if (begin == 0) {
                first = std::this_thread::get_id();
                firstKnown.store(true);
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (!otherThread.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
                if (!otherThread.load()) notShared.store(true);  // waited in vain
            } else {
                while (!firstKnown.load()) std::this_thread::yield();
                if (std::this_thread::get_id() != first) otherThread.store(true);
            }
            writeRow(raw, x.data(), begin);
        };
        // RowsFirst hands out rows in order: row 0 to the first thread in.
        const uint64_t trips = weirtest::poolRoundTripsOf([&] { run(e, w, x.data(), M, out.data(), pool, &before); });
        CHECK_MSG(!notShared.load(), std::string(nameOf(e)) + ": the rows were not shared one by one among the threads");
        CHECK_MSG(trips == 1, std::string(nameOf(e)) + ": " + std::to_string(trips) + " round trips, want 1");
    }
}

// Row kernels over many rows (tile GEMMs off): the conversion, once a job of
// its own above 2^18 values, is now inside the product's job.
WEIR_TEST(MatmulRowPrologue, aLargeConversionIsNoRoundTripOfItsOwn) {
    std::mt19937 rng(7);
    // Q4_K: no weight pairs to unpack (a job of its own from 32 rows for the legacy types).
    const Matrix wq = randomMatrix(GgmlType::Q4_K, 2048, 64, rng);
    ThreadPool pool(2);
    const int64_t M = 160;  // 160 x 2048 values: above 2^18
    std::vector<float> x(size_t(M * 2048)), y(size_t(M * 64));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : x) v = nd(rng);
    const bool tiles = tileGemmActive();
    forceTileGemm(false);
    const uint64_t trips = weirtest::poolRoundTripsOf([&] { matmul(wq.view, x.data(), M, y.data(), pool); });
    forceTileGemm(tiles);
    CHECK_EQ(trips, uint64_t(1));
}
