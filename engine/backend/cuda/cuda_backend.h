#pragma once
// The CUDA backend: device memory, one stream, a cuBLAS handle and the
// weir::cuda kernels behind the Backend ops. Lives in the CUDA module
// (libweir-cuda.so); the engine reaches it through cuda_module_abi.h.
//
// A step's metadata (token ids, positions, output rows, page tables) is
// flattened on the host (step_metadata.h) and uploaded once from pinned
// memory; every op is a launch on the stream, and readRows copies results
// back and waits. Decode steps are replayed as CUDA graphs keyed by their
// shape (graph_key.h): the second step of a key is captured from beginStep
// to the first readRows (or endStep), later ones only fill the pinned
// metadata and launch the graph, whose first node is the upload. The ops of
// a replayed step are kept (not launched) with a hash of their arguments;
// at readRows the graph is launched when the hash is the captured one, and
// otherwise the kept ops run as they came and the key is captured again, so
// results never depend on the transformer repeating itself. Pointers baked
// into graphs stay valid: releasing memory or growing the scratch or
// metadata buffers drops the graphs.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cuda/graph_key.h"
#include "engine/backend/cuda/step_metadata.h"
#include "engine/backend/cuda_module_abi.h"

namespace weir::cudabackend {

class CudaBackend final : public Backend {
public:
    // Throws weir::Error naming what failed (no such device, out of memory...).
    explicit CudaBackend(const CudaBackendOptions& options);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    // DeviceMemory
    void* allocate(size_t bytes, std::string_view what) override;
    void release(void* p) override;
    void copyIn(void* dst, const void* hostSrc, size_t bytes) override;
    void copyOut(void* hostDst, const void* src, size_t bytes) override;
    void copyWithin(void* dst, const void* src, size_t bytes) override;
    bool hostVisible() const override { return false; }

    // Backend
    DeviceInfo device() const override;
    int32_t threads() const override { return 1; }
    bool supportsKv(KvDtype dtype) const override;
    bool supportsWeight(GgmlType type, int64_t cols) const override;
    WeightView adoptWeight(const WeightView& host, WeightRole role, std::string_view name, bool fileMapped) override;
    const float* adoptVector(const float* host, int64_t n, std::string_view name) override;
    uint64_t adoptedExtraBytes() const override { return 0; }
    void setRopeKinds(std::span<const RopeKind> kinds) override;

    void beginStep(const StepInfo& step) override;
    void embed(const WeightView& table, float scale, float* x, int64_t width) override;
    void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps) override;
    void matmul(const WeightView& w, const float* x, int64_t rows, float* y, StepRows set) override;
    void matmulMany(std::span<const Projection> outs, const float* x, int64_t rows, StepRows set) override;
    void addBias(float* y, const float* bias, int64_t rows, int64_t width) override;
    void add(float* y, const float* x, int64_t n) override;
    void glu(GluActivation act, const float* gate, const float* up, float* y, int64_t rows, int64_t width) override;
    void ropeAndStore(const AttentionLayer& a, float* q, float* k, const float* v) override;
    void attend(const AttentionLayer& a, const float* q, float* out) override;
    void gatherOutputs(float* rows, int64_t width) override;
    void readRows(const float* src, float* hostDst, size_t count) override;
    void endStep() override;
    void synchronize() override;

    // Graphs held now and steps replayed so far (for tests and diagnostics).
    size_t graphCount() const { return graphs_.size(); }
    uint64_t replayedSteps() const { return replayed_; }
    // Steps of a captured shape whose ops differed from the capture (run eagerly).
    uint64_t mismatchedSteps() const { return mismatched_; }

private:
    enum class Mode { Eager, Capturing, Replaying };
    struct Graph {
        cudaGraphExec_t exec = nullptr;
        uint64_t opsHash = 0;
    };

    void bind() const;
    void copySync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
    void check(cudaError_t e, const char* what) const;
    // Launches an op, or (in a replayed step) keeps it for the case that the
    // step's ops, hashed with `args`, differ from the captured ones.
    template <class Launch>
    void run(uint64_t op, std::initializer_list<uint64_t> args, Launch&& launch);
    void* scratch(size_t bytes);
    void ensureMetaCapacity(size_t words);
    void launchStepGraph();
    void finishCapture(bool launch);
    void abandonCapture();
    void dropGraphs();
    void waitIdle();
    const int32_t* metaAt(int32_t offset) const { return metaDevice_ + offset; }

    CudaBackendOptions options_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    void* blasWorkspace_ = nullptr;
    void* scratch_ = nullptr;
    size_t scratchBytes_ = 0;
    int32_t* metaHost_ = nullptr;    // pinned
    int32_t* metaDevice_ = nullptr;
    size_t metaWords_ = 0;           // capacity of both
    std::vector<int32_t> words_;
    StepLayout layout_;
    int32_t pageSize_ = 0;
    bool inStep_ = false;
    bool pending_ = false;           // work queued since the last synchronisation

    std::vector<RopeKind> ropeKinds_;  // freqFactors in device memory
    std::unordered_set<void*> allocations_;
    std::vector<void*> adopted_;
    std::vector<WeightView> adoptedViews_;     // weights adopted so far...
    std::vector<const void*> adoptedFrom_;     // ...and the host rows each came from

    Mode mode_ = Mode::Eager;
    GraphKey key_;
    uint64_t opsHash_ = 0;
    std::unordered_map<GraphKey, Graph, GraphKeyHash> graphs_;
    std::unordered_map<GraphKey, int32_t, GraphKeyHash> seen_;  // eager steps per key before capturing
    uint64_t replayed_ = 0;
    uint64_t mismatched_ = 0;
    std::vector<std::function<void()>> deferred_;  // ops of the replayed step, in order
};

} // namespace weir::cudabackend
