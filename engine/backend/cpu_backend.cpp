#include "engine/backend/cpu_backend.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

#include "engine/backend/op_clock.h"
#include "kernels/cpu/attend_tile.h"
#include "kernels/cpu/cpu_features.h"
#include "weir/base/error.h"

namespace weir {

using kernels::ThreadPool;

namespace {

GgmlType kvRowType(KvDtype d) {
    switch (d) {
    case KvDtype::F16: return GgmlType::F16;
    case KvDtype::Q8_0: return GgmlType::Q8_0;
    case KvDtype::F32: return GgmlType::F32;
    case KvDtype::FP8_E4M3: return GgmlType::E4M3_KV;
    default: return GgmlType::Q8_1;  // marks "unsupported"
    }
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

// Rows per group of the row norms: kernels::rmsNormRows runs their sums side by side.
constexpr int64_t kNormGroupRows = 8;

kernels::GluRowFn gluRow(GluActivation act) {
    return act == GluActivation::GeluTanh ? kernels::gegluF16Table : kernels::swiglu;
}

template <class T>
void grow(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
}

std::string cpuName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "CPU";
}

// MemAvailable of /proc/meminfo: what can be had without swapping.
uint64_t availableRam() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

} // namespace

CpuBackend::CpuBackend(const CpuBackendOptions& options)
    : pool_(std::make_unique<ThreadPool>(options.threads)), repack_(options.repackWeights) {}

CpuBackend::~CpuBackend() = default;

void* CpuBackend::allocate(size_t bytes, std::string_view what) { return hostMemory().allocate(bytes, what); }
void CpuBackend::release(void* p) { hostMemory().release(p); }
// Copies see every op before them: a held residual norm runs first.
void CpuBackend::copyIn(void* dst, const void* src, size_t bytes) {
    settleNorm();
    std::memcpy(dst, src, bytes);
}
void CpuBackend::copyOut(void* dst, const void* src, size_t bytes) {
    settleNorm();
    std::memcpy(dst, src, bytes);
}
void CpuBackend::copyWithin(void* dst, const void* src, size_t bytes) {
    settleNorm();
    std::memmove(dst, src, bytes);
}

DeviceInfo CpuBackend::device() const {
    DeviceInfo d = hostDevice();
    d.detail = std::to_string(pool_->size()) + " threads";
    return d;
}

DeviceInfo CpuBackend::hostDevice() {
    DeviceInfo d;
    d.kind = DeviceKind::Cpu;
    d.name = cpuName();
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    d.totalBytes = pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
    d.freeBytes = availableRam();
    return d;
}

bool CpuBackend::supportsKv(KvDtype dtype) const { return kvRowType(dtype) != GgmlType::Q8_1; }

bool CpuBackend::supportsWeight(GgmlType type, int64_t cols) const { return kernels::matmulSupports(type, cols); }

WeightView CpuBackend::adoptWeight(const WeightView& host, WeightRole role, std::string_view, bool fileMapped) {
    // The output head only. The tile kernel sums blocks in another order
    // than llama.cpp's, and only the head's rounding stays in the logits: a
    // projection's travels through every later layer, and in Gemma 3 any
    // change of summation order there moves greedy continuations off
    // llama.cpp's (packing the Q8_0 attn_v too: 7 of the 9 reference
    // prompts identical over 64 tokens instead of 9; top-1 logits 4e-2 apart).
    if (role == WeightRole::OutputHead) heads_.push_back(host.data);
    if (role != WeightRole::OutputHead || !repack_ || host.tiles) return host;
    const size_t bytes = kernels::weightTilesBytes(host);
    if (bytes == 0) return host;
    auto buffer = std::make_unique<kernels::PackedBuffer>(bytes);
    uint8_t* dst = buffer->data;
    const WeightView src = host;
    // In slices, each slice's file pages given back once packed, so the
    // copy and the original are never both resident (token_embd, which a
    // tied head shares, rereads the few rows it looks up).
    const int64_t tiles = (src.rows + kernels::kWeightTileRows - 1) / kernels::kWeightTileRows, slice = 128;
    pool_->parallelFor((tiles + slice - 1) / slice, [&](int64_t b, int64_t e, int) {
        for (int64_t s = b; s < e; ++s) {
            const int64_t t0 = s * slice, t1 = std::min(tiles, t0 + slice);
            kernels::packWeightTiles(src, t0, t1, dst);
            const int64_t r0 = t0 * kernels::kWeightTileRows, r1 = std::min(src.rows, t1 * kernels::kWeightTileRows);
            if (fileMapped)
                kernels::releaseMappedRange(static_cast<const uint8_t*>(src.data) + size_t(r0) * src.rowStride,
                                            size_t(r1 - r0) * src.rowStride);
        }
    });
    WeightView out = host;
    out.tiles = dst;
    extraBytes_ += bytes - size_t(src.rows) * src.rowStride;
    packed_.push_back(std::move(buffer));
    return out;
}

const float* CpuBackend::adoptVector(const float* host, int64_t, std::string_view) { return host; }

void CpuBackend::setRopeKinds(std::span<const RopeKind> kinds) {
    ropeKinds_.clear();
    for (const RopeKind& k : kinds) {
        kernels::RopeParams p;
        p.neox = k.neox;
        p.nRot = k.nRot;
        p.base = k.base;
        p.freqScale = k.freqScale;
        p.freqFactors = k.freqFactors;
        ropeKinds_.push_back(p);
    }
}

void CpuBackend::beginStep(const StepInfo& step) {
    // A norm still held here is from a step that did not end (an op threw):
    // its buffers may have been replaced since, so it is dropped, not run.
    pendingNorm_.rows = 0;
    stepStartNs_ = opClockSums().on.load(std::memory_order_relaxed) ? opClockNow() : 0;
    batch_ = step.batch;
    kv_ = step.kv;
    outRows_.assign(step.outputRows.begin(), step.outputRows.end());
    const size_t n = batch_->tokens.size();
    ropeStride_ = 0;
    for (const kernels::RopeParams& p : ropeKinds_) ropeStride_ = std::max(ropeStride_, p.nRot);
    grow(ropeCs_, ropeKinds_.size() * n * size_t(ropeStride_));
    for (auto* v : {&order_, &groupSize_, &groupIndex_, &outGroupSize_, &outGroupIndex_}) grow(*v, n);
    // RoPE angles of every token, once per kind.
    for (size_t kind = 0; kind < ropeKinds_.size(); ++kind) {
        for (size_t i = 0; i < n; ++i)
            kernels::ropeAngles(ropeKinds_[kind], batch_->tokens[i].pos, ropeCs_.data() + (kind * n + i) * size_t(ropeStride_));
    }
    computeRowGroups();
}

// llama.cpp runs one sequence's tokens as one batch; its matmul kernels round
// differently depending on the batch size and a row's place in it. Tell
// matmul each row's sequence batch so a sequence gives the same numbers here
// as there, however the scheduler mixes sequences.
void CpuBackend::computeRowGroups() {
    const Batch& batch = *batch_;
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

void CpuBackend::embed(const WeightView& table, float scale, float* x, int64_t width) {
    settleNorm();
    OpClock clock(StepOp::Embed);
    const Batch& batch = *batch_;
    forRows(*pool_, int64_t(batch.tokens.size()), width, [&](int64_t i) {
        kernels::getRow(table, batch.tokens[size_t(i)].token, x + i * width);
        if (scale != 0.0f) kernels::scaleInPlace(x + i * width, scale, width);
    });
}

void CpuBackend::rmsNorm(const float* x, const float* w, float* y, int64_t n, int64_t width, float eps) {
    settleNorm();
    const PendingNorm p{const_cast<float*>(x), nullptr, nullptr, w, y, n, width, eps};  // x is only read
    if (holdsNorm(n)) pendingNorm_ = p;
    else runNorm(p);
}

void CpuBackend::residualNorm(float* x, float* o, const float* postNorm, const float* nextNorm, float* y, int64_t n,
                              int64_t width, float eps) {
    settleNorm();
    const PendingNorm p{x, o, postNorm, nextNorm, y, n, width, eps};
    if (holdsNorm(n)) pendingNorm_ = p;
    else runNorm(p);
}

// One row has no rows to share: it runs at once, as does every norm on one thread.
bool CpuBackend::holdsNorm(int64_t rows) const { return rows >= 2 && pool_->size() > 1; }

void CpuBackend::normRows(const PendingNorm& p, int64_t r0, int64_t r1) {
    for (int64_t g = r0; g < r1; g += kNormGroupRows) {  // rows side by side in rmsNormRows
        const int64_t rows = std::min(kNormGroupRows, r1 - g);
        float* xr = p.x + g * p.width;
        if (p.o) {
            float* orow = p.o + g * p.width;
            if (p.postNorm) kernels::rmsNormRows(orow, p.postNorm, orow, rows, p.width, p.eps);
            kernels::addInPlace(xr, orow, rows * p.width);
        }
        kernels::rmsNormRows(xr, p.nextNorm, p.y + g * p.width, rows, p.width, p.eps);
    }
}

void CpuBackend::runNorm(const PendingNorm& p) {
    OpClock clock(StepOp::Norms);
    constexpr int64_t kGroup = kNormGroupRows;
    forRows(*pool_, (p.rows + kGroup - 1) / kGroup, kGroup * p.width,
            [&](int64_t g) { normRows(p, g * kGroup, std::min(p.rows, (g + 1) * kGroup)); });
}

void CpuBackend::settleNorm() {
    if (pendingNorm_.rows == 0) return;
    const PendingNorm p = pendingNorm_;
    pendingNorm_.rows = 0;
    runNorm(p);
}

const kernels::RowPrologue* CpuBackend::takeNormFor(const float* x, int64_t rows) {
    if (pendingNorm_.rows == 0) return nullptr;
    if (pendingNorm_.y != x || pendingNorm_.rows != rows) {
        settleNorm();
        return nullptr;
    }
    takenNorm_ = pendingNorm_;
    pendingNorm_.rows = 0;
    if (!takenRow_) takenRow_ = [this](int64_t r0, int64_t r1) { normRows(takenNorm_, r0, r1); };
    return &takenRow_;
}

void CpuBackend::matmul(const WeightView& w, const float* x, int64_t rows, float* y, StepRows set) {
    const kernels::RowPrologue* before = takeNormFor(x, rows);
    const bool head = std::find(heads_.begin(), heads_.end(), w.data) != heads_.end();
    OpClock clock(head ? StepOp::OutputHead : StepOp::Projections);
    kernels::matmul(w, x, rows, y, *pool_, set == StepRows::All ? &groups_ : &outGroups_, before);
}

void CpuBackend::matmulMany(std::span<const Projection> outs, const float* x, int64_t rows, StepRows set) {
    const kernels::RowPrologue* before = takeNormFor(x, rows);
    OpClock clock(StepOp::Projections);
    manyOuts_.clear();
    for (const Projection& p : outs) manyOuts_.push_back({p.w, p.y});
    kernels::matmulMany(manyOuts_, x, rows, *pool_, set == StepRows::All ? &groups_ : &outGroups_, before);
}

void CpuBackend::addBias(float* y, const float* bias, int64_t rows, int64_t width) {
    settleNorm();
    OpClock clock(StepOp::Norms);
    for (int64_t r = 0; r < rows; ++r) kernels::addInPlace(y + r * width, bias, width);
}

void CpuBackend::add(float* y, const float* x, int64_t n) {
    settleNorm();
    OpClock clock(StepOp::Norms);
    kernels::addInPlace(y, x, n);
}

void CpuBackend::endStep() {
    settleNorm();
    if (!stepStartNs_) return;
    OpClockSums& sums = opClockSums();
    sums.forwardNs.fetch_add(uint64_t(opClockNow() - stepStartNs_), std::memory_order_relaxed);
    sums.steps.fetch_add(1, std::memory_order_relaxed);
    stepStartNs_ = 0;
}

void CpuBackend::glu(GluActivation act, const float* gate, const float* up, float* y, int64_t rows, int64_t F) {
    settleNorm();
    OpClock clock(StepOp::Norms);
    const kernels::GluRowFn fn = gluRow(act);
    forRows(*pool_, rows, F, [&](int64_t r) { fn(gate + r * F, up + r * F, y + r * F, F); });
}

void CpuBackend::matmulGlu(GluActivation act, const Projection& gate, const Projection& up, const float* x, float* y,
                           int64_t rows, StepRows set) {
    const kernels::RowPrologue* before = takeNormFor(x, rows);
    OpClock clock(StepOp::Projections);
    kernels::matmulGlu({gate.w, gate.y}, {up.w, up.y}, gluRow(act), y, x, rows, *pool_,
                       set == StepRows::All ? &groups_ : &outGroups_, before);
}

void CpuBackend::ropeAndStore(const AttentionLayer& a, float* q, float* k, const float* v) {
    normRopeAndStore(a, {}, int64_t(batch_->tokens.size()), q, k, v);
}

// What a step does to a token's q, k and v before attention, in pieces any
// thread may run at once on distinct tokens or heads: the query heads'
// norms, RoPE and scaling, and the keys' norms and RoPE with the K and V
// rows into the cache. Each value goes through the same kernels in the same
// order however the pieces are cut (rmsNormRows gives each row rmsNorm's
// bits, RoPE and the scaling work value by value), so every cut gives the
// same bits.
struct CpuBackend::TokenSteps {
    const AttentionLayer& a;
    HeadNorms norms;
    float* q;
    float* k;
    const float* v;
    const Batch& batch;
    const KvAccess& kv;
    const kernels::RopeParams& rope;
    const float* angles;  // per token, angleStride apart
    int64_t angleStride;
    GgmlType kvType;
    int64_t qDim, kDim, vDim;

    // Query heads [h0, h1) of tokens [i0, i1).
    void queries(int64_t i0, int64_t i1, int64_t h0, int64_t h1) const {
        const int64_t hd = a.headDimK;
        if (norms.q) {
            if (h1 - h0 == a.nHead) {  // the tokens' rows are consecutive
                float* rows = q + i0 * qDim;
                kernels::rmsNormRows(rows, norms.q, rows, (i1 - i0) * a.nHead, hd, norms.eps);
            } else {
                for (int64_t h = h0; h < h1; ++h) {
                    float* rows = q + i0 * qDim + h * hd;
                    kernels::rmsNormRowsStrided(rows, norms.q, rows, i1 - i0, hd, qDim, norms.eps);
                }
            }
        }
        for (int64_t i = i0; i < i1; ++i) {
            float* heads = q + i * qDim + h0 * hd;
            kernels::ropeApply(heads, h1 - h0, hd, rope.nRot, rope.neox, angles + i * angleStride);
            if (a.queryScale != 0.0f) kernels::scaleInPlace(heads, a.queryScale, (h1 - h0) * hd);
        }
    }

    // Keys and values of tokens [i0, i1), into the cache at their positions.
    void keysAndValues(int64_t i0, int64_t i1) const {
        const int64_t hd = a.headDimK;
        if (norms.k) kernels::rmsNormRows(k + i0 * kDim, norms.k, k + i0 * kDim, (i1 - i0) * a.nHeadKv, hd, norms.eps);
        const KvLayerStorage& st = a.kv;
        const int32_t ps = kv.pageSize();
        for (int64_t i = i0; i < i1; ++i) {
            float* key = k + i * kDim;
            kernels::ropeApply(key, a.nHeadKv, hd, rope.nRot, rope.neox, angles + i * angleStride);
            const BatchToken& t = batch.tokens[size_t(i)];
            const auto table = kv.pageTable(a.layer, t.seq);
            const int64_t row = int64_t(table[size_t(t.pos / ps)]) * ps + t.pos % ps;
            kernels::storeKvRow(kvType, key, st.k + row * int64_t(st.rowBytes), kDim);
            kernels::storeKvRow(kvType, v + i * vDim, st.v + row * int64_t(st.rowBytes), vDim);
        }
    }
};

CpuBackend::TokenSteps CpuBackend::tokenSteps(const AttentionLayer& a, const HeadNorms& norms, float* q, float* k,
                                              const float* v) const {
    const size_t n = batch_->tokens.size();
    return TokenSteps{a,
                      norms,
                      q,
                      k,
                      v,
                      *batch_,
                      *kv_,
                      ropeKinds_[size_t(a.ropeKind)],
                      ropeCs_.data() + size_t(a.ropeKind) * n * size_t(ropeStride_),
                      ropeStride_,
                      kvRowType(a.kv.dtype),
                      a.nHead * a.headDimK,
                      a.nHeadKv * a.headDimK,
                      a.nHeadKv * a.headDimV};
}

void CpuBackend::normRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, int64_t /*tokens: the step's*/, float* q,
                                  float* k, const float* v) {
    settleNorm();
    OpClock clock(StepOp::RopeAndStore);
    const TokenSteps steps = tokenSteps(a, norms, q, k, v);
    const int64_t n = int64_t(batch_->tokens.size());
    // Per group of tokens: the query heads, then the keys and values. As
    // many groups as threads where the tokens allow, of at most 8 tokens
    // (rmsNormRows' 8 lanes fill with 8 key heads).
    constexpr int64_t kMaxGroupTokens = 8;
    const int64_t group = std::clamp<int64_t>(n / pool_->size(), 1, kMaxGroupTokens);
    forRows(*pool_, (n + group - 1) / group, group * (steps.qDim + steps.kDim + steps.vDim), [&](int64_t g) {
        const int64_t i0 = g * group, i1 = std::min(n, i0 + group);
        steps.queries(i0, i1, 0, a.nHead);
        steps.keysAndValues(i0, i1);
    });
}

void CpuBackend::projectNormRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, const Projection& q,
                                         const Projection& k, const Projection& v, const float* x, int64_t tokens) {
    const kernels::RowPrologue* before = takeNormFor(x, tokens);
    OpClock clock(StepOp::Projections);  // with the per-token steps, as matmulGlu with its activation
    const TokenSteps steps = tokenSteps(a, norms, q.y, k.y, v.y);
    manyOuts_.assign({{q.w, q.y}, {k.w, k.y}, {v.w, v.y}});
    // A part per query head (its norm needs all of its values), then one for
    // k and v together (a token's cache rows need all of both).
    qkvPartEnds_.clear();
    for (int64_t h = 1; h <= a.nHead; ++h) qkvPartEnds_.push_back(h * a.headDimK);
    qkvPartEnds_.push_back(steps.qDim + steps.kDim + steps.vDim);
    kernels::matmulManyThen(
        manyOuts_, qkvPartEnds_,
        [&steps, heads = a.nHead](int64_t part, int64_t m0, int64_t m1) {
            if (part < heads) steps.queries(m0, m1, part, part + 1);
            else steps.keysAndValues(m0, m1);
        },
        x, tokens, *pool_, &groups_, before);
}

int64_t CpuBackend::attentionParts(int64_t heads, int64_t threads, int64_t keys) {
    if (heads <= 0 || threads <= heads) return 1;
    return std::max<int64_t>(1, std::min((threads + heads - 1) / heads, keys / kAttnMinPartKeys));
}

namespace {

// The first position a token of layer `a` attends to (its window's start).
int32_t firstKeyOf(const AttentionLayer& a, const BatchToken& t) { return a.slides ? std::max(0, t.pos - a.window + 1) : 0; }

} // namespace

// Flash decoding: a token alone in its sequence's batch (a decode step, a
// verify row) attends in parts when there are more threads than query heads.
// Whether and how a token is cut depends on nothing else in the batch, so
// its bits do not either (verify rows stay the decode steps'). Sets each
// token's parts and the split tokens' items, and per query the parts still
// to run: the thread that finishes a query's last part merges them
// (acquire-release: it sees the others'), so the layer stays one round trip.
void CpuBackend::splitAttendingTokens(const AttentionLayer& a) {
    const Batch& batch = *batch_;
    const int64_t n = int64_t(batch.tokens.size()), threads = pool_->size();
    grow(attnTokenParts_, size_t(n));
    attnSplit_.clear();
    for (int64_t i = 0; i < n; ++i) {
        const BatchToken& t = batch.tokens[size_t(i)];
        const int64_t parts = groupSize_[size_t(i)] == 1 ? attentionParts(a.nHead, threads, t.pos - firstKeyOf(a, t) + 1) : 1;
        attnTokenParts_[size_t(i)] = int32_t(parts);
        if (parts > 1)
            for (int64_t h = 0; h < a.nHead; ++h)
                for (int64_t part = 0; part < parts; ++part) attnSplit_.push_back({int32_t(i), int32_t(h), int32_t(part)});
    }
    if (attnSplit_.empty()) return;
    grow(attnParts_, attnSplit_.size());
    grow(attnPartAcc_, attnSplit_.size() * size_t(a.headDimV));
    if (attnPartsLeftSize_ < size_t(n * a.nHead)) {
        attnPartsLeft_ = std::make_unique<std::atomic<int32_t>[]>(size_t(n * a.nHead));
        attnPartsLeftSize_ = size_t(n * a.nHead);
    }
    for (int64_t i = 0; i < n; ++i)
        for (int64_t h = 0; h < a.nHead; ++h)
            attnPartsLeft_[size_t(i * a.nHead + h)].store(attnTokenParts_[size_t(i)], std::memory_order_relaxed);
}

// Attention in tiles: up to tileTokens consecutive batch tokens of one
// sequence (not split by splitAttendingTokens) times query heads of one KV
// head, which read the same K/V rows (kernels::attendTile). Small batches
// (decode, short chunks) take fewer tokens per tile and, if that leaves
// threads idle, fewer heads. Prefill tokens see different numbers of keys,
// so the tiles are dealt to one job per thread (fewer when there are fewer
// tiles) costliest first (kernels/cpu/longest_first.h): the jobs get equal
// shares of keys rather than of tiles.
CpuBackend::AttnTiling CpuBackend::cutAttentionTiles(const AttentionLayer& a) {
    const Batch& batch = *batch_;
    const int64_t n = int64_t(batch.tokens.size()), threads = pool_->size();
    const int64_t group = a.nHead / a.nHeadKv;
    AttnTiling tiling;
    tiling.tokens = std::clamp<int64_t>(n / (4 * threads), 1, std::max<int64_t>(1, kAttnTileQueries / group));
    auto whole = [&](int64_t i) { return attnTokenParts_[size_t(i)] == 1; };
    // Token runs (tiles per head group), as the loop below cuts them.
    auto runEnd = [&](int64_t i0) {
        const int32_t seq = batch.tokens[size_t(i0)].seq;
        int64_t i1 = i0;
        while (i1 < n && i1 - i0 < tiling.tokens && batch.tokens[size_t(i1)].seq == seq && whole(i1)) ++i1;
        return i1;
    };
    int64_t runs = 0;
    for (int64_t i = 0; i < n;) {
        if (!whole(i)) { ++i; continue; }
        i = runEnd(i);
        ++runs;
    }
    // Heads per tile: the fewest queries on the busiest thread, counting tiles
    // as equal (fewer, larger tiles on a tie: they share more work).
    int64_t busiest = INT64_MAX;
    tiling.heads = group;
    for (int64_t splits = 1; splits <= group; ++splits) {
        const int64_t heads = (group + splits - 1) / splits;
        const int64_t tilesPerThread = (runs * a.nHeadKv * splits + threads - 1) / threads;
        if (tilesPerThread * heads < busiest) busiest = tilesPerThread * heads, tiling.heads = heads;
    }
    attnTiles_.clear();
    attnCost_.clear();
    for (int64_t i0 = 0; i0 < n;) {
        if (!whole(i0)) { ++i0; continue; }
        const int64_t i1 = runEnd(i0);
        int64_t keys = 0;
        for (int64_t i = i0; i < i1; ++i) {
            const BatchToken& t = batch.tokens[size_t(i)];
            keys += (t.pos - firstKeyOf(a, t) + 1) + 8;  // + fixed per-query overhead
        }
        for (int64_t kvh = 0; kvh < a.nHeadKv; ++kvh) {
            for (int64_t h0 = kvh * group; h0 < (kvh + 1) * group; h0 += tiling.heads) {
                const int64_t heads = std::min(tiling.heads, (kvh + 1) * group - h0);
                attnTiles_.push_back({int32_t(i0), int32_t(i1 - i0), int32_t(h0), int32_t(heads)});
                attnCost_.push_back(keys * heads);
            }
        }
        i0 = i1;
    }
    tiling.jobs = std::min<int64_t>(threads, int64_t(attnTiles_.size()));
    if (tiling.jobs > 0) attnDeal_.deal(attnCost_, tiling.jobs);  // one job: every tile, in order
    return tiling;
}

void CpuBackend::attend(const AttentionLayer& a, const float* q_, float* out_) {
    settleNorm();
    OpClock clock(StepOp::Attention);
    const Batch& batch = *batch_;
    const int64_t hd = a.headDimK, hdv = a.headDimV;
    const int64_t qDim = a.nHead * hd, group = a.nHead / a.nHeadKv;
    const KvLayerStorage& st = a.kv;
    const GgmlType kvType = kvRowType(st.dtype);
    const int32_t ps = kv_->pageSize();
    splitAttendingTokens(a);
    const AttnTiling tiling = cutAttentionTiles(a);
    const size_t scratchPer = std::max(kernels::attendTileScratchFloats(hd, hdv), kernels::attendScratchFloats(hd, hdv));
    grow(attnScratch_, size_t(pool_->size()) * scratchPer);

    auto rowsOf = [&](const BatchToken& t, int64_t kvh, kernels::PagedRows& kr, kernels::PagedRows& vr) {
        const auto table = kv_->pageTable(a.layer, t.seq);
        kr.base = st.k;
        vr.base = st.v;
        kr.rowBytes = vr.rowBytes = st.rowBytes;
        kr.offset = kvRowBytes(st.dtype, kvh * hd);
        vr.offset = kvRowBytes(st.dtype, kvh * hdv);
        kr.pages = vr.pages = table.data();
        kr.pageSize = vr.pageSize = ps;
        kr.type = vr.type = kvType;
    };
    // Jobs [0, tiling.jobs) run tiles; the rest are the split tokens' parts.
    auto work = [&](int64_t jb, int64_t je, int thread) {
        float* scratch = attnScratch_.data() + size_t(thread) * scratchPer;
        std::vector<kernels::AttendQuery> queries(size_t(tiling.tokens * tiling.heads));
        for (int64_t job = jb; job < je; ++job) {
            if (job >= tiling.jobs) {  // a part of a split token's query
                const size_t item = size_t(job - tiling.jobs);
                const AttnSplitItem& s = attnSplit_[item];
                const BatchToken& t = batch.tokens[size_t(s.token)];
                kernels::PagedRows kr, vr;
                rowsOf(t, s.head / group, kr, vr);
                const int64_t parts = attnTokenParts_[size_t(s.token)], first = firstKeyOf(a, t), keys = t.pos - first + 1;
                const int32_t lo = int32_t(first + keys * s.part / parts), hi = int32_t(first + keys * (s.part + 1) / parts - 1);
                attnParts_[item] = kernels::attendHeadPart(q_ + s.token * qDim + s.head * hd, hd, hdv, kr, vr, lo, hi,
                                                           a.scoreScale, attnPartAcc_.data() + item * size_t(hdv), scratch);
                const size_t query = size_t(s.token * a.nHead + s.head);
                if (attnPartsLeft_[query].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
                const size_t firstPart = item - size_t(s.part);  // a query's parts are adjacent items
                kernels::mergeAttendParts(attnParts_.data() + firstPart, attnPartAcc_.data() + firstPart * size_t(hdv),
                                          int(parts), hdv, out_ + s.token * a.nHead * hdv + s.head * hdv);
                continue;
            }
            for (const int32_t it : attnDeal_.items(job)) {
                const AttnTile& tile = attnTiles_[size_t(it)];
                kernels::PagedRows kr, vr;
                rowsOf(batch.tokens[size_t(tile.firstToken)], tile.firstHead / group, kr, vr);
                int nq = 0;
                for (int64_t i = tile.firstToken; i < tile.firstToken + tile.tokens; ++i) {
                    const BatchToken& t = batch.tokens[size_t(i)];
                    for (int64_t h = tile.firstHead; h < tile.firstHead + tile.heads; ++h) {
                        kernels::AttendQuery& q = queries[nq++];
                        q.q = q_ + i * qDim + h * hd;
                        q.out = out_ + i * a.nHead * hdv + h * hdv;
                        q.first = firstKeyOf(a, t);
                        q.last = t.pos;
                    }
                }
                kernels::attendTile(queries.data(), nq, hd, hdv, kr, vr, a.scoreScale, scratch);
            }
        }
    };
    const int64_t jobs = tiling.jobs + int64_t(attnSplit_.size());
    if (jobs <= 1) work(0, jobs, 0);
    else pool_->parallelFor(jobs, work);
}

void CpuBackend::gatherOutputs(float* rows, int64_t width) {
    settleNorm();
    OpClock clock(StepOp::Gather);
    for (size_t r = 0; r < outRows_.size(); ++r) {
        const int64_t src = outRows_[r];
        if (src == int64_t(r)) continue;
        std::memcpy(rows + int64_t(r) * width, rows + src * width, size_t(width) * sizeof(float));
    }
}

void CpuBackend::readRows(const float* src, float* hostDst, size_t count) {
    settleNorm();
    if (src != hostDst) std::memcpy(hostDst, src, count * sizeof(float));
}

} // namespace weir
