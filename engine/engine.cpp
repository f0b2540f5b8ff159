// weir::Engine: loads the model, tokenizer and chat template, sizes the KV
// pools (refusing a configuration below its floor), and runs the scheduler on
// its own thread.
#include "engine/engine.h"

#include <thread>

#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/util/error.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

struct Engine::Impl {
    EngineOptions options;
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatTemplate> chat;   // null when the file has no template
    kv::PoolPlan plan;
    std::unique_ptr<kv::HybridKvCache> cache;
    std::unique_ptr<kernels::ThreadPool> threads;
    std::unique_ptr<Scheduler> scheduler;
    std::atomic<bool> stop{false};
    std::thread thread;
};

Engine::Engine(const EngineOptions& options) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.options = options;
    if (options.modelPath.empty()) throw Error("no model file given");
    m.file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(options.modelPath));
    m.model = loadModel(m.file);
    m.tokenizer = Tokenizer::fromGguf(*m.file);
    if (auto tmpl = m.file->getString("tokenizer.chat_template"); tmpl && !tmpl->empty()) {
        const std::string bos = m.tokenizer->bos() >= 0 ? m.tokenizer->tokenText(m.tokenizer->bos()) : "";
        const std::string eos = m.tokenizer->eos() >= 0 ? m.tokenizer->tokenText(m.tokenizer->eos()) : "";
        m.chat = ChatTemplate::create(*tmpl, bos, eos);
    }
    // Sizing: throws weir::Error with every term of the floor when the pools are too small.
    m.plan = kv::planPoolsOrThrow(options, m.model->config());
    m.cache = std::make_unique<kv::HybridKvCache>(kv::KvCacheConfig::fromPlan(m.plan, m.model->config()));
    m.threads = std::make_unique<kernels::ThreadPool>(options.threads);

    SchedulerOptions so;
    so.maxRunning = options.maxRunningRequests;
    so.prefillChunk = options.prefillChunk;
    so.retainGap = options.retainGap;
    so.maxContext = int32_t(m.plan.maxContext);
    so.maxWaiting = options.maxWaiting;
    so.checkEveryStep = options.checkIntegrityEveryStep;
    m.scheduler = std::make_unique<Scheduler>(*m.model, *m.cache, *m.threads, m.tokenizer.get(), so);
    m.thread = std::thread([&m] { m.scheduler->run(m.stop); });
}

Engine::~Engine() {
    if (!impl_) return;
    impl_->stop.store(true);
    if (impl_->scheduler) impl_->scheduler->wake();
    if (impl_->thread.joinable()) impl_->thread.join();
}

const ModelConfig& Engine::modelConfig() const { return impl_->model->config(); }
const Tokenizer& Engine::tokenizer() const { return *impl_->tokenizer; }
const EngineOptions& Engine::options() const { return impl_->options; }

std::string Engine::renderChat(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const {
    if (!impl_->chat) throw Error(impl_->options.modelPath + ": the model has no chat template (tokenizer.chat_template)");
    return impl_->chat->render(messages, addGenerationPrompt);
}

std::vector<int32_t> Engine::tokenizeChat(const std::vector<ChatMessage>& messages) const {
    const Tokenizer& tok = *impl_->tokenizer;
    // The template writes BOS as text and the tokenizer may add one too:
    // parse the text's own BOS, add one only if it is missing, never two.
    std::vector<int32_t> ids = tok.encode(renderChat(messages, true), false, true);
    const int32_t bos = tok.bos();
    if (bos >= 0 && tok.addBosDefault() && (ids.empty() || ids.front() != bos)) ids.insert(ids.begin(), bos);
    size_t extra = 0;
    while (bos >= 0 && extra + 1 < ids.size() && ids[extra] == bos && ids[extra + 1] == bos) ++extra;
    ids.erase(ids.begin(), ids.begin() + std::ptrdiff_t(extra));
    return ids;
}

std::vector<int32_t> Engine::tokenize(const std::string& text, bool addBos) const {
    return impl_->tokenizer->encode(text, addBos, false);
}

uint64_t Engine::submit(GenerateRequest request, EventSink sink) {
    return impl_->scheduler->submit(std::move(request), std::move(sink));
}

void Engine::cancel(uint64_t id) { impl_->scheduler->cancel(id); }

CacheStatus Engine::cacheStatus() const { return impl_->scheduler->status(); }

void Engine::clearPrefixCache() { impl_->scheduler->clearPrefixCache(); }

} // namespace weir
