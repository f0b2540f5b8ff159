// ModelRunner: Model + SimpleKvCache + Sampler for one sequence.
#include "weir/model_runner.h"

#include <algorithm>
#include <chrono>

#include "engine/gguf/gguf_file.h"
#include "engine/grammar/constraint_factory.h"
#include "engine/models/model.h"
#include "engine/models/model_assembly.h"
#include "engine/api/device_description.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/sampling/sampler.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/read_bandwidth.h"
#include "kernels/cpu/thread_pool.h"
#include "weir/base/error.h"

namespace weir {

struct ModelRunner::Impl {
    ModelRunnerOptions options;
    AssembledModel parts;  // backend, file, model: first, so it goes last
    std::shared_ptr<const gguf::GgufFile> file;
    Model* model = nullptr;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<StreamingDetokenizer> detokenizer;
    std::unique_ptr<SimpleKvCache> kv;
    Sampler sampler;
    std::vector<int32_t> history;   // every token fed, for the penalties
    std::vector<float> logits;
    int32_t context = 0;
    std::unique_ptr<grammar::ConstraintFactory> constraints;
    std::unique_ptr<grammar::GrammarConstraint> constraint;   // a constraint held from the start
    std::unique_ptr<grammar::LazyConstraint> lazy;            // or one held from its trigger on
    GrammarStepCost lastGrammarStep;

    explicit Impl(const ModelRunnerOptions& o) : options(o), sampler(o.sampling) {}

    grammar::ConstraintFactory& factory() {
        if (!constraints) constraints = std::make_unique<grammar::ConstraintFactory>(tok());
        return *constraints;
    }
    // Built at the first constrained sample() (and again after restart()).
    void makeConstraint() {
        if (options.constraint.lazy()) lazy = factory().makeLazy(options.constraint);
        else constraint = factory().make(options.constraint, tok().endOfGeneration());
    }
    bool constrained() const { return options.constraint.kind != OutputConstraint::Kind::None; }
    bool maskLogits() {
        return lazy ? lazy->maskLogits(logits.data(), int32_t(logits.size()))
                    : constraint->maskLogits(logits.data(), int32_t(logits.size()));
    }
    bool accept(int32_t token) { return lazy ? lazy->accept(token) : constraint->accept(token); }
    bool lastMaskWasCached() const { return lazy ? lazy->lastMaskWasCached() : constraint->lastMaskWasCached(); }

    Tokenizer& tok() {
        if (!tokenizer) {
            tokenizer = Tokenizer::fromGguf(*file);
            detokenizer = std::make_unique<StreamingDetokenizer>(*tokenizer);
        }
        return *tokenizer;
    }
};

ModelRunner::ModelRunner(const ModelRunnerOptions& options) : impl_(std::make_unique<Impl>(options)) {
    Impl& m = *impl_;
    m.parts = assembleModel(options.modelPath, backendRequestFor(options.device, options.threads, options.repackWeights));
    m.file = m.parts.file;
    m.model = m.parts.model.get();
    const ModelConfig& cfg = m.model->config();
    setContext(options.contextTokens > 0 ? options.contextTokens : cfg.nCtxTrain);
}

void ModelRunner::setContext(int32_t tokens) {
    Impl& m = *impl_;
    if (m.kv) throw Error("the context is fixed once a token was fed");
    const int32_t modelContext = m.model->config().nCtxTrain;
    if (tokens < 1 || tokens > modelContext)
        throw Error(std::to_string(tokens) + " positions: must be between 1 and the model's context of " +
                    std::to_string(modelContext));
    m.context = tokens;
}

ModelRunner::~ModelRunner() = default;

const ModelConfig& ModelRunner::config() const { return impl_->model->config(); }
int32_t ModelRunner::threads() const { return impl_->model->backend().threads(); }
ComputeDevice ModelRunner::device() const { return toComputeDevice(impl_->model->backend().device()); }
int32_t ModelRunner::position() const { return int32_t(impl_->history.size()); }

DecodeTraffic ModelRunner::decodeTraffic() const {
    const Impl& m = *impl_;
    const ModelConfig& c = m.model->config();
    DecodeTraffic t;
    const bool tied = m.file->findTensor("output.weight") == nullptr;
    for (const gguf::TensorInfo& info : m.file->tensors()) {
        const bool embedding = info.name == "token_embd.weight";
        if (embedding && !tied) continue;  // one row per token
        t.weightBytes += info.nbytes;
        if (info.name == "output.weight" || (embedding && tied)) t.outputHeadBytes = info.nbytes;
    }
    const uint64_t perLayer = kvRowBytes(m.options.kvDtype, int64_t(c.nHeadKv) * c.headDimK) +
                              kvRowBytes(m.options.kvDtype, int64_t(c.nHeadKv) * c.headDimV);
    for (int32_t l = 0; l < c.nLayer; ++l) {
        const bool slides = size_t(l) < c.layerSlides.size() && c.layerSlides[size_t(l)];
        (slides ? t.kvBytesPerWindowPosition : t.kvBytesPerPosition) += perLayer;
    }
    t.weightBytes += m.model->backend().adoptedExtraBytes();  // repacked copies are read instead of (a little more than) the rows
    t.slidingWindow = c.slidingWindow;
    return t;
}

double measureReadBandwidth(int32_t threads) {
    kernels::ThreadPool pool(threads);
    return kernels::measureReadBandwidth(pool);
}

const char* cpuKernelsInUse() {
    if (kernels::activeKernelPath() != kernels::KernelPath::Avx2) return "scalar";
    if (kernels::amxActive()) return "avx512-vnni+amx";
    if (kernels::tileGemmActive()) return "avx512-vnni+tiles";
    return kernels::vnniActive() ? "avx512-vnni" : "avx2";
}

std::vector<int32_t> ModelRunner::tokenize(const std::string& text) {
    Tokenizer& tok = impl_->tok();
    return tok.encode(text, tok.addBosDefault(), false);
}

bool ModelRunner::isEndOfGeneration(int32_t token) { return impl_->tok().isEndOfGeneration(token); }

std::string ModelRunner::tokenText(int32_t token) {
    impl_->tok();
    return impl_->detokenizer->push(token);
}

std::string ModelRunner::flushText() {
    impl_->tok();
    return impl_->detokenizer->flush();
}

const std::vector<float>& ModelRunner::feed(const std::vector<int32_t>& tokens, int32_t chunk) {
    Impl& m = *impl_;
    if (tokens.empty()) throw Error("nothing to feed");
    if (int64_t(m.history.size()) + int64_t(tokens.size()) > m.context)
        throw Error(std::to_string(m.history.size() + tokens.size()) + " tokens exceed the runner's context of " +
                    std::to_string(m.context));
    chunk = std::max(chunk, 1);
    if (!m.kv) m.kv = std::make_unique<SimpleKvCache>(m.model->config(), 1, m.context, 16, m.options.kvDtype, m.model->backend());
    Batch batch;
    for (size_t start = 0; start < tokens.size(); start += size_t(chunk)) {
        batch.tokens.clear();
        const size_t end = std::min(tokens.size(), start + size_t(chunk));
        for (size_t i = start; i < end; ++i) {
            batch.add(tokens[i], 0, int32_t(m.history.size()), i + 1 == tokens.size());
            m.history.push_back(tokens[i]);
        }
        m.model->forward(batch, *m.kv, m.logits);
    }
    return m.logits;
}

int32_t ModelRunner::sample() {
    Impl& m = *impl_;
    if (m.logits.empty()) throw Error("sample() before any token was fed");
    if (!m.constrained()) return m.sampler.sample(m.logits, m.history);
    if (!m.constraint && !m.lazy) m.makeConstraint();
    using Clock = std::chrono::steady_clock;
    const auto ms = [](Clock::time_point from) {
        return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
    };
    const auto maskStart = Clock::now();
    if (!m.maskLogits()) throw Error("the output constraint allows no token of this vocabulary here");
    double grammarMs = ms(maskStart);
    const bool computed = !m.lastMaskWasCached();
    const int32_t token = m.sampler.sample(m.logits, m.history);
    const auto acceptStart = Clock::now();
    if (!m.accept(token)) throw Error("the sampler drew a token the output constraint does not allow");
    grammarMs += ms(acceptStart);
    m.lastGrammarStep = {grammarMs, computed};
    return token;
}

bool ModelRunner::constraintFinished() const { return impl_->constraint && impl_->constraint->finished(); }

GrammarStepCost ModelRunner::lastGrammarStep() const { return impl_->lastGrammarStep; }

GrammarIndexInfo ModelRunner::grammarIndex() {
    grammar::ConstraintFactory& f = impl_->factory();
    GrammarIndexInfo info;
    info.vocabSize = impl_->tok().vocabSize();
    info.trieNodes = int32_t(f.trie()->nodeCount());
    info.buildMs = f.trieBuildMs();
    return info;
}

void ModelRunner::restart(const SamplingParams& sampling, const OutputConstraint& constraint) {
    Impl& m = *impl_;
    m.options.sampling = sampling;
    m.options.constraint = constraint;
    m.sampler = Sampler(sampling);
    m.constraint.reset();
    m.lazy.reset();
    m.lastGrammarStep = {};
    m.kv.reset();
    m.history.clear();
    m.logits.clear();
    if (m.detokenizer) m.detokenizer = std::make_unique<StreamingDetokenizer>(*m.tokenizer);
}

} // namespace weir
