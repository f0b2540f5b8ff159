// weir::Engine: loads the model, tokenizer and chat template, sizes the KV
// pools (refusing a configuration below its floor), and runs the scheduler on
// its own thread.
#include "weir/engine.h"

#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "engine/api/engine_access.h"
#include "engine/chat/chat_request_prompt.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/tool_call_parser.h"
#include "engine/chat/tool_format.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "weir/types/memory_fit.h"
#include "engine/models/model.h"
#include "engine/models/model_assembly.h"
#include "engine/api/device_description.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/util/log.h"
#include "weir/base/error.h"
#include "weir/types/engine_limits.h"

namespace weir {

struct Engine::Impl {
    AssembledModel parts;  // backend, file, model: first, so it goes last
    std::string deviceId, deviceLabel;  // where the model and pools live (cacheStatus)
    EngineOptions options;
    std::shared_ptr<const gguf::GgufFile> file;
    Model* model = nullptr;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatTemplate> chat;
    std::optional<ToolFormat> tools;  // the template's tool convention
    kv::PoolPlan plan;
    std::unique_ptr<kv::HybridKvCache> cache;
    std::unique_ptr<Scheduler> scheduler;
    std::atomic<bool> stop{false};
    std::thread thread;
};

Engine::Engine(const EngineOptions& options) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.options = options;
    if (options.modelPath.empty()) throw Error("no model file given");
    if (const std::string bad = validateEngineOptions(options); !bad.empty()) throw Error(bad);
    const auto loadStart = std::chrono::steady_clock::now();
    m.parts = assembleModel(options.modelPath, backendRequestFor(options.device, options.threads, options.repackWeights));
    m.file = m.parts.file;
    m.model = m.parts.model.get();
    // Asked once, after the weights are in place: its free memory is what the pools can have.
    const DeviceInfo dev = m.model->backend().device();
    m.deviceId = deviceName(dev);
    m.deviceLabel = dev.name;
    m.tokenizer = Tokenizer::fromGguf(*m.file);
    // A token id past the embedding rows would read outside the weights.
    if (m.tokenizer->vocabSize() > m.model->config().nVocab)
        throw Error(options.modelPath + ": tokenizer.ggml.tokens has " + std::to_string(m.tokenizer->vocabSize()) +
                    " tokens but token_embd.weight has only " + std::to_string(m.model->config().nVocab) + " rows");
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
        m.tools = ToolFormat::detect(*m.chat, [&tok](std::string_view t) { return tok.find(t) >= 0; });
    }
    // Sizing: throws weir::Error with every term of the floor when the pools are too small.
    m.plan = kv::planPoolsOrThrow(options, m.model->config());
    {
        // The pools and the step's scratch must fit where they live: free
        // device memory after the weights on a GPU, available RAM on the CPU.
        const bool gpu = dev.kind != DeviceKind::Cpu;
        const int64_t rows = int64_t(options.prefillChunk) + int64_t(options.maxRunningRequests) * (1 + options.draftTokens);
        const uint64_t scratch = kv::forwardScratchBytes(m.model->config(), rows, int64_t(options.maxRunningRequests) * (1 + options.draftTokens), gpu);
        const uint64_t keepFree = gpu ? (256ull << 20) : (512ull << 20);
        const std::string where = gpu ? deviceName(dev) + " (" + dev.name + ")" : std::string("this machine's RAM");
        const kv::MemoryFit fit = kv::fitPoolsToMemory(m.plan, options.kvReserveTokens == 0, dev.freeBytes, scratch, keepFree, where);
        if (!fit.fits) throw Error(fit.message);
        if (fit.shrunk && logEnabled())
            logLine(LogLevel::Info, "kv", "full pool sized to the free memory of " + where + ": " + std::to_string(m.plan.fullTokens) + " tokens");
    }
    m.cache = assembleCache(kv::KvCacheConfig::fromPlan(m.plan, m.model->config()), *m.model);

    SchedulerOptions so;
    so.maxRunning = options.maxRunningRequests;
    so.prefillChunk = options.prefillChunk;
    so.retainGap = options.retainGap;
    so.maxContext = int32_t(m.plan.maxContext);
    so.maxWaiting = options.maxWaiting;
    so.checkEveryStep = options.checkIntegrityEveryStep;
    so.speculative = options.speculative;
    so.draftTokens = options.draftTokens;
    so.draftStepRows = options.draftStepRows;
    so.draftNgramMax = options.draftNgramMax;
    so.draftNgramMin = options.draftNgramMin;
    m.scheduler = std::make_unique<Scheduler>(*m.model, *m.cache, m.tokenizer.get(), so);
    m.thread = std::thread([&m] { m.scheduler->run(m.stop); });
    if (logEnabled()) {
        const ModelConfig& c = m.model->config();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - loadStart);
        logLine(LogLevel::Info, "model",
                "loaded " + options.modelPath + ": " + c.architecture + ", " + std::to_string(c.nLayer) + " layers, " +
                    std::to_string(c.parameterCount) + " parameters, " + c.quantization + ", in " +
                    std::to_string(ms.count()) + " ms");
        logLine(LogLevel::Info, "kv",
                "full pool " + std::to_string(m.plan.fullTokens) + " tokens (" + std::to_string(m.plan.fullBytes()) +
                    " bytes), window pool " + std::to_string(m.plan.windowTokens) + " tokens (" +
                    std::to_string(m.plan.windowBytes()) + " bytes), page " + std::to_string(m.plan.pageSize) +
                    ", " + kvDtypeName(m.plan.dtype) + ", " + std::to_string(options.maxRunningRequests) +
                    " running at most");
    }
}

Engine::~Engine() {
    if (!impl_) return;
    impl_->stop.store(true);
    if (impl_->scheduler) impl_->scheduler->wake();
    if (impl_->thread.joinable()) impl_->thread.join();
}

const ModelConfig& Engine::modelConfig() const { return impl_->model->config(); }
const EngineOptions& Engine::options() const { return impl_->options; }
ComputeDevice Engine::device() const { return toComputeDevice(impl_->model->backend().device()); }

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

namespace {
// The template writes BOS as text, or does not: add one when the tokenizer
// wants it and the ids do not start with it, and collapse a doubled one.
std::vector<int32_t> withOneBos(const Tokenizer& tok, std::vector<int32_t> ids) {
    const int32_t bos = tok.bos();
    if (bos < 0) return ids;
    if (tok.addBosDefault() && (ids.empty() || ids[0] != bos)) ids.insert(ids.begin(), bos);
    size_t extra = 0;
    while (extra + 1 < ids.size() && ids[extra] == bos && ids[extra + 1] == bos) ++extra;
    ids.erase(ids.begin(), ids.begin() + std::ptrdiff_t(extra));
    return ids;
}

// Special tokens parsed only in the prompt's trusted bytes, exactly one BOS.
std::vector<int32_t> tokenizeMarked(const Tokenizer& tok, const MarkedText& prompt) {
    return withOneBos(tok, tok.encodeMarked(prompt, false));
}
}  // namespace

std::vector<int32_t> Engine::tokenizeChat(const std::vector<Message>& messages) const {
    ChatRenderOptions options;
    options.addGenerationPrompt = true;
    return tokenizeMarked(*impl_->tokenizer, impl_->chat->renderMarked(templateMessages(messages), options));
}

std::vector<int32_t> Engine::tokenizeChatContinuation(const std::vector<Message>& messages) const {
    if (messages.empty() || messages.back().role != "assistant" || messages.back().content.empty())
        throw Error("nothing to continue: the conversation does not end with an assistant message that has text");
    ChatRenderOptions options;
    options.addGenerationPrompt = false;
    MarkedText marked = impl_->chat->renderMarked(templateMessages(messages), options);
    // The reply's text is the last untrusted range; what follows it is the
    // template's end of turn. Templates may trim the text, so compare the
    // trimmed end.
    const auto& ranges = marked.untrusted.ranges();
    std::string_view reply = messages.back().content;
    while (!reply.empty() && std::isspace(static_cast<unsigned char>(reply.back()))) reply.remove_suffix(1);
    const size_t end = ranges.empty() ? 0 : ranges.back().end;
    std::string_view head(marked.text.data(), end);
    while (!head.empty() && std::isspace(static_cast<unsigned char>(head.back()))) head.remove_suffix(1);
    if (reply.empty() || !head.ends_with(reply))
        throw Error("cannot continue this reply: the chat template (" + impl_->chat->description() +
                    ") does not end the prompt with the reply's text");
    marked.text.resize(end);
    return tokenizeMarked(*impl_->tokenizer, marked);
}

PreparedChat Engine::prepareChat(const ChatPromptInput& input) const {
    const jinja::Value messages = jinja::Value::parseJson(input.messagesJson);
    const jinja::Value tools = input.toolsJson.empty() ? jinja::Value() : jinja::Value::parseJson(input.toolsJson);
    ChatRequestPrompt rendered = renderChatRequest(*impl_->chat, *impl_->tools, messages, tools, input.toolChoice,
                                                    input.openForcedCall);
    PreparedChat out;
    out.prompt = tokenizeMarked(*impl_->tokenizer, rendered.prompt);
    out.stop = std::move(rendered.stop);
    out.toolsActive = rendered.toolsActive;
    out.showSpecialTokens = rendered.showSpecialTokens;
    out.toolNames = std::move(rendered.toolNames);
    out.forcedPrefix = std::move(rendered.forcedPrefix);
    out.callTriggers = std::move(rendered.callMarkers.open);
    out.callClose = std::move(rendered.callMarkers.close);
    return out;
}

std::unique_ptr<ToolCallReader> Engine::toolCallReader(std::vector<std::string> toolNames) const {
    return std::make_unique<ToolCallReader>(impl_->tools->makeParser(std::move(toolNames)));
}

const Tokenizer& EngineAccess::tokenizer(const Engine& e) { return *e.impl_->tokenizer; }
const ChatTemplate& EngineAccess::chatTemplate(const Engine& e) { return *e.impl_->chat; }
const ToolFormat& EngineAccess::toolFormat(const Engine& e) { return *e.impl_->tools; }
std::vector<int32_t> EngineAccess::tokenizeMarked(const Engine& e, const MarkedText& prompt) {
    return weir::tokenizeMarked(*e.impl_->tokenizer, prompt);
}

int32_t Engine::vocabSize() const { return impl_->tokenizer->vocabSize(); }

std::string Engine::detokenize(const std::vector<int32_t>& ids) const { return impl_->tokenizer->decode(ids); }

std::string Engine::chatTemplateDescription() const { return impl_->chat->description(); }

bool Engine::hasOwnChatTemplate() const { return !impl_->chat->isBuiltin(); }

std::vector<int32_t> Engine::tokenizePrompt(const std::string& text) const {
    const Tokenizer& tok = *impl_->tokenizer;
    return withOneBos(tok, tok.encode(text, false, true));
}

std::vector<int32_t> Engine::tokenize(const std::string& text, bool addBos) const {
    return impl_->tokenizer->encode(text, addBos, false);
}

uint64_t Engine::submit(GenerateRequest request, EventSink sink) {
    return impl_->scheduler->submit(std::move(request), std::move(sink));
}

void Engine::cancel(uint64_t id) { impl_->scheduler->cancel(id); }

CacheStatus Engine::cacheStatus() const {
    CacheStatus s = impl_->scheduler->status();
    s.device = impl_->deviceId;
    s.deviceName = impl_->deviceLabel;
    return s;
}

MaintenanceResult Engine::clearPrefixCache() {
    MaintenanceResult result = impl_->scheduler->clearPrefixCache();
    if (result.ok()) logLine(LogLevel::Info, "kv", "prefix cache cleared");
    else logLine(LogLevel::Warning, "kv", "prefix cache not cleared: " + result.message);
    return result;
}

MaintenanceResult Engine::resizePool(PoolKind pool, int64_t tokens) {
    MaintenanceResult result = impl_->scheduler->resizePool(pool, tokens);
    const std::string what = std::string(pool == PoolKind::Window ? "window" : "full") + " pool resize to " +
                             std::to_string(tokens) + " tokens";
    if (result.ok()) logLine(LogLevel::Info, "kv", what + ": done");
    else logLine(LogLevel::Warning, "kv", what + ": " + result.message);
    return result;
}

} // namespace weir
