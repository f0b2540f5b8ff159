// weir::Engine: loads the model, tokenizer and chat template, sizes the KV
// pools (refusing a configuration below its floor), and runs the scheduler on
// its own thread.
#include "weir/engine.h"

#include <thread>

#include "engine/chat/chat_template.h"
#include "weir/types/engine_limits.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"
#include "weir/base/error.h"
#include "kernels/cpu/thread_pool.h"

namespace weir {

struct Engine::Impl {
    EngineOptions options;
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatTemplate> chat;
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
    if (const std::string bad = validateEngineOptions(options); !bad.empty()) throw Error(bad);
    m.file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(options.modelPath));
    m.model = loadModel(m.file);
    m.tokenizer = Tokenizer::fromGguf(*m.file);
    {
        // The model's own template, or a built-in one for its format.
        const Tokenizer& tok = *m.tokenizer;
        ChatModelInfo info;
        info.chatTemplate = m.file->getString("tokenizer.chat_template").value_or("");
        info.architecture = m.model->config().architecture;
        info.bosText = tok.bos() >= 0 ? tok.tokenText(tok.bos()) : "";
        info.eosText = tok.eos() >= 0 ? tok.tokenText(tok.eos()) : "";
        for (int32_t id = 0; id < tok.vocabSize(); ++id)
            if (tok.isControl(id)) info.specialTokens.push_back(tok.tokenText(id));
        m.chat = ChatTemplate::forModel(info);
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

namespace {
// The public Message as the template sees it: extra fields parsed from JSON.
std::vector<ChatMessage> templateMessages(const std::vector<Message>& messages) {
    std::vector<ChatMessage> out;
    out.reserve(messages.size());
    for (const Message& m : messages) {
        ChatMessage c{m.role, m.content, {}};
        if (!m.fieldsJson.empty()) c.fields = jinja::Value::parseJson(m.fieldsJson);
        out.push_back(std::move(c));
    }
    return out;
}
} // namespace

std::string Engine::renderChat(const std::vector<Message>& messages, bool addGenerationPrompt) const {
    return impl_->chat->render(templateMessages(messages), addGenerationPrompt);
}

std::vector<int32_t> Engine::tokenizeChat(const std::vector<Message>& messages) const {
    return tokenizePrompt(renderChat(messages, true));
}

int32_t Engine::vocabSize() const { return impl_->tokenizer->vocabSize(); }

std::string Engine::detokenize(const std::vector<int32_t>& ids) const { return impl_->tokenizer->decode(ids); }

std::string Engine::chatTemplateDescription() const { return impl_->chat->description(); }

bool Engine::hasOwnChatTemplate() const { return !impl_->chat->isBuiltin(); }

std::vector<int32_t> Engine::tokenizePrompt(const std::string& text) const {
    const Tokenizer& tok = *impl_->tokenizer;
    // The template writes BOS as text; the tokenizer adds one only when the
    // text lacks it, and a doubled BOS is collapsed: exactly one.
    const bool addBos = impl_->chat->addBosWhenTokenizing(text, tok.addBosDefault());
    std::vector<int32_t> ids = tok.encode(text, addBos, true);
    const int32_t bos = tok.bos();
    size_t extra = 0;
    while (bos >= 0 && extra + 1 < ids.size() && ids[extra] == bos && ids[extra + 1] == bos) ++extra;
    ids.erase(ids.begin(), ids.begin() + std::ptrdiff_t(extra));
    return ids;
}

const ChatTemplate& Engine::chatTemplate() const { return *impl_->chat; }

std::vector<int32_t> Engine::tokenize(const std::string& text, bool addBos) const {
    return impl_->tokenizer->encode(text, addBos, false);
}

uint64_t Engine::submit(GenerateRequest request, EventSink sink) {
    return impl_->scheduler->submit(std::move(request), std::move(sink));
}

void Engine::cancel(uint64_t id) { impl_->scheduler->cancel(id); }

CacheStatus Engine::cacheStatus() const { return impl_->scheduler->status(); }

std::string Engine::clearPrefixCache() { return impl_->scheduler->clearPrefixCache(); }

std::string Engine::resizePool(PoolKind pool, int64_t tokens) { return impl_->scheduler->resizePool(pool, tokens); }

} // namespace weir
