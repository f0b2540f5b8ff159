#pragma once
// The CPU backend: process memory, a thread pool, and every CPU policy of a
// forward pass — how rows are split over threads, attention in tiles of a
// sequence's tokens times a GQA group, and the row groups that keep
// llama.cpp's kernel choice per sequence (and so its bits). The ops call the
// kernels of kernels/cpu exactly as the transformer did before the seam, so
// every reference test keeps its results.
#include <atomic>
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "kernels/cpu/longest_first.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_tiles.h"

namespace weir {

struct CpuBackendOptions {
    int32_t threads = 0;         // 0 = every hardware thread
    // Copy the weights this CPU's kernels read faster in another layout (the
    // output head, kernels/cpu/weight_tiles.h) at adoption: EngineOptions::repackWeights.
    bool repackWeights = true;
};

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const CpuBackendOptions& options = {});
    ~CpuBackend() override;

    kernels::ThreadPool& pool() { return *pool_; }

    // Flash decoding: the parts a query of a token alone in its sequence's
    // batch is cut into over `keys` positions, with `heads` query heads on
    // `threads` threads. 1 (attention as a whole, bit for bit as llama.cpp
    // attends) unless there are more threads than heads.
    static int64_t attentionParts(int64_t heads, int64_t threads, int64_t keys);

    // DeviceMemory: process memory.
    void* allocate(size_t bytes, std::string_view what) override;
    void release(void* p) override;
    void copyIn(void* dst, const void* src, size_t bytes) override;
    void copyOut(void* dst, const void* src, size_t bytes) override;
    void copyWithin(void* dst, const void* src, size_t bytes) override;
    bool hostVisible() const override { return true; }

    DeviceInfo device() const override;
    // This computer's CPU and memory without a thread pool (device lists).
    static DeviceInfo hostDevice();
    int32_t threads() const override { return pool_->size(); }
    kernels::ThreadPool* hostPool() override { return pool_.get(); }
    bool supportsKv(KvDtype dtype) const override;
    bool supportsWeight(GgmlType type, int64_t cols) const override;

    WeightView adoptWeight(const WeightView& host, WeightRole role, std::string_view name, bool fileMapped) override;
    const float* adoptVector(const float* host, int64_t n, std::string_view name) override;
    uint64_t adoptedExtraBytes() const override { return extraBytes_; }
    void setRopeKinds(std::span<const RopeKind> kinds) override;

    void beginStep(const StepInfo& step) override;
    void embed(const WeightView& table, float scale, float* x, int64_t width) override;
    void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps) override;
    void matmul(const WeightView& w, const float* x, int64_t rows, float* y, StepRows set) override;
    void matmulMany(std::span<const Projection> outs, const float* x, int64_t rows, StepRows set) override;
    void addBias(float* y, const float* bias, int64_t rows, int64_t width) override;
    void add(float* y, const float* x, int64_t n) override;
    void residualNorm(float* x, float* o, const float* postNorm, const float* nextNorm, float* y, int64_t rows, int64_t width,
                      float eps) override;
    void glu(GluActivation act, const float* gate, const float* up, float* y, int64_t rows, int64_t width) override;
    void matmulGlu(GluActivation act, const Projection& gate, const Projection& up, const float* x, float* y, int64_t rows,
                   StepRows set) override;
    void ropeAndStore(const AttentionLayer& a, float* q, float* k, const float* v) override;
    void normRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, int64_t tokens, float* q, float* k,
                          const float* v) override;
    void projectNormRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, const Projection& q, const Projection& k,
                                 const Projection& v, const float* x, int64_t tokens) override;
    void attend(const AttentionLayer& a, const float* q, float* out) override;
    void gatherOutputs(float* rows, int64_t width) override;
    void readRows(const float* src, float* hostDst, size_t count) override;
    void endStep() override;
    void synchronize() override { settleNorm(); }

private:
    struct TokenSteps;
    // A residualNorm (or rmsNorm) of several rows is held until the next op
    // (backend.h allows it: its results are first read by the next op). A matmul whose
    // input is its y runs it row by row inside its own job (kernels::RowPrologue),
    // so a decode step of many sequences spends no time norming on the driving
    // thread alone and no round trip on it; any other op runs it first.
    struct PendingNorm {
        float* x = nullptr;
        float* o = nullptr;  // nullptr: an rmsNorm of x into y (x is not written)
        const float* postNorm = nullptr;
        const float* nextNorm = nullptr;
        float* y = nullptr;
        int64_t rows = 0, width = 0;
        float eps = 0.0f;
    };
    bool holdsNorm(int64_t rows) const;
    // Rows [r0, r1) of a norm; all of it now, on the pool where the rows are many.
    static void normRows(const PendingNorm& p, int64_t r0, int64_t r1);
    void runNorm(const PendingNorm& p);
    // Runs the held norm now, if any.
    void settleNorm();
    // The held norm as the row prologue of a matmul reading `rows` rows of x,
    // or nullptr after running it (another input) or when none is held.
    const kernels::RowPrologue* takeNormFor(const float* x, int64_t rows);
    void computeRowGroups();
    // normRopeAndStore's work on q, k and v of this step, in pieces for any thread.
    TokenSteps tokenSteps(const AttentionLayer& a, const HeadNorms& norms, float* q, float* k, const float* v) const;

    std::unique_ptr<kernels::ThreadPool> pool_;
    bool repack_;
    std::vector<std::unique_ptr<kernels::PackedBuffer>> packed_;  // adopted copies
    uint64_t extraBytes_ = 0;
    std::vector<const void*> heads_;   // output heads' rows (one per model): their matmuls are timed on their own
    std::vector<kernels::RopeParams> ropeKinds_;
    std::vector<kernels::MatmulOutput> manyOuts_;  // matmulMany's, kept for their capacity
    std::vector<int64_t> qkvPartEnds_;             // projectNormRopeAndStore's: each query head, then k and v
    PendingNorm pendingNorm_;                      // rows 0: none held
    PendingNorm takenNorm_;                        // the one a matmul is running as its prologue
    kernels::RowPrologue takenRow_;                // reads takenNorm_

    // The current step.
    int64_t stepStartNs_ = 0;          // steady clock at beginStep while profiling (weir/step_profile.h)
    const Batch* batch_ = nullptr;
    const KvAccess* kv_ = nullptr;
    std::vector<int32_t> outRows_;
    std::vector<float> ropeCs_;        // [kind][token][ropeStride_]
    int32_t ropeStride_ = 0;           // the largest nRot
    std::vector<float> attnScratch_;   // per thread
    // An attention tile: `tokens` batch tokens from firstToken (one sequence)
    // times `heads` query heads from firstHead (all of one KV head's group).
    struct AttnTile {
        int32_t firstToken, tokens, firstHead, heads;
    };
    // Queries per tile (tokens x group heads) the tiles aim at: each K/V row is
    // read from the cache and converted once per tile, and a long prompt's rows
    // do not fit in L2; yet prefill still has many tiles to split.
    static constexpr int kAttnTileQueries = 32;
    std::vector<AttnTile> attnTiles_;
    std::vector<int64_t> attnCost_;    // per tile: its work (keys x heads)
    kernels::LongestFirst attnDeal_;   // the tiles of each job
    // How cutAttentionTiles cut this layer's tiles: tokens and heads per tile
    // (at most), and the jobs they were dealt to.
    struct AttnTiling {
        int64_t tokens = 1, heads = 1, jobs = 0;
    };
    AttnTiling cutAttentionTiles(const AttentionLayer& a);
    void splitAttendingTokens(const AttentionLayer& a);
    // Flash decoding (attend()): a split token's queries in parts of at
    // least kAttnMinPartKeys positions, one (token, head, part) per item.
    static constexpr int64_t kAttnMinPartKeys = 128;
    struct AttnSplitItem {
        int32_t token, head, part;
    };
    std::vector<AttnSplitItem> attnSplit_;
    std::vector<int32_t> attnTokenParts_;          // per batch token (1: whole, in tiles)
    std::vector<kernels::AttendPart> attnParts_;   // per item
    std::vector<float> attnPartAcc_;               // per item, headDimV floats
    std::unique_ptr<std::atomic<int32_t>[]> attnPartsLeft_;  // per (token, head): parts not yet done
    size_t attnPartsLeftSize_ = 0;
    // Each row's sequence batch (size, index) for matmul's llama.cpp kernel
    // choice: all batch rows, and the rows that produce logits.
    std::vector<int32_t> order_, groupSize_, groupIndex_, outGroupSize_, outGroupIndex_;
    kernels::RowGroups groups_, outGroups_;
};

} // namespace weir
