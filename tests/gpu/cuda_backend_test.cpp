// CudaBackend end to end on a toy attention model: embed, norm, projections,
// RoPE + KV store, paged attention, output gather and logits, over a prefill
// step and several decode steps of two sequences. Checked against the same
// model computed with the CPU kernels, and with graphs on against graphs off
// (the replayed steps must give the eager steps' bits).
#include "tests/gpu/gpu_test_util.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "engine/backend/cuda/cuda_backend.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"
#include "weir/base/error.h"

using namespace weirtest;
using weir::GgmlType;
using weir::cudabackend::CudaBackend;

namespace {

constexpr int32_t kVocab = 64, kEmbd = 128, kHead = 4, kHeadKv = 2, kHd = 32, kPage = 16, kPoolPages = 12;

std::vector<uint8_t> quantizeRows(GgmlType t, const std::vector<float>& w, int64_t rows, int64_t cols) {
    const size_t rb = weir::rowBytes(t, cols);
    std::vector<uint8_t> out(rb * size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
        if (t == GgmlType::Q8_0) weir::kernels::quantizeRowQ8_0(w.data() + r * cols, out.data() + size_t(r) * rb, cols);
        else
            for (int64_t c = 0; c < cols; ++c) {
                const uint16_t h = weir::kernels::f32ToF16(w[size_t(r * cols + c)]);
                std::memcpy(out.data() + size_t(r) * rb + size_t(c) * 2, &h, 2);
            }
    }
    return out;
}

struct HostWeight {
    GgmlType type;
    int64_t rows, cols;
    std::vector<uint8_t> bytes;
    weir::WeightView view() const { return {type, bytes.data(), cols, rows, weir::rowBytes(type, cols)}; }
};

HostWeight makeWeight(GgmlType t, int64_t rows, int64_t cols, uint32_t seed, float scale) {
    return {t, rows, cols, quantizeRows(t, randomFloats(size_t(rows * cols), seed, scale), rows, cols)};
}

// The cache: one layer, F32 rows, page tables per sequence.
class Kv : public weir::KvAccess {
public:
    weir::KvLayerStorage st;
    std::map<int32_t, std::vector<int32_t>> tables;
    int32_t pageSize() const override { return kPage; }
    weir::KvLayerStorage layer(int32_t) const override { return st; }
    std::span<const int32_t> pageTable(int32_t, int32_t seq) const override { return tables.at(seq); }
};

struct Model {
    HostWeight embd = makeWeight(GgmlType::F16, kVocab, kEmbd, 1, 1.0f);
    HostWeight wq = makeWeight(GgmlType::Q8_0, kHead * kHd, kEmbd, 2, 0.2f);
    HostWeight wk = makeWeight(GgmlType::Q8_0, kHeadKv * kHd, kEmbd, 3, 0.2f);
    HostWeight wv = makeWeight(GgmlType::Q8_0, kHeadKv * kHd, kEmbd, 4, 0.2f);
    HostWeight out = makeWeight(GgmlType::Q8_0, kVocab, kHead * kHd, 5, 0.2f);
    std::vector<float> norm = randomFloats(kEmbd, 6, 1.0f);
};

// The toy forward pass through a backend; returns the logits.
struct DeviceModel {
    weir::Backend& b;
    weir::WeightView embd, wq, wk, wv, out;
    const float* norm;
    float *x, *q, *k, *v, *attn, *logits;
    weir::AttentionLayer layer;

    DeviceModel(weir::Backend& backend, const Model& m, Kv& kv) : b(backend) {
        embd = b.adoptWeight(m.embd.view(), weir::WeightRole::Embedding, "embd", false);
        wq = b.adoptWeight(m.wq.view(), weir::WeightRole::Projection, "wq", false);
        wk = b.adoptWeight(m.wk.view(), weir::WeightRole::Projection, "wk", false);
        wv = b.adoptWeight(m.wv.view(), weir::WeightRole::Projection, "wv", false);
        out = b.adoptWeight(m.out.view(), weir::WeightRole::OutputHead, "out", false);
        norm = b.adoptVector(m.norm.data(), kEmbd, "norm");
        const size_t n = 32;
        x = static_cast<float*>(b.allocate(n * kEmbd * 4, "x"));
        q = static_cast<float*>(b.allocate(n * kHead * kHd * 4, "q"));
        k = static_cast<float*>(b.allocate(n * kHeadKv * kHd * 4, "k"));
        v = static_cast<float*>(b.allocate(n * kHeadKv * kHd * 4, "v"));
        attn = static_cast<float*>(b.allocate(n * kHead * kHd * 4, "attn"));
        logits = static_cast<float*>(b.allocate(n * kVocab * 4, "logits"));
        kv.st.rowElems = kHeadKv * kHd;
        kv.st.rowBytes = size_t(kv.st.rowElems) * 4;
        kv.st.dtype = weir::KvDtype::F32;
        kv.st.k = static_cast<uint8_t*>(b.allocate(size_t(kPoolPages) * kPage * kv.st.rowBytes, "K"));
        kv.st.v = static_cast<uint8_t*>(b.allocate(size_t(kPoolPages) * kPage * kv.st.rowBytes, "V"));
        const weir::RopeKind rope{true, kHd, 10000.0f, 1.0f, nullptr};
        b.setRopeKinds({&rope, 1});
        layer.layer = 0;
        layer.kv = kv.st;
        layer.nHead = kHead;
        layer.nHeadKv = kHeadKv;
        layer.headDimK = layer.headDimV = kHd;
        layer.scoreScale = 1.0f / std::sqrt(float(kHd));
    }

    // `doubled`: an extra op (x += x after the lookup), so the step's ops
    // differ from those of other steps of its shape.
    std::vector<float> step(const weir::Batch& batch, const Kv& kv, bool doubled = false) {
        std::vector<int32_t> outRows;
        for (size_t i = 0; i < batch.tokens.size(); ++i)
            if (batch.tokens[i].wantLogits) outRows.push_back(int32_t(i));
        weir::StepInfo s;
        s.batch = &batch;
        s.kv = &kv;
        s.fullLayer = 0;
        s.outputRows = outRows;
        const int64_t n = int64_t(batch.tokens.size()), nOut = int64_t(outRows.size());
        b.beginStep(s);
        b.embed(embd, 0.0f, x, kEmbd);
        if (doubled) b.add(x, x, n * kEmbd);
        b.rmsNorm(x, norm, x, n, kEmbd, 1e-6f);
        b.matmul(wq, x, n, q, weir::StepRows::All);
        b.matmul(wk, x, n, k, weir::StepRows::All);
        b.matmul(wv, x, n, v, weir::StepRows::All);
        b.ropeAndStore(layer, q, k, v);
        b.attend(layer, q, attn);
        b.gatherOutputs(attn, kHead * kHd);
        b.matmul(out, attn, nOut, logits, weir::StepRows::Outputs);
        std::vector<float> host(size_t(nOut * kVocab));
        b.readRows(logits, host.data(), host.size());
        b.endStep();
        return host;
    }
};

// The same model on the CPU kernels (f32 cache rows, one query at a time).
struct CpuModel {
    const Model& m;
    std::map<int32_t, std::vector<float>> kRows, vRows;  // per sequence, position-major

    std::vector<float> step(const weir::Batch& batch) {
        std::vector<float> logits;
        const int32_t kvDim = kHeadKv * kHd;
        std::vector<float> x(kEmbd), q(kHead * kHd), k(static_cast<size_t>(kvDim)), v(static_cast<size_t>(kvDim)), cs(kHd);
        std::vector<std::vector<float>> qs;
        for (const auto& t : batch.tokens) {
            weir::kernels::dequantizeRow(GgmlType::F16, m.embd.bytes.data() + size_t(t.token) * weir::rowBytes(GgmlType::F16, kEmbd),
                                         x.data(), kEmbd);
            weir::kernels::rmsNorm(x.data(), m.norm.data(), x.data(), kEmbd, 1e-6f);
            auto mat = [&](const HostWeight& w, const float* in, float* o) {
                for (int64_t r = 0; r < w.rows; ++r)
                    o[r] = weir::kernels::dotRowF32(w.type, w.bytes.data() + size_t(r) * weir::rowBytes(w.type, w.cols), in, w.cols);
            };
            mat(m.wq, x.data(), q.data());
            mat(m.wk, x.data(), k.data());
            mat(m.wv, x.data(), v.data());
            weir::kernels::RopeParams p;
            p.nRot = kHd;
            weir::kernels::ropeAngles(p, t.pos, cs.data());
            weir::kernels::ropeApply(q.data(), kHead, kHd, kHd, true, cs.data());
            weir::kernels::ropeApply(k.data(), kHeadKv, kHd, kHd, true, cs.data());
            auto& kr = kRows[t.seq];
            auto& vr = vRows[t.seq];
            kr.resize(size_t(t.pos + 1) * size_t(kvDim));
            vr.resize(kr.size());
            std::copy(k.begin(), k.end(), kr.begin() + int64_t(t.pos) * kvDim);
            std::copy(v.begin(), v.end(), vr.begin() + int64_t(t.pos) * kvDim);
            qs.push_back(q);
        }
        for (size_t i = 0; i < batch.tokens.size(); ++i) {
            const auto& t = batch.tokens[i];
            if (!t.wantLogits) continue;
            std::vector<float> attn(kHead * kHd);
            for (int32_t h = 0; h < kHead; ++h) {
                const int32_t kvh = h / (kHead / kHeadKv);
                std::vector<double> sc;
                for (int32_t p = 0; p <= t.pos; ++p) {
                    double dot = 0;
                    for (int32_t d = 0; d < kHd; ++d)
                        dot += double(qs[i][size_t(h * kHd + d)]) * kRows[t.seq][size_t(p * kvDim + kvh * kHd + d)];
                    sc.push_back(dot / std::sqrt(double(kHd)));
                }
                const double mx = *std::max_element(sc.begin(), sc.end());
                double sum = 0;
                for (double& s : sc) sum += (s = std::exp(s - mx));
                for (int32_t d = 0; d < kHd; ++d) {
                    double a = 0;
                    for (int32_t p = 0; p <= t.pos; ++p) a += sc[size_t(p)] * vRows[t.seq][size_t(p * kvDim + kvh * kHd + d)];
                    attn[size_t(h * kHd + d)] = float(a / sum);
                }
            }
            for (int64_t r = 0; r < kVocab; ++r)
                logits.push_back(weir::kernels::dotRowF32(GgmlType::Q8_0, m.out.bytes.data() + size_t(r) * weir::rowBytes(GgmlType::Q8_0, kHead * kHd),
                                                          attn.data(), kHead * kHd));
        }
        return logits;
    }
};

} // namespace

// Tolerance against the CPU (f32 activations, double attention): 3e-2 of the
// largest logit. The prefill step's 26 rows take the cuBLAS path (f16
// activations and weights, 2^-11 relative each), decode steps the int8
// activation GEMV (each activation within 1/254 of its block's largest),
// and both reach the cached K/V rows every later step reads. A wrong row,
// position or page would be off by the logits' own size.
WEIR_TEST(CudaBackend, toyModelMatchesCpuAndGraphsReplayExactly) {
    REQUIRE_CUDA_DEVICE();
    Model m;
    weir::CudaBackendOptions withGraphs, eager;
    eager.graphs = false;
    CudaBackend gb(withGraphs), eb(eager);
    Kv gkv, ekv;
    // Sequence 0 on pages 7, 2; sequence 1 on pages 5, 9, 0 (shuffled, shared pool).
    gkv.tables = ekv.tables = {{0, {7, 2}}, {1, {5, 9, 0}}};
    DeviceModel g(gb, m, gkv), e(eb, m, ekv);
    CpuModel cpu{m, {}, {}};

    // Prefill: 6 tokens of sequence 0, 20 of sequence 1 (26 rows: the cuBLAS path), last of each wants logits.
    weir::Batch prefill;
    for (int32_t p = 0; p < 6; ++p) prefill.add((p * 7 + 1) % kVocab, 0, p, p == 5);
    for (int32_t p = 0; p < 20; ++p) prefill.add((p * 5 + 3) % kVocab, 1, p, p == 19);
    std::vector<weir::Batch> steps{prefill};
    for (int32_t s = 0; s < 5; ++s) {
        weir::Batch d;
        d.add((s * 11 + 2) % kVocab, 1, 20 + s, true);
        d.add((s * 13 + 4) % kVocab, 0, 6 + s, true);
        steps.push_back(d);
    }
    for (size_t s = 0; s < steps.size(); ++s) {
        const auto lg = g.step(steps[s], gkv), le = e.step(steps[s], ekv), lc = cpu.step(steps[s]);
        REQUIRE_EQ(lg.size(), lc.size());
        CHECK_MSG(lg == le, str("step ", s, ": graph and eager logits differ"));
        float big = 0;
        for (float v : lc) big = std::max(big, std::fabs(v));
        for (size_t i = 0; i < lc.size(); ++i) CHECK_NEAR(lg[i], lc[i], 3e-2 * big);
    }
    // Decode steps 1..5 share a key: 1 ran eagerly, 2 was captured, 3..5 replayed.
    CHECK_EQ(gb.graphCount(), size_t(1));
    CHECK_EQ(gb.replayedSteps(), uint64_t(3));
    CHECK_EQ(eb.graphCount(), size_t(0));

    // A step of the captured shape whose ops differ (one more op): it runs as
    // it came, not as the graph, and the key is captured again.
    {
        weir::Batch d;
        d.add(3, 1, 25, true);
        d.add(4, 0, 11, true);
        CHECK(g.step(d, gkv, true) == e.step(d, ekv, true));
        CHECK_EQ(gb.mismatchedSteps(), uint64_t(1));
        CHECK_EQ(gb.replayedSteps(), uint64_t(3));
        CHECK_EQ(gb.graphCount(), size_t(0));
        for (int32_t s = 0; s < 3; ++s) {  // eager, captured, replayed
            weir::Batch more;
            more.add(5 + s, 1, 26 + s, true);
            more.add(6 + s, 0, 12 + s, true);
            CHECK(g.step(more, gkv) == e.step(more, ekv));
        }
        CHECK_EQ(gb.replayedSteps(), uint64_t(4));
        CHECK_EQ(gb.graphCount(), size_t(1));
    }

    // Releasing memory drops the graphs (they may hold its pointer); steps go on.
    void* spare = gb.allocate(4096, "spare");
    gb.release(spare);
    CHECK_EQ(gb.graphCount(), size_t(0));
    weir::Batch d;
    d.add(9, 1, 29, true);
    d.add(8, 0, 15, true);
    CHECK(g.step(d, gkv) == e.step(d, ekv));
}

WEIR_TEST(CudaBackend, refusesWhatItCannotHold) {
    REQUIRE_CUDA_DEVICE();
    CudaBackend b(weir::CudaBackendOptions{});
    // A weight far larger than any GPU: the message names it and the size.
    std::vector<uint8_t> tiny(64);
    weir::WeightView huge{GgmlType::Q8_0, tiny.data(), 4096, int64_t(1) << 30, weir::rowBytes(GgmlType::Q8_0, 4096)};
    try {
        b.adoptWeight(huge, weir::WeightRole::Projection, "blk.0.ffn_up.weight", false);
        FAIL("adopted an impossible weight");
    } catch (const weir::Error& e) {
        const std::string what = e.what();
        CHECK(what.find("blk.0.ffn_up.weight") != std::string::npos);
        CHECK(what.find("MiB") != std::string::npos);
    }
    CHECK(b.allocate(size_t(1) << 50, "too much") == nullptr);
    // The same host rows adopted twice (a tied output head): one device copy.
    const HostWeight table = makeWeight(GgmlType::Q8_0, 8, 64, 3, 1.0f);
    const weir::WeightView a = b.adoptWeight(table.view(), weir::WeightRole::Embedding, "token_embd.weight", false);
    const weir::WeightView o = b.adoptWeight(table.view(), weir::WeightRole::OutputHead, "output (tied)", false);
    CHECK(a.data == o.data);
    CHECK(a.data != table.view().data);
    CHECK_THROWS(weir::Error, CudaBackend(weir::CudaBackendOptions{999, true}));
}
