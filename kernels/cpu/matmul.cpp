// matmul(): converts the activations once (kernel_table.h says to what), then
// runs a row-dot kernel over tiles of (activation rows x weight rows) on the
// pool. Each kernel call reads one weight row for up to four activation rows.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "weir/base/error.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/rows_first.h"
#include "kernels/cpu/weight_tiles.h"

namespace weir::kernels {

namespace {

// A tile is up to kTileRows weight rows times kTileActs activation rows. The
// activation rows of a tile (64 rows of K int8 values) stay in L2 while the
// weight rows stream past; tiles are numbered activation-tile-major so each
// thread's contiguous share mostly reuses one activation tile.
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileActs = 64;

// Weight rows per item of a product: kTileRows, or fewer (halved down to 4,
// even for the pair kernels) while that leaves fewer than 4 items per thread:
// a 640-row projection is 40 tiles of 16, so on 16 threads some took 3 and
// most 2, and the job lasted a third longer than its share. Which rows an
// item holds never changes a result (each weight row is its own dot).
int64_t itemRows(int64_t N, int64_t mTiles, int threads) {
    int64_t rows = kTileRows;
    while (rows > 4 && ((N + rows - 1) / rows) * mTiles < 4 * int64_t(threads)) rows /= 2;
    return rows;
}

// Packing weight pairs for the two-row VNNI kernel pays from this many
// activation rows, and is skipped for matrices whose packed copy would
// exceed the bound (e.g. a vocabulary-sized output head).
constexpr int64_t kPackMinActs = 32;
constexpr size_t kPackMaxBytes = size_t(32) << 20;

// Tiles take 32 activation rows at a time: from 32 rows they beat the row
// kernels even with a part-empty last tile. Activation rows per work
// item (with one 16-row weight tile): their bytes stay in L2 meanwhile.
constexpr int64_t kTileMinActs = 32;
constexpr int64_t kTileItemActs = 256;

// Activation rows per item of a tile GEMM: kTileItemActs, or fewer (halved
// down to 64) while that leaves fewer than 4 items per thread: a 640-row
// projection of a 512-token prompt is 20 weight-tile pairs x 2 = 40 items,
// so on 16 threads some took 3 and most 2 (now 80 items of 128 rows). Which
// activation rows an item holds never changes a result (each output is its
// own dot over K).
int64_t tileItemActs(int64_t nPairs, int64_t mPadded, int threads) {
    int64_t acts = kTileItemActs;
    while (acts > 64 && nPairs * ((mPadded + acts - 1) / acts) < 4 * int64_t(threads)) acts /= 2;
    return acts;
}

// The activation conversions of one pool job's products and the work their
// rows need first (RowPrologue), run row by row inside the job (RowsFirst)
// when the pool has threads to share them: a decode step of 16 conversations
// then converts (and norms) one row per thread instead of 16 on the caller.
struct JobConversions {
    struct Conversion {
        const float* x = nullptr;
        uint8_t* rows = nullptr;
        size_t stride = 0;
        detail::ConvertRowFn convert = nullptr;
        bool biased = false;             // avx512BiasActivations after converting
        GgmlType pairCorrections = GgmlType::F32;  // the weight type whose corrections follow (F32: none)
        int64_t K = 0;
    };
    std::vector<Conversion> list;
    const RowPrologue* before = nullptr;

    void clear(const RowPrologue* prologue) {
        list.clear();
        before = prologue;
    }
    void rows(int64_t m0, int64_t m1) const {
        if (before) (*before)(m0, m1);
        for (const Conversion& c : list)
            for (int64_t m = m0; m < m1; ++m) convertOne(c, m);
    }
    static void convertOne(const Conversion& c, int64_t m) {
        uint8_t* row = c.rows + size_t(m) * c.stride;
        c.convert(c.x + m * c.K, row, c.K);
        if (c.biased) detail::avx512BiasActivations(row, c.K);
        else if (c.pairCorrections != GgmlType::F32)
            detail::avx512PairCorrections(c.pairCorrections, row, c.K, row + detail::pairCorrectionsOffset(c.K));
    }
};

// Whether a job of M activation rows converts (and runs the prologue) inside
// itself: when there is more than one row to share among more than one thread.
bool convertsInJob(int64_t M, const ThreadPool& pool) { return M >= 2 && pool.size() > 1; }

// The prologue of every row, before a product that does not run it itself
// (a prompt's tile GEMMs, several kernels for one call): as its own job.
void runPrologue(const RowPrologue* before, int64_t M, ThreadPool& pool) {
    if (!before || M <= 0) return;
    if (M == 1 || pool.size() == 1) return (*before)(0, M);
    pool.parallelFor(M, [before](int64_t b, int64_t e, int) { (*before)(b, e); });
}

// One entry point's in-job rows on one calling thread (each entry point
// keeps its own thread_local: a job reads its caller's, not each thread's).
// open() before the products are prepared, close() before the job is
// published; every chunk of the job calls ready() on what close() returns.
struct JobRows {
    JobConversions conversions;
    RowsFirst first;
    bool inJob = false;

    // The conversions to prepare the products into, or nullptr after running
    // the prologue here (the products then convert on the caller). always:
    // inside the job even with one row or one thread.
    JobConversions* open(int64_t M, ThreadPool& pool, const RowPrologue* before, bool always = false) {
        inJob = always || convertsInJob(M, pool);
        if (!inJob) {
            runPrologue(before, M, pool);
            return nullptr;
        }
        conversions.clear(before);
        return &conversions;
    }
    RowsFirst* close(int64_t M, const ThreadPool& pool) {
        const JobConversions* c = &conversions;
        if (inJob && (c->before || !c->list.empty()))
            first.reset(M, pool.size(), [c](int64_t m0, int64_t m1) { c->rows(m0, m1); });
        else
            first.reset(0, 1, {});
        return &first;
    }
};

// matmul() in tiles, AMX or VNNI (kernel_table.h: TileGemmOps): activations
// converted into rows padded to a multiple of 32, the weights packed into
// tiles once per call (an even number, the last ones padded with zero rows),
// then (activation chunk x weight tile pair) items on the pool.
void matmulTileGemm(const WeightView& w, const detail::TileGemmOps& ops, const float* x, int64_t M, float* y, ThreadPool& pool,
                    const RowPrologue* before) {
    constexpr int64_t P = 2 * detail::kAmxTileRows;
    const int64_t K = w.cols, N = w.rows;
    const int64_t mPadded = (M + P - 1) / P * P, nPairs = (N + P - 1) / P;
    const size_t actStride = ops.actRowBytes(K);
    thread_local std::vector<uint8_t> actScratch, packScratch;
    if (actScratch.size() < size_t(mPadded) * actStride) actScratch.resize(size_t(mPadded) * actStride);
    uint8_t* act = actScratch.data();
    std::memset(act + size_t(M) * actStride, 0, size_t(mPadded - M) * actStride);
    // The rows are converted (after their prologue) inside the job that packs
    // the weight tiles, which needs none of them: one round trip for both.
    thread_local JobRows job;
    job.open(M, pool, before, true)->list.push_back({x, act, actStride, ops.convertAct, false, GgmlType::F32, K});
    RowsFirst* rows = job.close(M, pool);
    const size_t tileBytes = ops.packedTileBytes(K);
    if (packScratch.size() < size_t(2 * nPairs) * tileBytes) packScratch.resize(size_t(2 * nPairs) * tileBytes);
    uint8_t* packed = packScratch.data();
    pool.parallelFor(2 * nPairs, [&](int64_t b, int64_t e, int) {
        rows->ready();
        ops.packTiles(w.data, w.rowStride, N, K, b, e, packed);
    });
    const int64_t acts = tileItemActs(nPairs, mPadded, pool.size()), chunks = (mPadded + acts - 1) / acts;
    const auto gemm = amxActive() ? ops.gemmTilePair : ops.gemmTilePairVnni;
    pool.parallelFor(nPairs * chunks, [&](int64_t begin, int64_t end, int) {
        for (int64_t item = begin; item < end; ++item) {
            const int64_t p = item % nPairs, m0 = (item / nPairs) * acts;
            gemm(packed + size_t(2 * p) * tileBytes, act, actStride, m0, std::min(mPadded, m0 + acts), M, K, y + p * P,
                 size_t(N), int(std::min(P, N - p * P)));
        }
    });
}

// matmul() over weights packed at load (weight_tiles.h): activations as
// biased Q8_0 rows, then (weight tile chunk) items, each tile against all
// rows, up to kMaxTileDotRows at a time.
void matmulTiles(const WeightView& w, const detail::TypeOps& ops, const float* x, int64_t M, float* y, ThreadPool& pool,
                 const RowPrologue* before) {
    const int64_t K = w.cols, N = w.rows, nTiles = (N + kWeightTileRows - 1) / kWeightTileRows;
    const size_t actStride = detail::actRowBytes(ops.actType, K), tileBytes = detail::avx512TileBytes(K);
    thread_local std::vector<uint8_t> scratch;
    if (scratch.size() < size_t(M) * actStride) scratch.resize(size_t(M) * actStride);
    uint8_t* act = scratch.data();
    const JobConversions::Conversion c{x, act, actStride, ops.convert, true, GgmlType::F32, K};
    thread_local JobRows job;
    if (JobConversions* later = job.open(M, pool, before)) later->list.push_back(c);
    else
        for (int64_t m = 0; m < M; ++m) JobConversions::convertOne(c, m);
    RowsFirst* rows = job.close(M, pool);
    if (M >= 2 && M <= detail::kMaxTileDotRows && amxActive()) {
        // A few decode rows: one tdpbusd per block for all of them.
        pool.parallelFor(nTiles, [&](int64_t begin, int64_t end, int) {
            rows->ready();
            detail::amxTileDotRange(w.tiles, begin, end, N, act, actStride, int(M), K, y);
        });
        return;
    }
    pool.parallelFor(nTiles, [&](int64_t begin, int64_t end, int) {
        rows->ready();
        for (int64_t t = begin; t < end; ++t) {
            const int cols = int(std::min(kWeightTileRows, N - t * kWeightTileRows));
            for (int64_t m = 0; m < M; m += detail::kMaxTileDotRows) {
                const int nx = int(std::min<int64_t>(detail::kMaxTileDotRows, M - m));
                detail::avx512TileDot(w.tiles + size_t(t) * tileBytes, act + size_t(m) * actStride, actStride, nx, K,
                                      y + m * N + t * kWeightTileRows, size_t(N), cols);
            }
        }
    });
}

detail::RowDotFn pickDot(GgmlType type, const detail::TypeOps& ops) {
    if (activeKernelPath() == KernelPath::Avx2)
        if (detail::RowDotFn f = detail::avx2Dot(type)) return f;
    return ops.dotScalar;
}

// Which of llama.cpp's AVX2 kernels would have computed a row; they sum in
// different orders and we follow them so results stay bit-identical.
enum class LlamaKernel : uint8_t { RowDot, Q4_KFourRows, Q4_KOneRow, Tiled };

bool isKQuant(GgmlType t) { return t == GgmlType::Q4_K || t == GgmlType::Q5_K || t == GgmlType::Q6_K; }

LlamaKernel llamaKernel(const WeightView& w, int64_t n, int64_t index) {
    if (w.type == GgmlType::Q4_K && w.rows % 8 == 0)  // repacked into 8-row interleaved blocks
        return index < n - n % 4 ? LlamaKernel::Q4_KFourRows : LlamaKernel::Q4_KOneRow;
    return n >= 8 ? LlamaKernel::Tiled : LlamaKernel::RowDot;
}

// matmul() on the row kernels (AVX2, AVX-512 VNNI or scalar: everything but
// the tile GEMMs), in two halves so that matmulMany can run several products
// as one pool job: prepare() converts the activations (or takes another
// product's conversion of the same rows) and unpacks weight pairs; run()
// computes items of the (activation tile x weight tile) grid, each on its own.
class RowsProduct {
public:
    // Scratch the product's converted activations and unpacked pairs live in
    // until it has run.
    struct Scratch {
        std::vector<uint8_t> act, pack;
    };
    // later: the job's conversions, to which this product's is added instead
    // of converting now (nullptr: converted here, by the caller). fullTiles:
    // items of kTileRows weight rows whatever the pool (matmulGlu's
    // activation wants spans that start at a multiple of 16).
    void prepare(const WeightView& w, const detail::TypeOps& ops, const float* x, int64_t M, float* y, ThreadPool& pool,
                 const RowGroups* groups, Scratch& scratch, std::span<const RowsProduct> converted,
                 JobConversions* later = nullptr, bool fullTiles = false);
    int64_t items() const { return nTiles_ * mTiles_; }
    int64_t weightTiles() const { return nTiles_; }
    void run(int64_t begin, int64_t end) const;
    // The activation rows [m0, m1) and weight rows [n0, n1) an item covers.
    struct Span {
        int64_t m0, m1, n0, n1;
    };
    Span span(int64_t item) const {
        const int64_t m0 = (item / nTiles_) * kTileActs, n0 = (item % nTiles_) * tileRows_;
        return {m0, std::min(M_, m0 + kTileActs), n0, std::min(w_.rows, n0 + tileRows_)};
    }

private:
    LlamaKernel kernelOf(int64_t m) const {
        return groups_ && groups_->size ? llamaKernel(w_, groups_->size[m], groups_->index[m]) : llamaKernel(w_, M_, m);
    }
    detail::RowDotFn dotFor(LlamaKernel k) const {
        switch (k) {
        case LlamaKernel::Q4_KFourRows: return detail::avx2DotQ4_KInterleaved(true);
        case LlamaKernel::Q4_KOneRow: return detail::avx2DotQ4_KInterleaved(false);
        case LlamaKernel::Tiled: return detail::avx2DotKTiled(w_.type);
        default: return dot_;
        }
    }

    WeightView w_;
    const RowGroups* groups_ = nullptr;
    int64_t M_ = 0;
    float* y_ = nullptr;
    detail::RowDotFn dot_ = nullptr;
    bool followLlama_ = false;
    detail::PairDotFn pair_ = nullptr, pairFn_ = nullptr;
    const uint8_t* packed_ = nullptr;
    size_t packedBytes_ = 0;
    // The activations and what they were converted with: a product whose
    // conversion is the same reads another's rows.
    const uint8_t* act_ = nullptr;
    size_t actStride_ = 0;
    detail::ConvertRowFn convert_ = nullptr;
    bool biasedActs_ = false;
    GgmlType pairCorrections_ = GgmlType::F32;  // the weight type the rows carry corrections for (F32: none)
    int maxRows_ = 1;
    int64_t nTiles_ = 0, mTiles_ = 0;
    int64_t tileRows_ = kTileRows;  // weight rows per item (itemRows)
};

// Whether matmul() takes the row kernels for all M rows of this product.
bool takesRowKernels(const WeightView& w, int64_t M) {
    return !w.tiles && !(M >= kTileMinActs && tileGemmActive() && detail::tileGemmOps(w.type));
}

void matmulRows(const WeightView& w, const detail::TypeOps& ops, const float* x, int64_t M, float* y, ThreadPool& pool,
                const RowGroups* groups, const RowPrologue* before) {
    thread_local RowsProduct::Scratch scratch;
    thread_local JobRows job;
    RowsProduct product;
    product.prepare(w, ops, x, M, y, pool, groups, scratch, {}, job.open(M, pool, before));
    RowsFirst* rows = job.close(M, pool);
    pool.parallelFor(product.items(), [&](int64_t begin, int64_t end, int) {
        rows->ready();
        product.run(begin, end);
    });
}

// matmul()'s refusal of a weight it cannot multiply.
void requireSupported(const WeightView& w) {
    if (matmulSupports(w.type, w.cols)) return;
    const TypeTraits* t = typeTraits(w.type);
    throw Error("matmul: cannot multiply " + std::string(t ? t->name : "unknown type") + " weights with rows of " +
                std::to_string(w.cols) + " elements");
}

void requireMany(std::span<const MatmulOutput> outs) {
    for (const MatmulOutput& o : outs) {
        requireSupported(o.w);
        if (o.w.cols != outs[0].w.cols)
            throw Error("matmulMany: weights of one input must have rows of the same length (" + std::to_string(o.w.cols) +
                        " and " + std::to_string(outs[0].w.cols) + " elements)");
    }
}

// The products of a matmulMany that take the row kernels, prepared for one
// job, their items numbered product after product. A job reads its caller's
// set: a thread_local name inside it would mean each worker's own.
struct ManyProducts {
    std::vector<RowsProduct::Scratch> scratch;
    std::vector<RowsProduct> products;
    std::vector<int64_t> firstItem;   // per product, then the total
    std::vector<int64_t> firstValue;  // per product: where its values start in a row of all outputs laid end to end

    // Runs the products that do not take the row kernels (a prompt's tile
    // GEMMs, a repacked head: large enough to go alone) as matmul() at once
    // and prepares the others.
    // later: as RowsProduct::prepare's.
    void prepare(std::span<const MatmulOutput> outs, const float* x, int64_t M, ThreadPool& pool, const RowGroups* groups,
                 JobConversions* later) {
        if (scratch.size() < outs.size()) scratch.resize(outs.size());
        products.clear();
        firstItem.assign(1, 0);
        firstValue.clear();
        int64_t value = 0;
        for (const MatmulOutput& o : outs) {
            if (o.w.rows <= 0) continue;
            value += o.w.rows;
            if (!takesRowKernels(o.w, M)) {
                matmul(o.w, x, M, o.y, pool, groups);
                continue;
            }
            RowsProduct p;
            p.prepare(o.w, *detail::typeOps(o.w.type), x, M, o.y, pool, groups, scratch[products.size()], products, later);
            products.push_back(p);
            firstItem.push_back(firstItem.back() + p.items());
            firstValue.push_back(value - o.w.rows);
        }
    }
    int64_t items() const { return firstItem.back(); }
    // The product item `item` of the job belongs to.
    size_t productOf(int64_t item) const {
        return size_t(std::upper_bound(firstItem.begin(), firstItem.end(), item) - firstItem.begin()) - 1;
    }
    // Items [begin, end) of the job: the part of each product they cover.
    void run(int64_t begin, int64_t end) const {
        for (size_t i = productOf(begin); i < products.size() && firstItem[i] < end; ++i)
            products[i].run(std::max(begin, firstItem[i]) - firstItem[i], std::min(end, firstItem[i + 1]) - firstItem[i]);
    }
};

// The parts [ends[p - 1], ends[p]) of a row's values that overlap [v0, v1), in order.
template <class Fn>
void forPartsOverlapping(const int64_t* ends, int64_t parts, int64_t v0, int64_t v1, Fn&& fn) {
    for (int64_t p = std::upper_bound(ends, ends + parts, v0) - ends; p < parts && (p ? ends[p - 1] : 0) < v1; ++p) fn(p);
}

} // namespace

bool matmulSupports(GgmlType type, int64_t cols) {
    const TypeTraits* t = typeTraits(type);
    return detail::typeOps(type) && t && cols > 0 && cols % t->blockElems == 0;
}

void matmul(const WeightView& w, const float* x, int64_t M, float* y, ThreadPool& pool, const RowGroups* groups,
            const RowPrologue* before) {
    requireSupported(w);
    if (M <= 0) return;
    if (w.rows <= 0) return runPrologue(before, M, pool);
    const detail::TypeOps& ops = *detail::typeOps(w.type);
    if (w.tiles) return matmulTiles(w, ops, x, M, y, pool, before);
    const detail::TileGemmOps* tiles = M >= kTileMinActs && tileGemmActive() ? detail::tileGemmOps(w.type) : nullptr;
    if (tiles) {
        // Rows of batches of 32+ (prompts) in tiles; rows of smaller ones
        // (decode steps, drafts) keep the kernels they would get alone, so
        // their results do not depend on what shares their step.
        auto onTiles = [&](int64_t m) { return !groups || !groups->size || groups->size[m] >= kTileMinActs; };
        // One kernel for all rows takes the prologue in its job; several
        // (a step with a prompt chunk and decode rows) run it first.
        int64_t firstRun = 1;
        while (firstRun < M && onTiles(firstRun) == onTiles(0)) ++firstRun;
        if (firstRun < M) {
            runPrologue(before, M, pool);
            before = nullptr;
        }
        for (int64_t m0 = 0; m0 < M;) {
            int64_t m1 = m0 + 1;
            while (m1 < M && onTiles(m1) == onTiles(m0)) ++m1;
            if (onTiles(m0) && m1 - m0 >= kTileMinActs) {
                matmulTileGemm(w, *tiles, x + m0 * w.cols, m1 - m0, y + m0 * w.rows, pool, before);
            } else {
                const RowGroups rest{groups ? groups->size + m0 : nullptr, groups ? groups->index + m0 : nullptr};
                matmulRows(w, ops, x + m0 * w.cols, m1 - m0, y + m0 * w.rows, pool, groups ? &rest : nullptr, before);
            }
            m0 = m1;
        }
        return;
    }
    matmulRows(w, ops, x, M, y, pool, groups, before);
}

// Where matmulMany's (and matmulManyThen's) prologue runs: inside the job of
// the row-kernel products when every product is one and the rows are shared
// (returns the conversions to prepare them into), else first, as its own job
// (returns nullptr; the products convert on the caller).
JobConversions* manyConversions(std::span<const MatmulOutput> outs, int64_t M, ThreadPool& pool,
                                const RowPrologue* before, JobRows& job) {
    bool allRows = true, any = false;
    for (const MatmulOutput& o : outs)
        if (o.w.rows > 0) {
            any = true;
            allRows = allRows && takesRowKernels(o.w, M);
        }
    if (!any || !allRows) {
        runPrologue(before, M, pool);
        before = nullptr;
    }
    return job.open(M, pool, before);
}

void matmulMany(std::span<const MatmulOutput> outs, const float* x, int64_t M, ThreadPool& pool, const RowGroups* groups,
                const RowPrologue* before) {
    if (M <= 0) return;
    if (outs.empty()) return runPrologue(before, M, pool);
    requireMany(outs);
    // The products that take the row kernels share one job.
    thread_local ManyProducts many;
    thread_local JobRows jobRows;
    many.prepare(outs, x, M, pool, groups, manyConversions(outs, M, pool, before, jobRows));
    RowsFirst* rows = jobRows.close(M, pool);
    if (many.products.empty()) return;
    const ManyProducts* job = &many;
    pool.parallelFor(job->items(), [job, rows](int64_t begin, int64_t end, int) {
        rows->ready();
        job->run(begin, end);
    });
}

void matmulManyThen(std::span<const MatmulOutput> outs, std::span<const int64_t> partEnds, const MatmulPartFn& after,
                    const float* x, int64_t M, ThreadPool& pool, const RowGroups* groups, const RowPrologue* before) {
    int64_t total = 0;
    for (const MatmulOutput& o : outs) total += std::max<int64_t>(o.w.rows, 0);
    bool cut = !partEnds.empty() && partEnds.back() == total;
    for (size_t p = 0; p < partEnds.size(); ++p) cut = cut && partEnds[p] > (p ? partEnds[p - 1] : 0);
    if (!cut)
        throw Error("matmulManyThen: the part ends must increase to a row's " + std::to_string(total) + " output values");
    if (M <= 0) return;
    requireMany(outs);
    const int64_t* ends = partEnds.data();
    const int64_t parts = int64_t(partEnds.size()), mTiles = (M + kTileActs - 1) / kTileActs;
    bool oneJob = true;
    for (const MatmulOutput& o : outs) oneJob = oneJob && (o.w.rows <= 0 || takesRowKernels(o.w, M));
    if (!oneJob) {
        matmulMany(outs, x, M, pool, groups, before);
        pool.parallelFor(parts * mTiles, [&](int64_t begin, int64_t end, int) {
            for (int64_t j = begin; j < end; ++j) {
                const int64_t m0 = (j % mTiles) * kTileActs;
                after(j / mTiles, m0, std::min(M, m0 + kTileActs));
            }
        });
        return;
    }
    thread_local ManyProducts many;
    thread_local JobRows jobRows;
    // All take the row kernels: none runs here.
    many.prepare(outs, x, M, pool, groups, manyConversions(outs, M, pool, before, jobRows));
    RowsFirst* rows = jobRows.close(M, pool);
    // Per part and activation tile, the weight tiles of its values still to
    // run; the thread that runs the last one sees the others' values
    // (acquire-release) and runs the part's step there.
    thread_local std::vector<int32_t> tilesOfPart;
    tilesOfPart.assign(size_t(parts), 0);
    for (size_t i = 0; i < many.products.size(); ++i) {
        const RowsProduct& p = many.products[i];
        for (int64_t t = 0; t < p.weightTiles(); ++t) {
            const RowsProduct::Span s = p.span(t);  // activation tile 0 of weight tile t
            forPartsOverlapping(ends, parts, many.firstValue[i] + s.n0, many.firstValue[i] + s.n1,
                                [](int64_t part) { ++tilesOfPart[size_t(part)]; });
        }
    }
    thread_local std::unique_ptr<std::atomic<int32_t>[]> pending;
    thread_local int64_t pendingSize = 0;
    if (pendingSize < parts * mTiles) {
        pending = std::make_unique<std::atomic<int32_t>[]>(size_t(parts * mTiles));
        pendingSize = parts * mTiles;
    }
    std::atomic<int32_t>* left = pending.get();  // the caller's: the job runs on other threads
    for (int64_t part = 0; part < parts; ++part)
        for (int64_t mt = 0; mt < mTiles; ++mt)
            left[part * mTiles + mt].store(tilesOfPart[size_t(part)], std::memory_order_relaxed);
    const ManyProducts* job = &many;
    pool.parallelFor(job->items(), [job, ends, parts, mTiles, left, rows, &after](int64_t begin, int64_t end, int) {
        rows->ready();
        size_t i = job->productOf(begin);
        for (int64_t j = begin; j < end; ++j) {
            while (job->firstItem[i + 1] <= j) ++i;
            const int64_t item = j - job->firstItem[i];
            const RowsProduct& product = job->products[i];
            product.run(item, item + 1);
            const RowsProduct::Span s = product.span(item);
            const int64_t tile = s.m0 / kTileActs, first = job->firstValue[i];
            forPartsOverlapping(ends, parts, first + s.n0, first + s.n1, [&](int64_t part) {
                if (left[part * mTiles + tile].fetch_sub(1, std::memory_order_acq_rel) == 1) after(part, s.m0, s.m1);
            });
        }
    });
}

void matmulGlu(const MatmulOutput& gate, const MatmulOutput& up, GluRowFn glu, float* act, const float* x, int64_t M,
               ThreadPool& pool, const RowGroups* groups, const RowPrologue* before) {
    if (gate.w.rows != up.w.rows || gate.w.cols != up.w.cols)
        throw Error("matmulGlu: gate and up weights differ in shape (" + std::to_string(gate.w.rows) + "x" +
                    std::to_string(gate.w.cols) + " and " + std::to_string(up.w.rows) + "x" + std::to_string(up.w.cols) + ")");
    const int64_t N = gate.w.rows;
    if (M <= 0) return;
    if (N <= 0) return runPrologue(before, M, pool);
    const MatmulOutput both[] = {gate, up};
    if (!matmulSupports(gate.w.type, gate.w.cols) || !matmulSupports(up.w.type, up.w.cols) || !takesRowKernels(gate.w, M) ||
        !takesRowKernels(up.w, M)) {
        // A prompt's tile GEMMs (or an unsupported type: matmulMany throws):
        // large enough that the activation's own job hardly shows.
        matmulMany(both, x, M, pool, groups, before);
        pool.parallelFor(M, [&](int64_t b, int64_t e, int) {
            for (int64_t m = b; m < e; ++m) glu(gate.y + m * N, up.y + m * N, act + m * N, N);
        });
        return;
    }
    thread_local RowsProduct::Scratch scratch[2];
    thread_local JobRows job;
    RowsProduct products[2];
    JobConversions* later = job.open(M, pool, before);
    products[0].prepare(gate.w, *detail::typeOps(gate.w.type), x, M, gate.y, pool, groups, scratch[0], {}, later, true);
    products[1].prepare(up.w, *detail::typeOps(up.w.type), x, M, up.y, pool, groups, scratch[1], {products, 1}, later, true);
    RowsFirst* rows = job.close(M, pool);
    // Same shape, same tiling: item i of each covers the same values. Per
    // item, how many of its two products are still to run; the thread that
    // runs the last one sees the other's values (acquire-release) and
    // computes the activation there.
    const int64_t items = products[0].items();
    thread_local std::unique_ptr<std::atomic<int8_t>[]> pending;
    thread_local int64_t pendingSize = 0;
    if (pendingSize < items) {
        pending = std::make_unique<std::atomic<int8_t>[]>(size_t(items));
        pendingSize = items;
    }
    std::atomic<int8_t>* left = pending.get();  // the caller's: the job runs on other threads
    for (int64_t i = 0; i < items; ++i) left[i].store(2, std::memory_order_relaxed);
    // Job items alternate between the products, so a thread's chunk holds
    // both halves of most of its tiles and finishes them while they are in cache.
    pool.parallelFor(2 * items, [&products, left, rows, glu, act, gate, up, N](int64_t begin, int64_t end, int) {
        rows->ready();
        for (int64_t j = begin; j < end; ++j) {
            const int64_t item = j / 2;
            products[j % 2].run(item, item + 1);
            if (left[item].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
            const auto [m0, m1, n0, n1] = products[0].span(item);
            for (int64_t m = m0; m < m1; ++m)
                glu(gate.y + m * N + n0, up.y + m * N + n0, act + m * N + n0, n1 - n0);
        }
    });
}

namespace {

void RowsProduct::prepare(const WeightView& w, const detail::TypeOps& ops, const float* x, int64_t M, float* y,
                          ThreadPool& pool, const RowGroups* groups, Scratch& scratch,
                          std::span<const RowsProduct> converted, JobConversions* later, bool fullTiles) {
    w_ = w;
    groups_ = groups;
    M_ = M;
    y_ = y;
    dot_ = pickDot(w.type, ops);
    followLlama_ = isKQuant(w.type) && activeKernelPath() == KernelPath::Avx2;
    // Two weight rows per call where the CPU has a kernel for it (legacy types only,
    // which never follow llama.cpp's K-quant kernel choice); its activation rows
    // carry per-block corrections after the Q8_0 data.
    pair_ = activeKernelPath() == KernelPath::Avx2 && vnniActive() && !followLlama_ ? detail::avx512PairDotLegacy(w.type)
                                                                                      : nullptr;
    const int64_t K = w.cols, N = w.rows;
    // With enough activation rows the weight pairs are unpacked once per
    // matmul instead of once per 16 activation rows (bounded: the packed copy
    // is ~1.6x the weights), as signed bytes for activations biased to
    // unsigned (kernel_table.h: avx512SignedPackedPairDot). An odd last row
    // goes through the one-row kernel, which wants plain activations: then the
    // unbiased layout.
    packedBytes_ = pair_ ? detail::avx512PackedPairBytes(K) : 0;
    const bool packPairs = pair_ && M >= kPackMinActs && size_t(N / 2) * packedBytes_ <= kPackMaxBytes;
    biasedActs_ = packPairs && N % 2 == 0;

    // 1. Activations in the weight type's partner format.
    convert_ = ops.actType == GgmlType::F32 ? nullptr : ops.convert;
    pairCorrections_ = pair_ && !biasedActs_ ? w.type : GgmlType::F32;
    if (ops.actType == GgmlType::F32) {
        act_ = reinterpret_cast<const uint8_t*>(x);
        actStride_ = size_t(K) * sizeof(float);
    } else {
        actStride_ = pair_ && !biasedActs_ ? detail::pairCorrectionsOffset(K) + detail::pairCorrectionsBytes(K)
                                           : detail::actRowBytes(ops.actType, K);
        act_ = nullptr;
        for (const RowsProduct& p : converted)
            if (p.convert_ == convert_ && p.actStride_ == actStride_ && p.biasedActs_ == biasedActs_ &&
                p.pairCorrections_ == pairCorrections_)
                act_ = p.act_;
        if (!act_) {
            std::vector<uint8_t>& buffer = scratch.act;
            if (buffer.size() < size_t(M) * actStride_) buffer.resize(size_t(M) * actStride_);
            const JobConversions::Conversion c{x, buffer.data(), actStride_, ops.convert, biasedActs_, pairCorrections_, K};
            if (later) {
                later->list.push_back(c);
            } else {
                // One row, or one thread (convertsInJob): nothing to share.
                for (int64_t m = 0; m < M; ++m) JobConversions::convertOne(c, m);
            }
            act_ = c.rows;
        }
    }

    // 1b. The weight pairs, unpacked once for all activation rows.
    packed_ = nullptr;
    pairFn_ = pair_;
    if (packPairs) {
        std::vector<uint8_t>& buffer = scratch.pack;
        if (buffer.size() < size_t(N / 2) * packedBytes_) buffer.resize(size_t(N / 2) * packedBytes_);
        uint8_t* dst = buffer.data();
        const bool biased = biasedActs_;
        pool.parallelFor(N / 2, [&](int64_t b, int64_t e, int) {
            if (biased) detail::avx512PackPairsSigned(w.type, w.data, w.rowStride, K, b, e, dst);
            else detail::avx512PackPairs(w.type, w.data, w.rowStride, K, b, e, dst);
        });
        packed_ = dst;
        pairFn_ = biasedActs_ ? detail::avx512SignedPackedPairDot() : detail::avx512PackedPairDot();
    }

    maxRows_ = activeKernelPath() == KernelPath::Avx2 ? detail::avx2MaxDotRows(w.type) : detail::kMaxDotRows;
    mTiles_ = (M + kTileActs - 1) / kTileActs;
    tileRows_ = fullTiles ? kTileRows : itemRows(N, mTiles_, pool.size());
    nTiles_ = (N + tileRows_ - 1) / tileRows_;
}

// 2. Integer (or float) dot products over tiles.
void RowsProduct::run(int64_t begin, int64_t end) const {
    const int64_t K = w_.cols, N = w_.rows;
    const auto* wdata = static_cast<const uint8_t*>(w_.data);
    for (int64_t item = begin; item < end; ++item) {
        const auto [m0, m1, n0, n1] = span(item);
        for (int64_t m = m0; m < m1;) {
            int nx = int(std::min<int64_t>(maxRows_, m1 - m));
            detail::RowDotFn f = dot_;
            if (followLlama_) {  // rows of one kernel per call
                const LlamaKernel k = kernelOf(m);
                int same = 1;
                while (same < nx && kernelOf(m + same) == k) ++same;
                nx = same;
                f = dotFor(k);
            }
            const uint8_t* a = act_ + size_t(m) * actStride_;
            int64_t n = n0;
            if (pair_)
                for (; n + 1 < n1; n += 2)
                    pairFn_(packed_ ? packed_ + size_t(n / 2) * packedBytes_ : wdata + size_t(n) * w_.rowStride, w_.rowStride, a,
                            actStride_, nx, K, y_ + m * N + n, size_t(N));
            for (; n < n1; ++n)
                f(wdata + size_t(n) * w_.rowStride, a, actStride_, nx, K, y_ + m * N + n, size_t(N));
            m += nx;
        }
    }
}

} // namespace

} // namespace weir::kernels
