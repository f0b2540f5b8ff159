#include "engine/models/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/cpu/weight_tiles.h"
#include "weir/base/error.h"

namespace weir {

Transformer::Transformer(std::shared_ptr<const gguf::GgufFile> file, ModelConfig config, TransformerWeights weights,
                         TransformerOptions options, std::unique_ptr<ModelTensors> tensors, Backend& backend,
                         const LoadProgress& progress)
    : file_(std::move(file)), config_(std::move(config)), w_(std::move(weights)), opt_(options),
      tensors_(std::move(tensors)), backend_(backend), x_(backend), h_(backend), q_(backend), k_(backend), v_(backend),
      attn_(backend), o_(backend), gate_(backend), up_(backend), act_(backend), logits_(backend) {
    // One RoPE setting per distinct (base, scale) pair across layers.
    std::vector<RopeKind> kinds;
    layerRope_.resize(size_t(config_.nLayer));
    for (int32_t il = 0; il < config_.nLayer; ++il) {
        RopeKind p;
        p.neox = config_.ropeStyle == RopeStyle::NeoX;
        p.nRot = config_.nRot;
        p.base = config_.ropeBase[size_t(il)];
        p.freqScale = config_.ropeScale[size_t(il)];
        p.freqFactors = w_.ropeFreqs;
        size_t kind = 0;
        while (kind < kinds.size() && (kinds[kind].base != p.base || kinds[kind].freqScale != p.freqScale)) ++kind;
        if (kind == kinds.size()) kinds.push_back(p);
        layerRope_[size_t(il)] = int32_t(kind);
        int32_t& probe = config_.layerSlides[size_t(il)] ? windowLayer_ : fullLayer_;
        if (probe < 0) probe = il;
    }
    adoptWeights(progress);
    backend_.setRopeKinds(kinds);
}

void Transformer::adoptWeights(const LoadProgress& progress) {
    const bool mapped = file_ && file_->isMapped();
    uint64_t total = 0, done = 0;
    auto bytesOf = [](const WeightView& w) { return uint64_t(w.rows) * w.rowStride; };
    const bool tied = w_.output.data == w_.tokEmbd.data;
    total += bytesOf(w_.output) + (tied ? 0 : bytesOf(w_.tokEmbd));
    for (const LayerWeights& L : w_.layers)
        for (const WeightView* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down}) total += bytesOf(*w);
    auto adopt = [&](WeightView& w, WeightRole role, const std::string& name) {
        if (!backend_.supportsWeight(w.type, w.cols))
            throw Error(name + ": the " + backend_.device().name + " backend cannot multiply " +
                        (typeTraits(w.type) ? typeTraits(w.type)->name : "this type") + " rows of " +
                        std::to_string(w.cols) + " values");
        const WeightView host = w;
        w = backend_.adoptWeight(w, role, name, mapped);
        // A device copy is all the ops read: the file pages can go back (they
        // are reread from the file if anything ever touches them again).
        if (mapped && !backend_.hostVisible())
            kernels::releaseMappedRange(host.data, size_t(host.rows) * host.rowStride);
        done += bytesOf(w);
        if (progress) progress(done, total);
    };
    auto vec = [&](const float*& v, int64_t n, const std::string& name) {
        if (v) v = backend_.adoptVector(v, n, name);
    };
    const ModelConfig& c = config_;
    // The head first: on the CPU its packed copy gives back the file pages
    // as it goes; a tied embedding table is the same matrix and is adopted once.
    adopt(w_.output, WeightRole::OutputHead, tied ? "token_embd.weight (tied output)" : "output.weight");
    if (tied) {
        w_.tokEmbd = w_.output;
        w_.tokEmbd.tiles = nullptr;  // lookups read rows, never the head's packed copy
    } else {
        adopt(w_.tokEmbd, WeightRole::Embedding, "token_embd.weight");
    }
    vec(w_.outputNorm, c.nEmbd, "output_norm.weight");
    for (int32_t il = 0; il < c.nLayer; ++il) {
        LayerWeights& L = w_.layers[size_t(il)];
        const std::string b = "blk." + std::to_string(il) + ".";
        adopt(L.wq, WeightRole::Projection, b + "attn_q.weight");
        adopt(L.wk, WeightRole::Projection, b + "attn_k.weight");
        adopt(L.wv, WeightRole::Projection, b + "attn_v.weight");
        adopt(L.wo, WeightRole::Projection, b + "attn_output.weight");
        adopt(L.gate, WeightRole::Projection, b + "ffn_gate.weight");
        adopt(L.up, WeightRole::Projection, b + "ffn_up.weight");
        adopt(L.down, WeightRole::Projection, b + "ffn_down.weight");
        vec(L.attnNorm, c.nEmbd, b + "attn_norm.weight");
        vec(L.bq, c.nHead * c.headDimK, b + "attn_q.bias");
        vec(L.bk, c.nHeadKv * c.headDimK, b + "attn_k.bias");
        vec(L.bv, c.nHeadKv * c.headDimV, b + "attn_v.bias");
        vec(L.bo, c.nEmbd, b + "attn_output.bias");
        vec(L.qNorm, c.headDimK, b + "attn_q_norm.weight");
        vec(L.kNorm, c.headDimK, b + "attn_k_norm.weight");
        vec(L.postAttnNorm, c.nEmbd, b + "post_attention_norm.weight");
        vec(L.ffnNorm, c.nEmbd, b + "ffn_norm.weight");
        vec(L.postFfnNorm, c.nEmbd, b + "post_ffw_norm.weight");
    }
}

void Transformer::reserve(int64_t n) {
    if (n <= capTokens_) return;
    const ModelConfig& c = config_;
    const size_t N = size_t(n), f = sizeof(float);
    x_.ensure(N * c.nEmbd * f, "activations (x)");
    h_.ensure(N * c.nEmbd * f, "activations (h)");
    o_.ensure(N * c.nEmbd * f, "activations (o)");
    q_.ensure(N * c.nHead * c.headDimK * f, "queries");
    k_.ensure(N * c.nHeadKv * c.headDimK * f, "keys");
    v_.ensure(N * c.nHeadKv * c.headDimV * f, "values");
    attn_.ensure(N * c.nHead * c.headDimV * f, "attention output");
    gate_.ensure(N * c.nFf * f, "FFN gate");
    up_.ensure(N * c.nFf * f, "FFN up");
    act_.ensure(N * c.nFf * f, "FFN activation");
    outRows_.reserve(N);
    capTokens_ = n;
}

void Transformer::checkBatch(const Batch& batch, const KvAccess& kv) const {
    const ModelConfig& c = config_;
    const int32_t ps = kv.pageSize();
    if (ps <= 0) throw Error("KV cache page size must be positive");
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const KvLayerStorage st = kv.layer(il);
        if (!st.k || !st.v) throw Error("KV cache has no storage for layer " + std::to_string(il));
        if (!backend_.supportsKv(st.dtype))
            throw Error(std::string("KV cache dtype ") + kvDtypeName(st.dtype) + " is not supported by the " +
                        (backend_.device().kind == DeviceKind::Cpu ? "CPU" : "GPU") + " attention");
        if (st.rowElems != c.kvRowElems() || st.rowBytes < kvRowBytes(st.dtype, st.rowElems))
            throw Error("KV cache rows of layer " + std::to_string(il) + " do not match the model (" +
                        std::to_string(st.rowElems) + " elements, model needs " + std::to_string(c.kvRowElems()) + ")");
    }
    // One layer of each kind is enough: layers of a kind share a pool and its page tables.
    const int32_t probe[2] = {fullLayer_, windowLayer_};
    for (size_t i = 0; i < batch.tokens.size(); ++i) {
        const BatchToken& t = batch.tokens[i];
        if (t.token < 0 || t.token >= c.nVocab)
            throw Error("batch token " + std::to_string(i) + ": id " + std::to_string(t.token) + " outside the vocabulary");
        if (t.pos < 0 || t.seq < 0) throw Error("batch token " + std::to_string(i) + ": negative position or sequence");
        for (int kind = 0; kind < 2; ++kind) {
            if (probe[kind] < 0) continue;
            const auto table = kv.pageTable(probe[kind], t.seq);
            const int32_t first = kind ? std::max(0, t.pos - c.slidingWindow + 1) : 0;
            const size_t last = size_t(t.pos / ps);
            if (table.size() <= last)
                throw Error("sequence " + std::to_string(t.seq) + " has no KV page for position " + std::to_string(t.pos));
            for (size_t p = size_t(first / ps); p <= last; ++p)
                if (table[p] < 0)
                    throw Error("sequence " + std::to_string(t.seq) + ": KV page " + std::to_string(p) + " released but still needed at position " +
                                std::to_string(t.pos));
        }
    }
}

void Transformer::attentionLayer(int32_t il, const float* h, int64_t n, KvAccess& kv) {
    const ModelConfig& c = config_;
    const LayerWeights& L = w_.layers[size_t(il)];
    const int64_t hd = c.headDimK;
    AttentionLayer a;
    a.layer = il;
    a.kv = kv.layer(il);
    a.slides = c.layerSlides[size_t(il)];
    a.window = c.slidingWindow;
    a.ropeKind = layerRope_[size_t(il)];
    a.nHead = c.nHead;
    a.nHeadKv = c.nHeadKv;
    a.headDimK = c.headDimK;
    a.headDimV = c.headDimV;
    a.queryScale = opt_.scaleQueryFirst ? c.attnScale : 0.0f;
    a.scoreScale = opt_.scaleQueryFirst ? 1.0f : c.attnScale;

    float *q = q_.floats(), *k = k_.floats(), *v = v_.floats();
    const Projection pq{L.wq, q}, pk{L.wk, k}, pv{L.wv, v};
    // q, k and v from h, then the head norms (every head of every token is a
    // row), RoPE and the cache rows: one op unless biases come in between.
    const HeadNorms norms{L.qNorm, L.kNorm, c.normEps};
    if (!L.bq && !L.bk && !L.bv) {
        backend_.projectNormRopeAndStore(a, norms, pq, pk, pv, h, n);
    } else {
        const Projection qkv[] = {pq, pk, pv};
        backend_.matmulMany(qkv, h, n, StepRows::All);
        if (L.bq) backend_.addBias(q, L.bq, n, c.nHead * hd);
        if (L.bk) backend_.addBias(k, L.bk, n, c.nHeadKv * hd);
        if (L.bv) backend_.addBias(v, L.bv, n, c.nHeadKv * c.headDimV);
        if (L.qNorm || L.kNorm) backend_.normRopeAndStore(a, norms, n, q, k, v);
        else backend_.ropeAndStore(a, q, k, v);
    }
    backend_.attend(a, q, attn_.floats());
}

void Transformer::forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits) {
    // logits keeps its size until the head writes it: clearing and growing it
    // again would zero every value first (16 MB for 16 rows of Gemma 3's
    // vocabulary: about a millisecond a step on the driving thread alone).
    hiddenRows_ = 0;
    int64_t n = int64_t(batch.tokens.size());
    if (n == 0) {
        logits.clear();
        return;
    }
    checkBatch(batch, kv);
    reserve(n);
    const ModelConfig& c = config_;
    const int64_t E = c.nEmbd;

    outRows_.clear();
    for (int64_t i = 0; i < n; ++i)
        if (batch.tokens[size_t(i)].wantLogits) outRows_.push_back(int32_t(i));
    const int64_t nOut = int64_t(outRows_.size());
    // Device logits for the rows that want them (a prompt chunk has one),
    // grown before the step: memory never changes inside one.
    if (!backend_.hostVisible())
        logits_.ensure(size_t(std::max<int64_t>(nOut, 1)) * size_t(c.nVocab) * sizeof(float), "logits");

    Backend& b = backend_;
    StepInfo step;
    step.batch = &batch;
    step.kv = &kv;
    step.fullLayer = fullLayer_;
    step.windowLayer = windowLayer_;
    step.outputRows = outRows_;
    b.beginStep(step);

    float *x = x_.floats(), *h = h_.floats(), *o = o_.floats(), *attn = attn_.floats();
    float *gate = gate_.floats(), *up = up_.floats(), *act = act_.floats();
    b.embed(w_.tokEmbd, opt_.embedScale, x, E);
    StepRows rows = StepRows::All;
    const int64_t attnDim = c.nHead * c.headDimV;
    // h holds each layer's normed input: the first layer's normed here, the
    // others' (and the output norm) with the residual add before them.
    if (c.nLayer > 0) b.rmsNorm(x, w_.layers[0].attnNorm, h, n, E, c.normEps);
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const LayerWeights& L = w_.layers[size_t(il)];
        attentionLayer(il, h, n, kv);

        if (il == c.nLayer - 1 && nOut < n) {
            // Only rows that produce logits matter past the last attention.
            if (nOut == 0) {
                b.endStep();
                logits.clear();
                return;
            }
            b.gatherOutputs(attn, attnDim);
            b.gatherOutputs(x, E);
            n = nOut;
            rows = StepRows::Outputs;
        }

        b.matmul(L.wo, attn, n, o, rows);
        if (L.bo) b.addBias(o, L.bo, n, E);
        b.residualNorm(x, o, L.postAttnNorm, L.ffnNorm, h, n, E, c.normEps);

        b.matmulGlu(opt_.activation, {L.gate, gate}, {L.up, up}, h, act, n, rows);
        b.matmul(L.down, act, n, o, rows);
        const float* nextNorm = il + 1 < c.nLayer ? w_.layers[size_t(il) + 1].attnNorm : w_.outputNorm;
        b.residualNorm(x, o, L.postFfnNorm, nextNorm, h, n, E, c.normEps);
    }
    if (nOut == 0) {
        b.endStep();
        logits.clear();
        return;
    }
    if (c.nLayer == 0) {  // no layer ran the compaction or the output norm
        if (n != nOut) b.gatherOutputs(x, E);
        b.rmsNorm(x, w_.outputNorm, h, nOut, E, c.normEps);
    }
    logits.resize(size_t(nOut) * size_t(c.nVocab));
    if (b.hostVisible()) {
        b.matmul(w_.output, h, nOut, logits.data(), StepRows::Outputs);
        hidden_ = h;
    } else {
        b.matmul(w_.output, h, nOut, logits_.floats(), StepRows::Outputs);
        hiddenHost_.resize(size_t(nOut * E));
        b.readRows(h, hiddenHost_.data(), hiddenHost_.size());
        b.readRows(logits_.floats(), logits.data(), logits.size());
        hidden_ = hiddenHost_.data();
    }
    b.endStep();
    hiddenRows_ = nOut;
}

} // namespace weir
