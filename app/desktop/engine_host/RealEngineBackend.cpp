// The shipped backend: a thin forwarder to weir::Engine. Kept in its own file
// so unit tests that use a fake never pull in the engine's symbols.
#include "engine_host/EngineBackend.h"

namespace weir::desktop {
namespace {

class RealEngineBackend final : public EngineBackend {
public:
    explicit RealEngineBackend(const EngineOptions& options) : engine_(options) {}

    const ModelConfig& modelConfig() const override { return engine_.modelConfig(); }
    const EngineOptions& options() const override { return engine_.options(); }
    std::vector<int32_t> tokenizeChat(const std::vector<Message>& messages) const override {
        return engine_.tokenizeChat(messages);
    }
    std::vector<int32_t> tokenizeChatContinuation(const std::vector<Message>& messages) const override {
        return engine_.tokenizeChatContinuation(messages);
    }
    PreparedChat prepareChat(const ChatPromptInput& input) const override { return engine_.prepareChat(input); }
    std::unique_ptr<ToolCallReader> toolCallReader(std::vector<std::string> names) const override {
        return engine_.toolCallReader(std::move(names));
    }
    uint64_t submit(GenerateRequest request, EventSink sink) override {
        return engine_.submit(std::move(request), std::move(sink));
    }
    void cancel(uint64_t id) override { engine_.cancel(id); }
    CacheStatus cacheStatus() const override { return engine_.cacheStatus(); }
    void clearPrefixCache() override { engine_.clearPrefixCache(); }
    Engine* engine() override { return &engine_; }
    std::string chatTemplateDescription() const override { return engine_.chatTemplateDescription(); }
    bool hasOwnChatTemplate() const override { return engine_.hasOwnChatTemplate(); }

private:
    Engine engine_;
};

} // namespace

EngineFactory realEngineFactory() {
    return [](const EngineOptions& options) -> std::unique_ptr<EngineBackend> {
        return std::make_unique<RealEngineBackend>(options);
    };
}

} // namespace weir::desktop
