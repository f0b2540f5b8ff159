#include "engine/models/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "weir/base/error.h"

namespace weir {

using kernels::ThreadPool;

namespace {

kernels::GgmlType kvRowType(KvDtype d) {
    switch (d) {
    case KvDtype::F16: return kernels::GgmlType::F16;
    case KvDtype::Q8_0: return kernels::GgmlType::Q8_0;
    case KvDtype::F32: return kernels::GgmlType::F32;
    case KvDtype::FP8_E4M3: return kernels::GgmlType::E4M3_KV;
    default: return kernels::GgmlType::Q8_1;  // marks "unsupported"
    }
}

void addBias(float* y, const float* b, int64_t n, int64_t width) {
    if (!b) return;
    for (int64_t r = 0; r < n; ++r) kernels::addInPlace(y + r * width, b, width);
}

// Runs fn(row) for rows [0, n) of rowElems values each: on the pool when
// there is enough work. Below ~16k values (a few microseconds) the pool's
// round trip costs about as much as it saves: a decode step of a few
// sequences makes ~5 such calls per layer.
constexpr int64_t kParallelRowElems = 16384;

template <class Fn>
void forRows(ThreadPool& pool, int64_t n, int64_t rowElems, Fn&& fn) {
    if (n < 2 || n * rowElems < kParallelRowElems || pool.size() == 1) {
        for (int64_t r = 0; r < n; ++r) fn(r);
        return;
    }
    pool.parallelFor(n, [&fn](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) fn(r);
    });
}

void grow(std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
}

} // namespace

Transformer::Transformer(std::shared_ptr<const gguf::GgufFile> file, ModelConfig config, TransformerWeights weights,
                         TransformerOptions options, std::unique_ptr<ModelTensors> tensors)
    : file_(std::move(file)), config_(std::move(config)), w_(std::move(weights)), opt_(options), tensors_(std::move(tensors)) {
    // One RoPE setting per distinct (base, scale) pair across layers.
    layerRope_.resize(size_t(config_.nLayer));
    for (int32_t il = 0; il < config_.nLayer; ++il) {
        kernels::RopeParams p;
        p.neox = config_.ropeStyle == RopeStyle::NeoX;
        p.nRot = config_.nRot;
        p.base = config_.ropeBase[size_t(il)];
        p.freqScale = config_.ropeScale[size_t(il)];
        p.freqFactors = w_.ropeFreqs;
        size_t kind = 0;
        while (kind < ropeKinds_.size() && (ropeKinds_[kind].base != p.base || ropeKinds_[kind].freqScale != p.freqScale)) ++kind;
        if (kind == ropeKinds_.size()) ropeKinds_.push_back(p);
        layerRope_[size_t(il)] = int32_t(kind);
    }
}

uint64_t Transformer::packWeights(ThreadPool& pool) {
    // The output head only. The tile kernel sums blocks in another order
    // than llama.cpp's, and only the head's rounding stays in the logits: a
    // projection's travels through every later layer, and in Gemma 3 any
    // change of summation order there moves greedy continuations off
    // llama.cpp's (packing the Q8_0 attn_v too: 7 of the 9 reference
    // prompts identical over 64 tokens instead of 9; top-1 logits 4e-2 apart).
    std::vector<kernels::WeightView*> all{&w_.output};
    const bool mapped = file_ && file_->isMapped();
    uint64_t packedBytes = 0;  // beyond the rows they replace
    for (kernels::WeightView* w : all) {
        const size_t bytes = kernels::weightTilesBytes(*w);
        if (bytes == 0 || w->tiles) continue;
        auto buffer = std::make_unique<kernels::PackedBuffer>(bytes);
        uint8_t* dst = buffer->data;
        const kernels::WeightView src = *w;
        // In slices, each slice's file pages given back once packed, so the
        // copy and the original are never both resident (token_embd, which a
        // tied head shares, rereads the few rows it looks up).
        const int64_t tiles = (src.rows + kernels::kWeightTileRows - 1) / kernels::kWeightTileRows, slice = 128;
        pool.parallelFor((tiles + slice - 1) / slice, [&](int64_t b, int64_t e, int) {
            for (int64_t s = b; s < e; ++s) {
                const int64_t t0 = s * slice, t1 = std::min(tiles, t0 + slice);
                kernels::packWeightTiles(src, t0, t1, dst);
                const int64_t r0 = t0 * kernels::kWeightTileRows, r1 = std::min(src.rows, t1 * kernels::kWeightTileRows);
                if (mapped)
                    kernels::releaseMappedRange(static_cast<const uint8_t*>(src.data) + size_t(r0) * src.rowStride,
                                                size_t(r1 - r0) * src.rowStride);
            }
        });
        w->tiles = dst;
        packedBytes += bytes - size_t(src.rows) * src.rowStride;
        packed_.push_back(std::move(buffer));
    }
    return packedBytes;
}

void Transformer::reserve(int64_t n, int threads) {
    const ModelConfig& c = config_;
    if (n > capTokens_) {
        capTokens_ = n;
        const size_t N = size_t(n);
        grow(x_, N * c.nEmbd);
        grow(h_, N * c.nEmbd);
        grow(o_, N * c.nEmbd);
        grow(q_, N * c.nHead * c.headDimK);
        grow(k_, N * c.nHeadKv * c.headDimK);
        grow(v_, N * c.nHeadKv * c.headDimV);
        grow(attn_, N * c.nHead * c.headDimV);
        grow(gate_, N * c.nFf);
        grow(up_, N * c.nFf);
        grow(act_, N * c.nFf);
        grow(ropeCs_, ropeKinds_.size() * N * size_t(c.nRot));
        if (attnCost_.size() < N * c.nHead + 1) attnCost_.resize(N * c.nHead + 1);
        attnTiles_.reserve(N * c.nHead);
        if (outRows_.capacity() < N) outRows_.reserve(N);
        for (auto* v : {&order_, &groupSize_, &groupIndex_, &outGroupSize_, &outGroupIndex_}) v->resize(N);
    }
    grow(attnScratch_, size_t(threads) * kernels::attendTileScratchFloats(c.headDimK, c.headDimV));
}

void Transformer::checkBatch(const Batch& batch, const KvAccess& kv) const {
    const ModelConfig& c = config_;
    const int32_t ps = kv.pageSize();
    if (ps <= 0) throw Error("KV cache page size must be positive");
    // One layer of each kind is enough: layers of a kind share a pool and its page tables.
    int32_t probe[2] = {-1, -1};
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const int kind = c.layerSlides[size_t(il)] ? 1 : 0;
        if (probe[kind] < 0) probe[kind] = il;
        const KvLayerStorage st = kv.layer(il);
        if (!st.k || !st.v) throw Error("KV cache has no storage for layer " + std::to_string(il));
        if (kvRowType(st.dtype) == kernels::GgmlType::Q8_1)
            throw Error(std::string("KV cache dtype ") + kvDtypeName(st.dtype) + " is not supported by the CPU attention");
        if (st.rowElems != c.kvRowElems() || st.rowBytes < kvRowBytes(st.dtype, st.rowElems))
            throw Error("KV cache rows of layer " + std::to_string(il) + " do not match the model (" +
                        std::to_string(st.rowElems) + " elements, model needs " + std::to_string(c.kvRowElems()) + ")");
    }
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

void Transformer::normRows(const float* x, const float* w, float* y, int64_t n, int64_t width, ThreadPool& pool) {
    const float eps = config_.normEps;
    // In groups of rows: rmsNormRows runs their sums side by side.
    constexpr int64_t kGroup = 8;
    forRows(pool, (n + kGroup - 1) / kGroup, kGroup * width, [&](int64_t g) {
        const int64_t r0 = g * kGroup;
        kernels::rmsNormRows(x + r0 * width, w, y + r0 * width, std::min(kGroup, n - r0), width, eps);
    });
}

// llama.cpp runs one sequence's tokens as one batch; its matmul kernels round
// differently depending on the batch size and a row's place in it. Tell
// matmul each row's sequence batch so a sequence gives the same numbers here
// as there, however the scheduler mixes sequences.
void Transformer::computeRowGroups(const Batch& batch) {
    const int32_t n = int32_t(batch.tokens.size());
    auto fill = [&](const int32_t* rows, int32_t count, int32_t* size, int32_t* index) {
        int32_t* order = order_.data();
        for (int32_t r = 0; r < count; ++r) order[r] = r;
        std::sort(order, order + count, [&](int32_t a, int32_t b) {
            const int32_t sa = batch.tokens[size_t(rows ? rows[a] : a)].seq, sb = batch.tokens[size_t(rows ? rows[b] : b)].seq;
            return sa != sb ? sa < sb : a < b;
        });
        for (int32_t start = 0; start < count;) {
            const int32_t seq = batch.tokens[size_t(rows ? rows[order[start]] : order[start])].seq;
            int32_t end = start;
            while (end < count && batch.tokens[size_t(rows ? rows[order[end]] : order[end])].seq == seq) ++end;
            for (int32_t k = start; k < end; ++k) {
                const bool alone = batch.tokens[size_t(rows ? rows[order[k]] : order[k])].alone;
                size[order[k]] = alone ? 1 : end - start;
                index[order[k]] = alone ? 0 : k - start;
            }
            start = end;
        }
    };
    fill(nullptr, n, groupSize_.data(), groupIndex_.data());
    fill(outRows_.data(), int32_t(outRows_.size()), outGroupSize_.data(), outGroupIndex_.data());
    groups_ = {groupSize_.data(), groupIndex_.data()};
    outGroups_ = {outGroupSize_.data(), outGroupIndex_.data()};
}

void Transformer::prepareRope(const Batch& batch) {
    const size_t n = batch.tokens.size(), nRot = size_t(config_.nRot);
    for (size_t kind = 0; kind < ropeKinds_.size(); ++kind)
        for (size_t i = 0; i < n; ++i)
            kernels::ropeAngles(ropeKinds_[kind], batch.tokens[i].pos, ropeCs_.data() + (kind * n + i) * nRot);
}

void Transformer::attentionLayer(int32_t il, const Batch& batch, KvAccess& kv, ThreadPool& pool) {
    const ModelConfig& c = config_;
    const LayerWeights& L = w_.layers[size_t(il)];
    const int64_t n = int64_t(batch.tokens.size());
    const int64_t hd = c.headDimK, hdv = c.headDimV;
    const int64_t qDim = c.nHead * hd, kDim = c.nHeadKv * hd, vDim = c.nHeadKv * hdv;
    const KvLayerStorage st = kv.layer(il);
    const kernels::GgmlType kvType = kvRowType(st.dtype);
    const int32_t ps = kv.pageSize();
    const bool slides = c.layerSlides[size_t(il)];
    const float* cs = ropeCs_.data() + size_t(layerRope_[size_t(il)]) * size_t(n) * size_t(c.nRot);
    const bool neox = c.ropeStyle == RopeStyle::NeoX;

    addBias(q_.data(), L.bq, n, qDim);
    addBias(k_.data(), L.bk, n, kDim);
    addBias(v_.data(), L.bv, n, vDim);

    // Head norms: every head of every token is a row.
    if (L.qNorm) normRows(q_.data(), L.qNorm, q_.data(), n * c.nHead, hd, pool);
    if (L.kNorm) normRows(k_.data(), L.kNorm, k_.data(), n * c.nHeadKv, hd, pool);

    // Per token: RoPE, query scaling, then K/V into the cache.
    forRows(pool, n, qDim + kDim + vDim, [&](int64_t i) {
        float* q = q_.data() + i * qDim;
        float* k = k_.data() + i * kDim;
        const float* v = v_.data() + i * vDim;
        const float* angles = cs + i * c.nRot;
        kernels::ropeApply(q, c.nHead, hd, c.nRot, neox, angles);
        kernels::ropeApply(k, c.nHeadKv, hd, c.nRot, neox, angles);
        if (opt_.scaleQueryFirst) kernels::scaleInPlace(q, c.attnScale, qDim);
        const BatchToken& t = batch.tokens[size_t(i)];
        const auto table = kv.pageTable(il, t.seq);
        const int64_t row = int64_t(table[size_t(t.pos / ps)]) * ps + t.pos % ps;
        kernels::storeKvRow(kvType, k, st.k + row * int64_t(st.rowBytes), kDim);
        kernels::storeKvRow(kvType, v, st.v + row * int64_t(st.rowBytes), vDim);
    });

    // Attention in tiles: up to tileTokens consecutive batch tokens of one
    // sequence times query heads of one KV head, which read the same K/V rows
    // (kernels::attendTile). Prefill tokens see different numbers of keys, so
    // threads get equal shares of keys rather than of tiles.
    const int64_t group = c.nHead / c.nHeadKv;
    // Small batches (decode, short chunks) take fewer tokens per tile and, if
    // that leaves threads idle, fewer heads.
    const int64_t threads = pool.size();
    const int64_t tileTokens = std::clamp<int64_t>(n / (4 * threads), 1, std::max<int64_t>(1, kAttnTileQueries / group));
    int64_t runs = 0;  // token runs (tiles per head group), as the loop below cuts them
    for (int64_t i = 0; i < n; ++runs) {
        const int64_t start = i;
        const int32_t seq = batch.tokens[size_t(i)].seq;
        while (i < n && i - start < tileTokens && batch.tokens[size_t(i)].seq == seq) ++i;
    }
    // Heads per tile: the fewest queries on the busiest thread, counting tiles
    // as equal (fewer, larger tiles on a tie: they share more work).
    int64_t tileHeads = group, busiest = INT64_MAX;
    for (int64_t splits = 1; splits <= group; ++splits) {
        const int64_t heads = (group + splits - 1) / splits;
        const int64_t tilesPerThread = (runs * c.nHeadKv * splits + threads - 1) / threads;
        if (tilesPerThread * heads < busiest) busiest = tilesPerThread * heads, tileHeads = heads;
    }
    attnTiles_.clear();
    int64_t* cost = attnCost_.data();
    cost[0] = 0;
    for (int64_t i0 = 0; i0 < n;) {
        const int32_t seq = batch.tokens[size_t(i0)].seq;
        int64_t i1 = i0, keys = 0;
        for (; i1 < n && i1 - i0 < tileTokens && batch.tokens[size_t(i1)].seq == seq; ++i1) {
            const BatchToken& t = batch.tokens[size_t(i1)];
            const int32_t first = slides ? std::max(0, t.pos - c.slidingWindow + 1) : 0;
            keys += (t.pos - first + 1) + 8;  // + fixed per-query overhead
        }
        for (int64_t kvh = 0; kvh < c.nHeadKv; ++kvh) {
            for (int64_t h0 = kvh * group; h0 < (kvh + 1) * group; h0 += tileHeads) {
                const int64_t heads = std::min(tileHeads, (kvh + 1) * group - h0);
                attnTiles_.push_back({int32_t(i0), int32_t(i1 - i0), int32_t(h0), int32_t(heads)});
                cost[attnTiles_.size()] = cost[attnTiles_.size() - 1] + keys * heads;
            }
        }
        i0 = i1;
    }
    const int64_t tiles = int64_t(attnTiles_.size());
    const int parts = int(std::min<int64_t>(pool.size(), tiles));
    const int64_t total = cost[tiles];
    const size_t scratchPer = kernels::attendTileScratchFloats(hd, hdv);
    const float scoreScale = opt_.scaleQueryFirst ? 1.0f : c.attnScale;
    auto work = [&](int64_t pb, int64_t pe, int thread) {
        float* scratch = attnScratch_.data() + size_t(thread) * scratchPer;
        std::vector<kernels::AttendQuery> queries(size_t(tileTokens * tileHeads));
        for (int64_t part = pb; part < pe; ++part) {
            const int64_t lo = total * part / parts, hi = total * (part + 1) / parts;
            // Tiles whose cost range starts in [lo, hi).
            int64_t it = std::lower_bound(cost, cost + tiles, lo) - cost;
            for (; it < tiles && cost[it] < hi; ++it) {
                const AttnTile& tile = attnTiles_[size_t(it)];
                const int64_t kvh = tile.firstHead / group;
                const auto table = kv.pageTable(il, batch.tokens[size_t(tile.firstToken)].seq);
                kernels::PagedRows kr, vr;
                kr.base = st.k;
                vr.base = st.v;
                kr.rowBytes = vr.rowBytes = st.rowBytes;
                kr.offset = kvRowBytes(st.dtype, kvh * hd);
                vr.offset = kvRowBytes(st.dtype, kvh * hdv);
                kr.pages = vr.pages = table.data();
                kr.pageSize = vr.pageSize = ps;
                kr.type = vr.type = kvType;
                int nq = 0;
                for (int64_t i = tile.firstToken; i < tile.firstToken + tile.tokens; ++i) {
                    const BatchToken& t = batch.tokens[size_t(i)];
                    const int32_t first = slides ? std::max(0, t.pos - c.slidingWindow + 1) : 0;
                    for (int64_t h = tile.firstHead; h < tile.firstHead + tile.heads; ++h) {
                        kernels::AttendQuery& a = queries[nq++];
                        a.q = q_.data() + i * qDim + h * hd;
                        a.out = attn_.data() + i * c.nHead * hdv + h * hdv;
                        a.first = first;
                        a.last = t.pos;
                    }
                }
                kernels::attendTile(queries.data(), nq, hd, hdv, kr, vr, scoreScale, scratch);
            }
        }
    };
    if (parts <= 1) work(0, 1, 0);
    else pool.parallelFor(parts, work);
}

void Transformer::forward(const Batch& batch, KvAccess& kv, std::vector<float>& logits, ThreadPool& pool) {
    logits.clear();
    hiddenRows_ = 0;
    int64_t n = int64_t(batch.tokens.size());
    if (n == 0) return;
    checkBatch(batch, kv);
    reserve(n, pool.size());
    const ModelConfig& c = config_;
    const int64_t E = c.nEmbd;

    outRows_.clear();
    for (int64_t i = 0; i < n; ++i)
        if (batch.tokens[size_t(i)].wantLogits) outRows_.push_back(int32_t(i));
    const int64_t nOut = int64_t(outRows_.size());

    float* x = x_.data();
    forRows(pool, n, E, [&](int64_t i) {
        kernels::getRow(w_.tokEmbd, batch.tokens[size_t(i)].token, x + i * E);
        if (opt_.embedScale != 0.0f) kernels::scaleInPlace(x + i * E, opt_.embedScale, E);
    });
    prepareRope(batch);
    computeRowGroups(batch);
    const kernels::RowGroups* groups = &groups_;

    const int64_t attnDim = c.nHead * c.headDimV;
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const LayerWeights& L = w_.layers[size_t(il)];
        normRows(x, L.attnNorm, h_.data(), n, E, pool);
        kernels::matmul(L.wq, h_.data(), n, q_.data(), pool, groups);
        kernels::matmul(L.wk, h_.data(), n, k_.data(), pool, groups);
        kernels::matmul(L.wv, h_.data(), n, v_.data(), pool, groups);
        attentionLayer(il, batch, kv, pool);

        if (il == c.nLayer - 1 && nOut < n) {
            // Only rows that produce logits matter past the last attention.
            if (nOut == 0) return;
            for (int64_t r = 0; r < nOut; ++r) {
                const int64_t src = outRows_[size_t(r)];
                if (src == r) continue;
                std::memcpy(attn_.data() + r * attnDim, attn_.data() + src * attnDim, size_t(attnDim) * 4);
                std::memcpy(x + r * E, x + src * E, size_t(E) * 4);
            }
            n = nOut;
            groups = &outGroups_;
        }

        kernels::matmul(L.wo, attn_.data(), n, o_.data(), pool, groups);
        addBias(o_.data(), L.bo, n, E);
        if (L.postAttnNorm) normRows(o_.data(), L.postAttnNorm, o_.data(), n, E, pool);
        kernels::addInPlace(x, o_.data(), n * E);

        normRows(x, L.ffnNorm, h_.data(), n, E, pool);
        kernels::matmul(L.gate, h_.data(), n, gate_.data(), pool, groups);
        kernels::matmul(L.up, h_.data(), n, up_.data(), pool, groups);
        const int64_t F = c.nFf;
        forRows(pool, n, F, [&](int64_t r) {
            if (opt_.activation == FfnActivation::GeluTanh)
                kernels::gegluF16Table(gate_.data() + r * F, up_.data() + r * F, act_.data() + r * F, F);
            else
                kernels::swiglu(gate_.data() + r * F, up_.data() + r * F, act_.data() + r * F, F);
        });
        kernels::matmul(L.down, act_.data(), n, o_.data(), pool, groups);
        if (L.postFfnNorm) normRows(o_.data(), L.postFfnNorm, o_.data(), n, E, pool);
        kernels::addInPlace(x, o_.data(), n * E);
    }
    if (nOut == 0) return;
    if (n != nOut) {  // no layers ran the compaction
        for (int64_t r = 0; r < nOut; ++r) std::memmove(x + r * E, x + int64_t(outRows_[size_t(r)]) * E, size_t(E) * 4);
        n = nOut;
    }
    normRows(x, w_.outputNorm, h_.data(), nOut, E, pool);
    hiddenRows_ = nOut;
    logits.resize(size_t(nOut) * size_t(c.nVocab));
    kernels::matmul(w_.output, h_.data(), nOut, logits.data(), pool, &outGroups_);
}

} // namespace weir
