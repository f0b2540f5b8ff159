// Paged attention on the GPU against two references: a double-precision
// softmax over the same dequantized K/V rows (tight: the GPU computes in f32
// from exactly those values), and the CPU kernel kernels::attendHead (looser:
// it rounds the query to f16 for F16 keys, quantizes it to Q8_0 for Q8_0
// keys, and accumulates F16 values in f16).
//
// The cache is fragmented: every sequence's pages are scattered over the
// pool in shuffled order, pages wholly before a sliding window are released
// (-1 in the table), and every row the kernel must not read (free pages,
// released ones) holds NaN bytes, so reading one shows in the output.
#include "tests/gpu/gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "kernels/cpu/fp8_e4m3.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/paged_attention.h"

using namespace weirtest;
using weir::kernels::GgmlType;

namespace {

size_t kvBytesOf(GgmlType t, int64_t elems) {
    switch (t) {
    case GgmlType::F16: return size_t(elems) * 2;
    case GgmlType::Q8_0: return size_t(elems / 32) * 34;
    case GgmlType::F32: return size_t(elems) * 4;
    default: return size_t(elems);
    }
}

const char* kvName(GgmlType t) {
    switch (t) {
    case GgmlType::F16: return "f16";
    case GgmlType::Q8_0: return "q8_0";
    case GgmlType::F32: return "f32";
    default: return "fp8";
    }
}

void rowToF32(GgmlType t, const uint8_t* src, float* dst, int64_t n) {
    if (t == GgmlType::E4M3_KV) weir::kernels::fromE4M3Row(src, dst, n);
    else weir::kernels::dequantizeRow(t, src, dst, n);
}

struct Shape {
    int32_t nHead, nHeadKv, headDim;
};

struct Token {
    int32_t seq, pos;
};

struct Outcome {
    double exactWorst = 0.0, cpuWorst = 0.0;  // worst error / its bound
};

// Builds the cache for `seqLens` sequences (positions [0, len) each), runs
// the tokens through pagedAttention and checks every output element.
Outcome runCase(const Shape& s, GgmlType kvt, int32_t window, const std::vector<int32_t>& seqLens,
                const std::vector<Token>& tokens, uint32_t seed) {
    const int32_t pageSize = 16;
    const int64_t hd = s.headDim, rowElems = int64_t(s.nHeadKv) * hd;
    const size_t rowBytes = kvBytesOf(kvt, rowElems);
    std::mt19937 rng(seed);

    // Pages: a shuffled pool with room to spare.
    int32_t pagesNeeded = 0;
    for (int32_t len : seqLens) pagesNeeded += (len + pageSize - 1) / pageSize;
    const int32_t poolPages = pagesNeeded + 17;
    std::vector<int32_t> order(static_cast<size_t>(poolPages));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::vector<int32_t>> tables(seqLens.size());
    size_t next = 0;
    for (size_t q = 0; q < seqLens.size(); ++q)
        for (int32_t p = 0; p < (seqLens[q] + pageSize - 1) / pageSize; ++p) tables[q].push_back(order[next++]);
    // Released pages: wholly before the earliest window start of the sequence's tokens.
    if (window > 0) {
        for (size_t q = 0; q < seqLens.size(); ++q) {
            int32_t earliest = INT32_MAX;
            for (const Token& t : tokens)
                if (t.seq == int32_t(q)) earliest = std::min(earliest, std::max(0, t.pos - window + 1));
            for (int32_t p = 0; p < int32_t(tables[q].size()) && (p + 1) * pageSize <= earliest; ++p) tables[q][size_t(p)] = -1;
        }
    }

    // Rows: NaN bytes everywhere, real rows where a live page holds a position.
    std::vector<uint8_t> kPool(size_t(poolPages) * pageSize * rowBytes, 0xFF), vPool(kPool.size(), 0xFF);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(rowElems));
    for (size_t q = 0; q < seqLens.size(); ++q) {
        for (int32_t p = 0; p < seqLens[q]; ++p) {
            const int32_t page = tables[q][size_t(p / pageSize)];
            if (page < 0) continue;
            const size_t at = (size_t(page) * pageSize + size_t(p % pageSize)) * rowBytes;
            for (auto& x : row) x = normal(rng);
            weir::kernels::storeKvRow(kvt, row.data(), kPool.data() + at, rowElems);
            for (auto& x : row) x = normal(rng);
            weir::kernels::storeKvRow(kvt, row.data(), vPool.data() + at, rowElems);
        }
    }

    // Metadata: positions, per-token table offsets, tables.
    const int64_t n = int64_t(tokens.size());
    std::vector<int32_t> meta(size_t(2 * n));
    std::vector<int32_t> tableAt(seqLens.size());
    for (size_t q = 0; q < seqLens.size(); ++q) {
        tableAt[q] = int32_t(meta.size());
        meta.insert(meta.end(), tables[q].begin(), tables[q].end());
    }
    for (int64_t i = 0; i < n; ++i) {
        meta[size_t(i)] = tokens[size_t(i)].pos;
        meta[size_t(n + i)] = tableAt[size_t(tokens[size_t(i)].seq)];
    }
    const auto q = randomFloats(size_t(n * s.nHead * hd), seed + 1);

    weir::cuda::AttendShape shape;
    shape.nHead = s.nHead;
    shape.nHeadKv = s.nHeadKv;
    shape.headDimK = shape.headDimV = s.headDim;
    shape.window = window;
    shape.scale = 1.0f / std::sqrt(float(hd));
    DeviceBytes dq(q), dmeta(meta), dk(kPool), dv(vPool), dout(size_t(n * s.nHead * hd) * 4, 0xFF),
        scratch(std::max<size_t>(weir::cuda::attendScratchBytes(n, shape), 4));
    weir::cuda::PagedKvRead kv{dk.as<uint8_t>(), dv.as<uint8_t>(), kvt, rowBytes, pageSize};
    weir::cuda::pagedAttention(dq.as<float>(), dout.as<float>(), n, dmeta.as<int32_t>(),
                               {dmeta.as<int32_t>(), dmeta.as<int32_t>() + n}, kv, shape, scratch.as<float>(), nullptr);
    const auto out = dout.read<float>();

    // References.
    const double cpuRel = kvt == GgmlType::Q8_0 ? 5e-2 : kvt == GgmlType::F16 ? 3e-2 : 1e-4;
    Outcome o;
    std::vector<float> cpuScratch(weir::kernels::attendScratchFloats(hd, hd)), cpuOut(static_cast<size_t>(hd)), kr(static_cast<size_t>(hd)),
        vr(static_cast<size_t>(hd));
    const int32_t group = s.nHead / s.nHeadKv;
    for (int64_t i = 0; i < n; ++i) {
        const Token& t = tokens[size_t(i)];
        const auto& table = tables[size_t(t.seq)];
        const int32_t first = window > 0 ? std::max(0, t.pos - window + 1) : 0;
        for (int32_t h = 0; h < s.nHead; ++h) {
            const int32_t kvh = h / group;
            const float* qh = q.data() + (i * s.nHead + h) * hd;
            const size_t offset = kvBytesOf(kvt, int64_t(kvh) * hd);
            // Double precision over the dequantized rows.
            std::vector<double> scores, acc(size_t(hd), 0.0);
            double maxV = 0.0;
            for (int32_t p = first; p <= t.pos; ++p) {
                const size_t at = (size_t(table[size_t(p / pageSize)]) * pageSize + size_t(p % pageSize)) * rowBytes + offset;
                rowToF32(kvt, kPool.data() + at, kr.data(), hd);
                double dot = 0.0;
                for (int64_t d = 0; d < hd; ++d) dot += double(qh[d]) * kr[size_t(d)];
                scores.push_back(dot * shape.scale);
            }
            const double m = *std::max_element(scores.begin(), scores.end());
            double sum = 0.0;
            for (int32_t p = first; p <= t.pos; ++p) {
                const size_t at = (size_t(table[size_t(p / pageSize)]) * pageSize + size_t(p % pageSize)) * rowBytes + offset;
                rowToF32(kvt, vPool.data() + at, vr.data(), hd);
                const double w = std::exp(scores[size_t(p - first)] - m);
                sum += w;
                for (int64_t d = 0; d < hd; ++d) {
                    acc[size_t(d)] += w * vr[size_t(d)];
                    maxV = std::max(maxV, std::fabs(double(vr[size_t(d)])));
                }
            }
            weir::kernels::PagedRows kRows, vRows;
            kRows.base = kPool.data();
            vRows.base = vPool.data();
            kRows.rowBytes = vRows.rowBytes = rowBytes;
            kRows.offset = vRows.offset = offset;
            kRows.pages = vRows.pages = table.data();
            kRows.pageSize = vRows.pageSize = pageSize;
            kRows.type = vRows.type = kvt;
            weir::kernels::attendHead(qh, hd, hd, kRows, vRows, first, t.pos, shape.scale, cpuOut.data(), cpuScratch.data());
            const float* got = out.data() + (i * s.nHead + h) * hd;
            for (int64_t d = 0; d < hd; ++d) {
                const double exact = acc[size_t(d)] / sum;
                const double exactBound = 5e-5 * maxV + 1e-7, cpuBound = cpuRel * maxV + 1e-7;
                const double e1 = std::fabs(got[d] - exact), e2 = std::fabs(double(got[d]) - cpuOut[size_t(d)]);
                if (!(e1 <= exactBound) || !(e2 <= cpuBound)) {
                    FAIL(str(kvName(kvt), " heads ", s.nHead, "/", s.nHeadKv, " dim ", hd, " window ", window, ": token ", i,
                             " (seq ", t.seq, " pos ", t.pos, ") head ", h, " dim ", d, ": gpu ", got[d], ", exact ", exact,
                             ", cpu ", cpuOut[size_t(d)]));
                }
                o.exactWorst = std::max(o.exactWorst, e1 / exactBound);
                o.cpuWorst = std::max(o.cpuWorst, e2 / cpuBound);
            }
        }
    }
    return o;
}

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {
        {4, 1, 256},  // Gemma 3 270M
        {9, 3, 64},   // SmolLM2
        {8, 2, 128},  // an 8B Llama's head size and grouping, fewer heads
        {12, 1, 64},  // a group larger than a block's 8 heads
    };
    return s;
}

} // namespace

// A prefill chunk of one sequence beside decodes of two longer ones: few
// tokens, so the keys are split over several blocks and combined.
WEIR_TEST(CudaPagedAttention, mixedBatchSplitKeys) {
    REQUIRE_CUDA_DEVICE();
    const std::vector<int32_t> lens{40, 701, 2101};
    std::vector<Token> tokens;
    for (int32_t p = 33; p < 40; ++p) tokens.push_back({0, p});
    tokens.push_back({1, 700});
    tokens.push_back({2, 2100});
    for (const Shape& s : shapes()) {
        for (GgmlType kvt : {GgmlType::F16, GgmlType::Q8_0, GgmlType::F32, GgmlType::E4M3_KV}) {
            for (int32_t window : {0, 50}) {
                weir::cuda::AttendShape a{s.nHead, s.nHeadKv, s.headDim, s.headDim, window, 1.0f};
                const Outcome o = runCase(s, kvt, window, lens, tokens, uint32_t(s.headDim + window));
                std::printf("  heads %2d/%d dim %3d %-5s window %2d splits %2d: worst %.3f (exact), %.3f (cpu) of the bounds\n",
                            s.nHead, s.nHeadKv, s.headDim, kvName(kvt), window,
                            weir::cuda::attendSplits(int64_t(tokens.size()), a), o.exactWorst, o.cpuWorst);
            }
        }
    }
}

// Decode at a long context: one token, 32 splits of a 9000-key range.
WEIR_TEST(CudaPagedAttention, longContextDecode) {
    REQUIRE_CUDA_DEVICE();
    const Shape s{8, 2, 128};
    for (GgmlType kvt : {GgmlType::F16, GgmlType::E4M3_KV}) {
        const Outcome o = runCase(s, kvt, 0, {9000}, {{0, 8999}}, 77);
        std::printf("  8k decode %-5s: worst %.3f (exact), %.3f (cpu) of the bounds\n", kvName(kvt), o.exactWorst, o.cpuWorst);
    }
}

// A long prefill chunk: enough blocks that the keys are not split.
WEIR_TEST(CudaPagedAttention, longPrefillOneSplit) {
    REQUIRE_CUDA_DEVICE();
    const Shape s{8, 2, 128};
    std::vector<Token> tokens;
    for (int32_t p = 100; p < 400; ++p) tokens.push_back({0, p});
    weir::cuda::AttendShape a{s.nHead, s.nHeadKv, s.headDim, s.headDim, 0, 1.0f};
    CHECK_EQ(weir::cuda::attendSplits(int64_t(tokens.size()), a), 1);
    CHECK_EQ(weir::cuda::attendScratchBytes(int64_t(tokens.size()), a), size_t(0));
    for (int32_t window : {0, 128}) {
        const Outcome o = runCase(s, GgmlType::F16, window, {400}, tokens, 5);
        std::printf("  300-token prefill window %d: worst %.3f (exact), %.3f (cpu) of the bounds\n", window, o.exactWorst,
                    o.cpuWorst);
    }
}

WEIR_TEST(CudaPagedAttention, splitCountDependsOnShapeOnly) {
    REQUIRE_CUDA_DEVICE();
    weir::cuda::AttendShape a{32, 8, 128, 128, 0, 1.0f};
    CHECK_EQ(weir::cuda::attendSplits(1, a), 32);
    CHECK(weir::cuda::attendSplits(16, a) < 32);
    CHECK_EQ(weir::cuda::attendSplits(1000, a), 1);
    CHECK(weir::cuda::attendScratchBytes(1, a) >= size_t(32) * 32 * 130 * 4);
}
