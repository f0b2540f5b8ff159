#include "engine/backend/cuda/cuda_backend.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <string>

#include "kernels/cuda/dequantize.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemm_cublas.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_q8.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/norm.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/rope_store.h"
#include "weir/base/error.h"

namespace weir::cudabackend {
namespace {

constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;  // set on the handle so cuBLAS can run inside graph capture
constexpr size_t kMinMetaWords = 16384;
constexpr int32_t kEagerStepsBeforeCapture = 1;           // the first step of a key settles scratch sizes
// Decode GEMVs of quantized weights take int8 activations (gemv_q8.h): far
// fewer instructions per weight byte, which is what keeps 4-bit weights at
// memory speed; false: f32 activations for every type (gemv.h).
constexpr bool kInt8Activations = true;

std::string mib(size_t bytes) { return std::to_string((bytes + (size_t(1) << 20) - 1) >> 20) + " MiB"; }

GgmlType kvType(KvDtype d) {
    switch (d) {
    case KvDtype::F16: return GgmlType::F16;
    case KvDtype::Q8_0: return GgmlType::Q8_0;
    case KvDtype::F32: return GgmlType::F32;
    case KvDtype::FP8_E4M3: return GgmlType::E4M3_KV;
    }
    return GgmlType::F16;
}

enum Op : uint64_t { OpEmbed = 1, OpNorm, OpMatmul, OpBias, OpAdd, OpGlu, OpRope, OpAttend, OpGather };

uint64_t ptr(const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

uint64_t mix(uint64_t h, uint64_t v) {
    // FNV-1a over the 8 bytes of v.
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
    return h;
}

constexpr uint64_t kHashSeed = 14695981039346656037ull;

} // namespace

CudaBackend::CudaBackend(const CudaBackendOptions& options) : options_(options) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) throw Error(std::string("CUDA: ") + cudaGetErrorString(e));
    if (options.device < 0 || options.device >= count)
        throw Error("CUDA device " + std::to_string(options.device) + " does not exist (" + std::to_string(count) +
                    " device" + (count == 1 ? "" : "s") + ")");
    bind();
    try {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream");
        const cublasStatus_t st = cublasCreate(&blas_);
        if (st != CUBLAS_STATUS_SUCCESS)
            throw Error(std::string("CUDA: cuBLAS could not start: ") + cublasGetStatusString(st));
        check(cudaMalloc(&blasWorkspace_, kBlasWorkspaceBytes), "allocating the cuBLAS workspace");
        // Stream first: setting it resets the workspace to cuBLAS's own pool.
        if (cublasSetStream(blas_, stream_) != CUBLAS_STATUS_SUCCESS ||
            cublasSetWorkspace(blas_, blasWorkspace_, kBlasWorkspaceBytes) != CUBLAS_STATUS_SUCCESS)
            throw Error("CUDA: cuBLAS refused its stream or workspace");
        ensureMetaCapacity(kMinMetaWords);
    } catch (...) {
        if (blas_) cublasDestroy(blas_);
        if (blasWorkspace_) cudaFree(blasWorkspace_);
        if (stream_) cudaStreamDestroy(stream_);
        throw;
    }
}

CudaBackend::~CudaBackend() {
    bind();
    if (mode_ == Mode::Capturing) {
        cudaGraph_t g = nullptr;
        cudaStreamEndCapture(stream_, &g);
        if (g) cudaGraphDestroy(g);
    }
    cudaStreamSynchronize(stream_);
    for (auto& [key, g] : graphs_) cudaGraphExecDestroy(g.exec);
    for (void* p : adopted_) cudaFree(p);
    for (void* p : allocations_) cudaFree(p);
    for (const RopeKind& k : ropeKinds_) cudaFree(const_cast<float*>(k.freqFactors));
    cudaFree(scratch_);
    cudaFree(metaDevice_);
    cudaFreeHost(metaHost_);
    cudaFree(blasWorkspace_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
}

void CudaBackend::bind() const { cudaSetDevice(options_.device); }

void CudaBackend::check(cudaError_t e, const char* what) const {
    if (e != cudaSuccess) throw Error(std::string("CUDA error ") + what + ": " + cudaGetErrorString(e));
}

// ---- memory ----

void* CudaBackend::allocate(size_t bytes, std::string_view /*what*/) {
    bind();
    if (mode_ == Mode::Capturing) abandonCapture();
    void* p = nullptr;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky-free error state of this thread
        return nullptr;
    }
    if (cudaMemset(p, 0, bytes) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(p);
        return nullptr;
    }
    allocations_.insert(p);
    return p;
}

void CudaBackend::release(void* p) {
    if (!p) return;
    bind();
    if (mode_ == Mode::Capturing) abandonCapture();
    waitIdle();
    dropGraphs();  // a graph may have baked the pointer in
    allocations_.erase(p);
    cudaFree(p);
}

void CudaBackend::copySync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    bind();
    // Copies between a step's ops would run out of order with a deferred
    // (replayed) step, and cannot join a capture: the KV owner prepares its
    // pages before a step begins.
    if (mode_ == Mode::Replaying) throw Error("CUDA backend: memory copied in the middle of a replayed step");
    if (mode_ == Mode::Capturing) abandonCapture();
    // On the stream, after everything queued, and waited for: a pageable
    // host buffer may be reused as soon as this returns.
    check(cudaMemcpyAsync(dst, src, bytes, kind, stream_), "copying memory");
    pending_ = true;
    waitIdle();
}

void CudaBackend::copyIn(void* dst, const void* hostSrc, size_t bytes) { copySync(dst, hostSrc, bytes, cudaMemcpyHostToDevice); }

void CudaBackend::copyOut(void* hostDst, const void* src, size_t bytes) { copySync(hostDst, src, bytes, cudaMemcpyDeviceToHost); }

void CudaBackend::copyWithin(void* dst, const void* src, size_t bytes) { copySync(dst, src, bytes, cudaMemcpyDeviceToDevice); }

void CudaBackend::waitIdle() {
    if (!pending_) return;
    check(cudaStreamSynchronize(stream_), "running the queued work");
    pending_ = false;
}

// ---- facts ----

DeviceInfo CudaBackend::device() const {
    bind();
    DeviceInfo info;
    info.kind = DeviceKind::Cuda;
    info.index = options_.device;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, options_.device) == cudaSuccess) {
        info.name = prop.name;
        info.detail = "compute " + std::to_string(prop.major) + "." + std::to_string(prop.minor);
    }
    size_t freeBytes = 0, totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess) {
        info.freeBytes = freeBytes;
        info.totalBytes = totalBytes;
    }
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    info.detail += (info.detail.empty() ? "" : ", ") + ("CUDA " + version(runtime) + " (driver " + version(driver) + ")");
    return info;
}

bool CudaBackend::supportsKv(KvDtype) const { return true; }  // F16, Q8_0, F32 and FP8 E4M3 all

bool CudaBackend::supportsWeight(GgmlType type, int64_t cols) const { return cuda::weightTypeSupported(type, cols); }

// ---- load ----

WeightView CudaBackend::adoptWeight(const WeightView& host, WeightRole /*role*/, std::string_view name, bool /*fileMapped*/) {
    bind();
    if (!cuda::weightTypeSupported(host.type, host.cols)) {
        const TypeTraits* t = typeTraits(host.type);
        throw Error("CUDA backend cannot multiply " + std::string(name) + " (" + (t ? t->name : "unknown type") + ", " +
                    std::to_string(host.cols) + " columns)");
    }
    const size_t bytes = host.rowStride * size_t(host.rows);
    // A tied output head is the embedding table again: one device copy.
    for (const WeightView& seen : adoptedViews_)
        if (seen.type == host.type && seen.cols == host.cols && seen.rows == host.rows && seen.rowStride == host.rowStride &&
            adoptedFrom_[size_t(&seen - adoptedViews_.data())] == host.data)
            return seen;
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        size_t freeBytes = 0, total = 0;
        cudaMemGetInfo(&freeBytes, &total);
        throw Error("not enough GPU memory for " + std::string(name) + ": " + mib(bytes) + " needed, " + mib(freeBytes) +
                    " free");
    }
    adopted_.push_back(p);
    copySync(p, host.data, bytes, cudaMemcpyHostToDevice);
    WeightView view = host;
    view.data = p;
    view.tiles = nullptr;
    adoptedViews_.push_back(view);
    adoptedFrom_.push_back(host.data);
    return view;
}

const float* CudaBackend::adoptVector(const float* host, int64_t n, std::string_view name) {
    bind();
    void* p = nullptr;
    const size_t bytes = size_t(std::max<int64_t>(n, 1)) * sizeof(float);
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        throw Error("not enough GPU memory for " + std::string(name) + ": " + mib(bytes) + " needed");
    }
    adopted_.push_back(p);
    if (n > 0) copySync(p, host, size_t(n) * sizeof(float), cudaMemcpyHostToDevice);
    return static_cast<const float*>(p);
}

void CudaBackend::setRopeKinds(std::span<const RopeKind> kinds) {
    bind();
    waitIdle();
    dropGraphs();
    for (const RopeKind& k : ropeKinds_) cudaFree(const_cast<float*>(k.freqFactors));
    ropeKinds_.clear();
    for (const RopeKind& k : kinds) {
        RopeKind d = k;
        d.freqFactors = nullptr;
        if (k.freqFactors && k.nRot > 0) {
            void* p = nullptr;
            const size_t bytes = size_t(k.nRot / 2) * sizeof(float);
            check(cudaMalloc(&p, bytes), "allocating RoPE frequency factors");
            d.freqFactors = static_cast<const float*>(p);
            ropeKinds_.push_back(d);  // owned (and freed) from here on
            copySync(p, k.freqFactors, bytes, cudaMemcpyHostToDevice);
            continue;
        }
        ropeKinds_.push_back(d);
    }
}

// ---- scratch, metadata and graphs ----

void* CudaBackend::scratch(size_t bytes) {
    if (bytes <= scratchBytes_) return scratch_;
    // Growing moves the buffer: graphs that use it are dropped, and a capture
    // in progress is launched as it stands and the step goes on without it.
    if (mode_ == Mode::Capturing) abandonCapture();
    waitIdle();
    dropGraphs();
    cudaFree(scratch_);
    scratch_ = nullptr;
    const size_t grown = std::max(bytes, scratchBytes_ + scratchBytes_ / 2);
    const size_t rounded = (grown + (size_t(1) << 20) - 1) & ~((size_t(1) << 20) - 1);
    if (cudaMalloc(&scratch_, rounded) != cudaSuccess) {
        cudaGetLastError();
        scratchBytes_ = 0;
        throw Error("not enough GPU memory for " + mib(rounded) + " of scratch");
    }
    scratchBytes_ = rounded;
    return scratch_;
}

void CudaBackend::ensureMetaCapacity(size_t words) {
    if (words <= metaWords_) return;
    waitIdle();
    dropGraphs();
    size_t cap = std::max(kMinMetaWords, metaWords_);
    while (cap < words) cap *= 2;
    cudaFreeHost(metaHost_);
    cudaFree(metaDevice_);
    metaHost_ = nullptr;
    metaDevice_ = nullptr;
    metaWords_ = 0;
    check(cudaHostAlloc(reinterpret_cast<void**>(&metaHost_), cap * sizeof(int32_t), cudaHostAllocDefault),
          "allocating pinned step metadata");
    check(cudaMalloc(reinterpret_cast<void**>(&metaDevice_), cap * sizeof(int32_t)), "allocating step metadata");
    metaWords_ = cap;
}

void CudaBackend::dropGraphs() {
    if (graphs_.empty()) return;
    waitIdle();
    for (auto& [key, g] : graphs_) cudaGraphExecDestroy(g.exec);
    graphs_.clear();
    seen_.clear();
}


void CudaBackend::finishCapture(bool launch) {
    cudaGraph_t graph = nullptr;
    const cudaError_t e = cudaStreamEndCapture(stream_, &graph);
    mode_ = Mode::Eager;
    check(e, "ending a graph capture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ie = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(ie, "instantiating a captured step");
    if (launch) {
        pending_ = true;
        check(cudaGraphLaunch(exec, stream_), "launching a captured step");
    }
    graphs_[key_] = Graph{exec, opsHash_};
}

void CudaBackend::abandonCapture() {
    // Ops recorded so far have not run: run them once from a temporary graph.
    cudaGraph_t graph = nullptr;
    const cudaError_t e = cudaStreamEndCapture(stream_, &graph);
    mode_ = Mode::Eager;
    check(e, "ending a graph capture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ie = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(ie, "instantiating a captured step");
    pending_ = true;
    const cudaError_t le = cudaGraphLaunch(exec, stream_);
    cudaStreamSynchronize(stream_);
    cudaGraphExecDestroy(exec);
    check(le, "launching a captured step");
    seen_.erase(key_);  // capture again when the key comes back
}

void CudaBackend::launchStepGraph() {
    if (mode_ == Mode::Capturing) {
        finishCapture(true);
        return;
    }
    if (mode_ != Mode::Replaying) return;
    mode_ = Mode::Eager;
    std::vector<std::function<void()>> ops;
    ops.swap(deferred_);
    pending_ = true;
    const auto it = graphs_.find(key_);
    if (it != graphs_.end() && it->second.opsHash == opsHash_) {
        check(cudaGraphLaunch(it->second.exec, stream_), "replaying a step");
        ++replayed_;
        return;
    }
    // The step asked for other ops (or pointers) than the captured step of
    // its shape: run it as it came, and capture the key again later.
    if (it != graphs_.end()) {
        waitIdle();
        cudaGraphExecDestroy(it->second.exec);
        graphs_.erase(it);
    }
    seen_.erase(key_);
    ++mismatched_;
    check(cudaMemcpyAsync(metaDevice_, metaHost_, words_.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
          "uploading step metadata");
    for (auto& op : ops) op();
}

// ---- a step ----

template <class Launch>
void CudaBackend::run(uint64_t op, std::initializer_list<uint64_t> args, Launch&& launch) {
    if (mode_ == Mode::Eager) {
        pending_ = true;
        launch();
        return;
    }
    opsHash_ = mix(opsHash_, op);
    for (uint64_t a : args) opsHash_ = mix(opsHash_, a);
    if (mode_ == Mode::Replaying) deferred_.emplace_back(std::forward<Launch>(launch));  // for a step that turns out different
    else launch();                                                                        // captured
}


void CudaBackend::beginStep(const StepInfo& step) {
    bind();
    if (inStep_) launchStepGraph();  // a step left without readRows or endStep still runs
    mode_ = Mode::Eager;
    waitIdle();  // the pinned metadata of the previous step may still be in flight
    layout_ = flattenStep(step, words_);
    ensureMetaCapacity(words_.size());
    std::memcpy(metaHost_, words_.data(), words_.size() * sizeof(int32_t));
    pageSize_ = step.kv ? step.kv->pageSize() : 0;
    inStep_ = true;
    opsHash_ = kHashSeed;

    key_ = graphKey(*step.batch, step.outputRows);
    if (options_.graphs && graphable(key_)) {
        if (graphs_.count(key_)) {
            mode_ = Mode::Replaying;  // the graph's first node uploads the metadata
            return;
        }
        int32_t& seen = seen_[key_];
        if (seen >= kEagerStepsBeforeCapture) {
            check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "starting a graph capture");
            mode_ = Mode::Capturing;
            // The whole buffer, so the copy's size is the same on every replay.
            check(cudaMemcpyAsync(metaDevice_, metaHost_, metaWords_ * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
                  "uploading step metadata");
            return;
        }
        ++seen;
    }
    pending_ = true;
    check(cudaMemcpyAsync(metaDevice_, metaHost_, words_.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
          "uploading step metadata");
}

void CudaBackend::embed(const WeightView& table, float scale, float* x, int64_t width) {
    run(OpEmbed, {ptr(table.data), uint64_t(width), ptr(x), uint64_t(std::bit_cast<uint32_t>(scale))}, [=, this] {
        cuda::embedRows(table.type, table.data, table.rowStride, width, metaAt(layout_.tokenIds), layout_.tokens, scale, x,
                        stream_);
    });
}

void CudaBackend::rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t width, float eps) {
    run(OpNorm, {ptr(x), ptr(w), ptr(y), uint64_t(rows), uint64_t(width)},
        [=, this] { cuda::rmsNormRows(x, w, y, rows, width, eps, stream_); });
}

void CudaBackend::matmul(const WeightView& w, const float* x, int64_t rows, float* y, StepRows /*set*/) {
    run(OpMatmul, {ptr(w.data), ptr(x), uint64_t(rows), ptr(y)}, [=, this] {
        if (rows <= cuda::kGemvMaxRows) {
            if (kInt8Activations && cuda::gemvQ8Supported(w.type)) {
                void* xq = scratch(cuda::q8ActivationBytes(rows, w.cols));
                cuda::quantizeActivations(x, rows, w.cols, xq, stream_);
                cuda::gemvQ8(w.type, w.data, w.rowStride, w.cols, w.rows, xq, rows, y, stream_);
            } else {
                cuda::gemv(w.type, w.data, w.rowStride, w.cols, w.rows, x, rows, y, stream_);
            }
            return;
        }
        void* s = scratch(cuda::gemmScratchBytes(w.type, w.cols, w.rows, rows));
        const cublasStatus_t st = cuda::gemmCublas(blas_, w.type, w.data, w.rowStride, w.cols, w.rows, x, rows, y, s, stream_);
        if (st != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS GEMM failed: ") + cublasGetStatusString(st));
    });
}

// A launch per projection: the stream orders them without a host round trip,
// and a decode step replays them inside its graph.
void CudaBackend::matmulMany(std::span<const Projection> outs, const float* x, int64_t rows, StepRows set) {
    for (const Projection& p : outs) matmul(p.w, x, rows, p.y, set);
}

void CudaBackend::addBias(float* y, const float* bias, int64_t rows, int64_t width) {
    if (!bias) return;
    run(OpBias, {ptr(y), ptr(bias), uint64_t(rows), uint64_t(width)},
        [=, this] { cuda::addBiasRows(y, bias, rows, width, stream_); });
}

void CudaBackend::add(float* y, const float* x, int64_t n) {
    run(OpAdd, {ptr(y), ptr(x), uint64_t(n)}, [=, this] { cuda::addInPlace(y, x, n, stream_); });
}

void CudaBackend::glu(GluActivation act, const float* gate, const float* up, float* y, int64_t rows, int64_t width) {
    run(OpGlu, {uint64_t(act), ptr(gate), ptr(up), ptr(y), uint64_t(rows), uint64_t(width)}, [=, this] {
        if (act == GluActivation::GeluTanh) cuda::gegluTanh(gate, up, y, rows * width, stream_);
        else cuda::swiglu(gate, up, y, rows * width, stream_);
    });
}

void CudaBackend::ropeAndStore(const AttentionLayer& a, float* q, float* k, const float* v) {
    if (a.ropeKind < 0 || size_t(a.ropeKind) >= ropeKinds_.size())
        throw Error("CUDA backend: layer " + std::to_string(a.layer) + " uses RoPE setting " + std::to_string(a.ropeKind) +
                    " of " + std::to_string(ropeKinds_.size()));
    run(OpRope, {uint64_t(a.layer), ptr(a.kv.k), ptr(q), ptr(k), ptr(v)}, [=, this] {
        const RopeKind& r = ropeKinds_[size_t(a.ropeKind)];
        const cuda::RopeSpec rope{r.neox, r.nRot, r.base, r.freqScale, r.freqFactors};
        const cuda::PagedKvStore kv{a.kv.k, a.kv.v, kvType(a.kv.dtype), a.kv.rowBytes, pageSize_};
        const cuda::TokenTables tables{metaDevice_, metaAt(a.slides ? layout_.windowTables : layout_.fullTables)};
        cuda::ropeAndStore(q, k, v, layout_.tokens, int32_t(a.nHead), int32_t(a.nHeadKv), int32_t(a.headDimK),
                           int32_t(a.headDimV), rope, a.queryScale, metaAt(layout_.positions), tables, kv, stream_);
    });
}

void CudaBackend::attend(const AttentionLayer& a, const float* q, float* out) {
    if (a.headDimK > cuda::kMaxAttendHeadDim || a.headDimV > cuda::kMaxAttendHeadDim || a.nHeadKv <= 0 ||
        a.nHead % a.nHeadKv != 0)
        throw Error("CUDA attention: unsupported head shape (" + std::to_string(a.nHead) + " heads, " +
                    std::to_string(a.nHeadKv) + " KV heads, dims " + std::to_string(a.headDimK) + "/" +
                    std::to_string(a.headDimV) + ")");
    run(OpAttend, {uint64_t(a.layer), ptr(a.kv.k), ptr(q), ptr(out)}, [=, this] {
        cuda::AttendShape shape;
        shape.nHead = int32_t(a.nHead);
        shape.nHeadKv = int32_t(a.nHeadKv);
        shape.headDimK = int32_t(a.headDimK);
        shape.headDimV = int32_t(a.headDimV);
        shape.window = a.slides && a.window > 0 ? a.window : 0;
        shape.scale = a.scoreScale;
        const size_t need = cuda::attendScratchBytes(layout_.tokens, shape);
        float* s = need ? static_cast<float*>(scratch(need)) : nullptr;
        const cuda::PagedKvRead kv{a.kv.k, a.kv.v, kvType(a.kv.dtype), a.kv.rowBytes, pageSize_};
        const cuda::TokenTables tables{metaDevice_, metaAt(a.slides ? layout_.windowTables : layout_.fullTables)};
        cuda::pagedAttention(q, out, layout_.tokens, metaAt(layout_.positions), tables, kv, shape, s, stream_);
    });
}

void CudaBackend::gatherOutputs(float* rows, int64_t width) {
    run(OpGather, {ptr(rows), uint64_t(width)}, [=, this] {
        if (layout_.outputs == 0) return;
        float* tmp = static_cast<float*>(scratch(size_t(layout_.outputs) * size_t(width) * sizeof(float)));
        cuda::gatherRows(rows, width, metaAt(layout_.outputRows), layout_.outputs, tmp, stream_);
    });
}

void CudaBackend::readRows(const float* src, float* hostDst, size_t count) {
    bind();
    launchStepGraph();
    check(cudaGetLastError(), "in a kernel launch of this step");
    check(cudaMemcpyAsync(hostDst, src, count * sizeof(float), cudaMemcpyDeviceToHost, stream_), "reading results");
    pending_ = true;
    waitIdle();
}

void CudaBackend::endStep() {
    if (!inStep_) return;
    bind();
    launchStepGraph();
    inStep_ = false;
    check(cudaGetLastError(), "in a kernel launch of this step");
}

void CudaBackend::synchronize() {
    bind();
    pending_ = true;
    waitIdle();
}

} // namespace weir::cudabackend
