#pragma once
// The seam between the model and the math. A transformer describes its layer
// sequence as calls to these ops; a backend does the arithmetic and owns the
// memory it runs on (the CPU backend: process memory and its thread pool; the
// CUDA backend, a module loaded at run time: device memory, streams, cuBLAS
// and CUDA graphs). The scheduler, the page allocator and the prefix tree stay
// on the host and know nothing of devices: a page is a number there and bytes
// here; each step's page tables are read once, at beginStep.
//
// Pointers handed to the ops (activations, weights, KV rows) live in this
// backend's memory (DeviceMemory). One thread drives a backend at a time.
//
// A step is: beginStep, the ops of every layer in order, then readRows of
// the logits, and it always ends with endStep (a step left open is finished
// by the next beginStep). A backend may queue the ops and only run them when
// results are read (the CUDA backend replays a whole decode step as one
// graph), so nothing here returns a computed value except readRows.
// Memory is allocated, released and copied (DeviceMemory) between steps,
// never inside one: a GPU backend drops its recorded graphs on release.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/backend/device_memory.h"
#include "engine/models/batch.h"
#include "engine/models/kv_access.h"
#include "weir/base/weight_view.h"

namespace weir::kernels {
class ThreadPool;
}

namespace weir {

enum class DeviceKind { Cpu, Cuda };

struct DeviceInfo {
    DeviceKind kind = DeviceKind::Cpu;
    int32_t index = 0;          // CUDA device ordinal (0 for the CPU)
    std::string name;           // "NVIDIA H200", or the CPU's brand
    uint64_t totalBytes = 0;    // memory the backend computes in (device memory; RAM for the CPU)
    uint64_t freeBytes = 0;     // of it, free when asked
    std::string detail;         // "compute 9.0, CUDA 13.0" / "avx512-vnni, 16 threads"
};

// What a weight is for: a backend may keep some in another layout.
enum class WeightRole { Embedding, Projection, OutputHead };

enum class GluActivation { GeluTanh, Silu };

// A weight of matmulMany and the rows its product goes to.
struct Projection {
    WeightView w;
    float* y = nullptr;
};

// Norm weights of every query and key head (headDimK floats each; null: that
// head kind has none), as Gemma 3 has.
struct HeadNorms {
    const float* q = nullptr;
    const float* k = nullptr;
    float eps = 0.0f;
};

// Which rows of the step an op runs on: every batch token, or (after
// gatherOutputs) only those that want logits, in batch order.
enum class StepRows { All, Outputs };

// A RoPE setting; layers refer to one by index (Gemma 3: local and global).
struct RopeKind {
    bool neox = true;                    // pairs (i, i + nRot/2); false: (2i, 2i+1)
    int32_t nRot = 0;                    // rotated dimensions per head
    float base = 10000.0f;
    float freqScale = 1.0f;
    const float* freqFactors = nullptr;  // optional nRot/2 divisors (host memory, adopted by setRopeKinds)
};

// One attention layer's shape and where its cache rows are.
struct AttentionLayer {
    int32_t layer = 0;
    KvLayerStorage kv;                   // rows in backend memory
    bool slides = false;                 // window pool; a token sees the last `window` positions
    int32_t window = 0;
    int32_t ropeKind = 0;                // index into setRopeKinds()
    int64_t nHead = 0, nHeadKv = 0, headDimK = 0, headDimV = 0;
    float queryScale = 0.0f;             // q *= this after RoPE (0: leave q as is)
    float scoreScale = 1.0f;             // scores = scoreScale * q.k
};

// A forward pass as a backend sees it, before any op runs.
struct StepInfo {
    const Batch* batch = nullptr;
    const KvAccess* kv = nullptr;
    // A layer of each pool (-1: the model has none of that kind): every layer
    // of a pool shares its page tables, so these two are all a step reads.
    int32_t fullLayer = -1, windowLayer = -1;
    std::span<const int32_t> outputRows; // batch indices that want logits, increasing
};

class Backend : public DeviceMemory {
public:
    ~Backend() override = default;

    virtual DeviceInfo device() const = 0;
    // Host threads the backend computes with (the CPU's pool; 1 for a GPU).
    virtual int32_t threads() const = 0;
    // The pool behind threads(), for host work between steps (the
    // scheduler samples a step's rows on it); null when the backend has none
    // (a GPU). Only the thread driving the backend may use it.
    virtual kernels::ThreadPool* hostPool() { return nullptr; }
    virtual bool supportsKv(KvDtype dtype) const = 0;
    virtual bool supportsWeight(GgmlType type, int64_t cols) const = 0;

    // --- load ---
    // Makes a weight (host memory, usually the file mapping) usable by the
    // ops and returns the view to pass to them; the backend owns any copy.
    // `fileMapped`: the host rows are file pages the backend may give back
    // once copied (a backend that is not hostVisible() never reads them
    // again: the model gives them back after adoption). Throws weir::Error naming `name` when it cannot be had.
    virtual WeightView adoptWeight(const WeightView& host, WeightRole role, std::string_view name, bool fileMapped) = 0;
    // n floats (a norm's weights, a bias) copied or used in place.
    virtual const float* adoptVector(const float* host, int64_t n, std::string_view name) = 0;
    // Bytes the adopted copies hold beyond the host rows they stand for that a
    // decode step reads (the CPU's repacked head), for the traffic figures.
    virtual uint64_t adoptedExtraBytes() const = 0;
    virtual void setRopeKinds(std::span<const RopeKind> kinds) = 0;

    // --- a step ---
    virtual void beginStep(const StepInfo& step) = 0;
    // x[i] = row tokens[i] of `table` (times `scale` unless 0), width floats per row.
    virtual void embed(const WeightView& table, float scale, float* x, int64_t width) = 0;
    // y = rmsNorm(x) * w per row of `width` (x and y may alias; w may be null:
    // no scaling). Its results are first read by the next op, as residualNorm's.
    virtual void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps) = 0;
    // y[r] = W x[r] for `rows` rows; `set` says which step rows they are.
    virtual void matmul(const WeightView& w, const float* x, int64_t rows, float* y, StepRows set) = 0;
    // matmul of every projection with the same input rows (q/k/v, gate/up),
    // each y as matmul gives it; weights may differ in type, not in row
    // length. The CPU runs them as one job on its threads: a decode step's
    // synchronisation points are its pool's round trips.
    virtual void matmulMany(std::span<const Projection> outs, const float* x, int64_t rows, StepRows set) = 0;
    virtual void addBias(float* y, const float* bias, int64_t rows, int64_t width) = 0;
    virtual void add(float* y, const float* x, int64_t n) = 0;  // y += x
    // A sublayer's output o into the residual stream x, and the next norm:
    // o = rmsNorm(o) * postNorm where postNorm is given (Gemma's post norms),
    // x += o, y = rmsNorm(x) * nextNorm. Its results are first read by the
    // backend's next op (callers must not read x, o or y before it), so a
    // backend may run it inside that op: the CPU holds it until the matmul
    // whose input is y and runs it row by row in that matmul's job, with the
    // rows' conversion (one row at a time: one pass over the rows otherwise);
    // others run the ops in turn.
    virtual void residualNorm(float* x, float* o, const float* postNorm, const float* nextNorm, float* y, int64_t rows,
                              int64_t width, float eps) {
        if (postNorm) rmsNorm(o, postNorm, o, rows, width, eps);
        add(x, o, rows * width);
        rmsNorm(x, nextNorm, y, rows, width, eps);
    }
    // y = act(gate) * up, rows of `width`.
    virtual void glu(GluActivation act, const float* gate, const float* up, float* y, int64_t rows, int64_t width) = 0;
    // matmulMany of gate and up, then glu into y (rows of gate.w.rows). The
    // CPU computes the activation inside the gate/up job, a round trip less
    // per layer; others run the two ops.
    virtual void matmulGlu(GluActivation act, const Projection& gate, const Projection& up, const float* x, float* y,
                           int64_t rows, StepRows set) {
        const Projection both[] = {gate, up};
        matmulMany(both, x, rows, set);
        glu(act, gate.y, up.y, y, rows, gate.w.rows);
    }
    // For every step token: RoPE on its q (nHead heads) and k (nHeadKv heads),
    // q *= queryScale, then its K and V rows into the cache at its position.
    virtual void ropeAndStore(const AttentionLayer& a, float* q, float* k, const float* v) = 0;
    // rmsNorm of every head of q and k of the step's `tokens` tokens with its
    // norm weights, then ropeAndStore. The CPU runs it as one pass over the
    // tokens (one round trip instead of three in a step of many sequences);
    // others run the ops in turn.
    virtual void normRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, int64_t tokens, float* q, float* k,
                                  const float* v) {
        if (norms.q) rmsNorm(q, norms.q, q, tokens * a.nHead, a.headDimK, norms.eps);
        if (norms.k) rmsNorm(k, norms.k, k, tokens * a.nHeadKv, a.headDimK, norms.eps);
        ropeAndStore(a, q, k, v);
    }
    // matmulMany of q, k and v from x over all `tokens` step rows, then
    // normRopeAndStore of them (ropeAndStore where norms has neither).
    // The CPU runs the per-token steps inside the projections' job, a round
    // trip less per layer where they would have been a job of their own;
    // others run the ops in turn.
    virtual void projectNormRopeAndStore(const AttentionLayer& a, const HeadNorms& norms, const Projection& q,
                                         const Projection& k, const Projection& v, const float* x, int64_t tokens) {
        const Projection qkv[] = {q, k, v};
        matmulMany(qkv, x, tokens, StepRows::All);
        if (norms.q || norms.k) normRopeAndStore(a, norms, tokens, q.y, k.y, v.y);
        else ropeAndStore(a, q.y, k.y, v.y);
    }
    // out (nHead * headDimV per token) = causal attention of every step token
    // over its sequence's cached positions (the last `window` when slides).
    virtual void attend(const AttentionLayer& a, const float* q, float* out) = 0;
    // Moves row outputRows[r] of `rows` to row r (width floats each).
    virtual void gatherOutputs(float* rows, int64_t width) = 0;
    // Copies `count` floats from backend memory to the host once every op
    // before it has run (the step's logits, its final hidden states).
    virtual void readRows(const float* src, float* hostDst, size_t count) = 0;
    virtual void endStep() = 0;

    virtual void synchronize() = 0;
};

} // namespace weir
