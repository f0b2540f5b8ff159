// CpuBackend::projectNormRopeAndStore runs the head norms, RoPE, the query
// scaling and the cache stores inside the q/k/v projections' pool job. Its
// q, k and v and the cache rows it writes must be what matmulMany followed by
// normRopeAndStore (ropeAndStore without head norms) give, bit for bit, on
// any thread and token count, in a full-attention layer and a window layer
// (whose pool has page tables of its own), and it must take one round trip.
#include "tests/support/weir_test.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/cpu_backend.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weir;

namespace {

using weirtest::randomMatrix;
using weirtest::RandomMatrix;

constexpr int32_t kPageSize = 4, kPagesPerSeq = 12, kSequences = 5;

// Two layers' K/V rows: layer 0 in the full pool, a sequence's pages in
// order; layer 1 in a window pool whose tables list other pages, backwards,
// with the first page released.
class TwoPoolKv : public KvAccess {
public:
    TwoPoolKv(int64_t rowElems, KvDtype dtype) {
        for (int layer = 0; layer < 2; ++layer) {
            storage_[layer].dtype = dtype;
            storage_[layer].rowElems = rowElems;
            storage_[layer].rowBytes = kvRowBytes(dtype, rowElems);
            const size_t bytes = size_t(kSequences * kPagesPerSeq * kPageSize) * storage_[layer].rowBytes;
            k_[layer].assign(bytes, 0xAB);
            v_[layer].assign(bytes, 0xCD);
            storage_[layer].k = k_[layer].data();
            storage_[layer].v = v_[layer].data();
        }
        for (int32_t s = 0; s < kSequences; ++s)
            for (int32_t p = 0; p < kPagesPerSeq; ++p) {
                full_.push_back(s * kPagesPerSeq + p);
                window_.push_back(p == 0 ? -1 : kSequences * kPagesPerSeq - 1 - (s * kPagesPerSeq + p));
            }
    }
    int32_t pageSize() const override { return kPageSize; }
    KvLayerStorage layer(int32_t layer) const override { return storage_[layer]; }
    std::span<const int32_t> pageTable(int32_t layer, int32_t seq) const override {
        const std::vector<int32_t>& t = layer == 0 ? full_ : window_;
        return {t.data() + size_t(seq * kPagesPerSeq), size_t(kPagesPerSeq)};
    }
    const std::vector<uint8_t>& k(int layer) const { return k_[layer]; }
    const std::vector<uint8_t>& v(int layer) const { return v_[layer]; }

private:
    KvLayerStorage storage_[2];
    std::vector<uint8_t> k_[2], v_[2];
    std::vector<int32_t> full_, window_;
};

struct Case {
    const char* name;
    int64_t nHead, nHeadKv, headDim;
    bool headNorms;
    bool neox;
    int32_t nRot;
    float queryScale;
    bool slides;  // layer 1, in the window pool
    GgmlType qType, kType, vType;
    KvDtype kvDtype;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        // Gemma 3 270M's attention: four heads of 256 over one KV head.
        {"Gemma 3 sliding layer", 4, 1, 256, true, true, 256, 0.0625f, true, GgmlType::Q4_K, GgmlType::Q4_K, GgmlType::Q6_K,
         KvDtype::F16},
        {"Gemma 3 global layer, Q8_0 cache", 4, 1, 256, true, true, 256, 0.0625f, false, GgmlType::Q4_K, GgmlType::Q4_K,
         GgmlType::Q8_0, KvDtype::Q8_0},
        {"head norms, heads of 64", 8, 2, 64, true, true, 64, 0.0f, false, GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q8_0,
         KvDtype::Q8_0},
        // Llama: no head norms, adjacent RoPE pairs, partial rotation; heads of
        // 72 values, so the projections' 16-row tiles straddle heads.
        {"no head norms, heads of 72", 6, 2, 72, false, false, 64, 0.125f, true, GgmlType::Q8_0, GgmlType::Q8_0,
         GgmlType::F16, KvDtype::F16},
    };
    return table;
}

// A step of `tokens` tokens over the sequences in turn, each sequence's
// positions going on from its own start.
Batch stepOf(int64_t tokens) {
    Batch b;
    std::vector<int32_t> next(kSequences);
    for (int32_t s = 0; s < kSequences; ++s) next[size_t(s)] = 5 + 3 * s;
    for (int64_t i = 0; i < tokens; ++i) {
        const int32_t s = int32_t(i % std::min<int64_t>(tokens, kSequences));
        b.add(int32_t(i), s, next[size_t(s)]++, true);
    }
    return b;
}

struct Outputs {
    std::vector<float> q, k, v;
    Outputs(int64_t tokens, const Case& c)
        : q(size_t(tokens * c.nHead * c.headDim), -1.0f), k(size_t(tokens * c.nHeadKv * c.headDim), -1.0f),
          v(size_t(tokens * c.nHeadKv * c.headDim), -1.0f) {}
};

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every token's K and V rows in the layer's cache were written.
bool storedEveryToken(const TwoPoolKv& kv, const Batch& b, int32_t layer) {
    const KvLayerStorage st = kv.layer(layer);
    for (const BatchToken& t : b.tokens) {
        const int64_t row = int64_t(kv.pageTable(layer, t.seq)[size_t(t.pos / kPageSize)]) * kPageSize + t.pos % kPageSize;
        const uint8_t* k = kv.k(layer).data() + size_t(row) * st.rowBytes;
        if (std::all_of(k, k + st.rowBytes, [](uint8_t byte) { return byte == 0xAB; })) return false;
    }
    return true;
}

void checkFusedIsSeparate(const Case& c, int threads, int64_t tokens) {
    CpuBackend backend({threads, false});
    const RopeKind ropes[] = {{c.neox, c.nRot, 10000.0f, 1.0f, nullptr}, {c.neox, c.nRot, 1000000.0f, 0.5f, nullptr}};
    backend.setRopeKinds(ropes);
    const int64_t K = 512, hd = c.headDim;
    std::mt19937 rng(uint32_t(7 + tokens));
    const RandomMatrix wq = randomMatrix(c.qType, K, c.nHead * hd, rng), wk = randomMatrix(c.kType, K, c.nHeadKv * hd, rng),
                       wv = randomMatrix(c.vType, K, c.nHeadKv * hd, rng);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(tokens * K)), qNorm(static_cast<size_t>(hd)), kNorm(static_cast<size_t>(hd));
    for (float& v : x) v = nd(rng);
    for (float& v : qNorm) v = 1.0f + 0.5f * nd(rng);
    for (float& v : kNorm) v = 1.0f + 0.5f * nd(rng);
    const HeadNorms norms = c.headNorms ? HeadNorms{qNorm.data(), kNorm.data(), 1e-6f} : HeadNorms{};

    const Batch batch = stepOf(tokens);
    std::vector<int32_t> outputRows;
    for (int64_t i = 0; i < tokens; ++i) outputRows.push_back(int32_t(i));
    TwoPoolKv kvSeparate(c.nHeadKv * hd, c.kvDtype), kvFused(c.nHeadKv * hd, c.kvDtype);
    AttentionLayer a;
    a.layer = c.slides ? 1 : 0;
    a.slides = c.slides;
    a.window = 8;
    a.ropeKind = c.slides ? 0 : 1;
    a.nHead = c.nHead;
    a.nHeadKv = c.nHeadKv;
    a.headDimK = a.headDimV = hd;
    a.queryScale = c.queryScale;
    auto begin = [&](TwoPoolKv& kv) {
        StepInfo step;
        step.batch = &batch;
        step.kv = &kv;
        step.fullLayer = 0;
        step.windowLayer = 1;
        step.outputRows = outputRows;
        backend.beginStep(step);
        a.kv = kv.layer(a.layer);
    };

    Outputs separate(tokens, c), fused(tokens, c);
    begin(kvSeparate);
    const Projection qkv[] = {{wq.view, separate.q.data()}, {wk.view, separate.k.data()}, {wv.view, separate.v.data()}};
    backend.matmulMany(qkv, x.data(), tokens, StepRows::All);
    if (c.headNorms) backend.normRopeAndStore(a, norms, tokens, separate.q.data(), separate.k.data(), separate.v.data());
    else backend.ropeAndStore(a, separate.q.data(), separate.k.data(), separate.v.data());
    backend.endStep();

    begin(kvFused);
    const uint64_t before = kernels::ThreadPool::processCounters().roundTrips;
    backend.projectNormRopeAndStore(a, norms, {wq.view, fused.q.data()}, {wk.view, fused.k.data()},
                                    {wv.view, fused.v.data()}, x.data(), tokens);
    const uint64_t trips = kernels::ThreadPool::processCounters().roundTrips - before;
    backend.endStep();

    const std::string what = std::string(c.name) + ", " + std::to_string(threads) + " threads, " + std::to_string(tokens) +
                             " tokens";
    CHECK_MSG(same(fused.q, separate.q), what + ": q differs");
    CHECK_MSG(same(fused.k, separate.k), what + ": k differs");
    CHECK_MSG(same(fused.v, separate.v), what + ": v differs");
    for (int layer = 0; layer < 2; ++layer) {
        CHECK_MSG(kvFused.k(layer) == kvSeparate.k(layer), what + ": cached K of layer " + std::to_string(layer) + " differs");
        CHECK_MSG(kvFused.v(layer) == kvSeparate.v(layer), what + ": cached V of layer " + std::to_string(layer) + " differs");
    }
    CHECK_MSG(storedEveryToken(kvFused, batch, a.layer), what + ": a token's K row was not stored");
    // One job: the products', their activation rows converted inside it.
    CHECK_MSG(trips == (threads > 1 ? 1u : 0u), what + ": " + std::to_string(trips) + " round trips");
}

} // namespace

WEIR_TEST(CpuProjectNormRopeAndStore, isMatmulManyThenNormRopeAndStoreBitForBit) {
    weirtest::eachRow(cases(), [&](const Case& c) {
        for (const int threads : {1, 2, 3, 4, 7})
            for (const int64_t tokens : {1, 4, 16, 17}) checkFusedIsSeparate(c, threads, tokens);
    });
}
