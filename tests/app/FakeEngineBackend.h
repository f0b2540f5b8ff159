#pragma once
// A deterministic stand-in for weir::Engine, for tests of the app's C++ and
// QML (the way Tokodon's tests replay a mock network). It behaves like the
// engine from the outside: a scheduler thread admits up to maxRunningRequests,
// queues the rest, streams one word per token, ends each request with exactly
// one terminal event, and reports pool usage through cacheStatus().
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_host/ClientTags.h"
#include "engine_host/EngineBackend.h"

namespace weir::desktop::testing {

struct FakeEngineConfig {
    int tokenIntervalMs = 2;     // time between decode steps
    int loadDelayMs = 0;         // how long "loading the model" takes
    std::string failLoad;        // non-empty: the constructor throws weir::Error with this
    bool endless = false;        // replies never finish on their own (kill -9 test)
    // Requests with this tag kind (and id, unless 0) end with an Error event.
    uint32_t refuseTagKind = 0;
    uint64_t refuseTagId = 0;
    // When set, every submitted request and the chat it was rendered from are
    // recorded here (tests check what the app asked for).
    struct Record {
        std::mutex mutex;
        std::vector<GenerateRequest> requests;
        std::vector<std::vector<Message>> chats;
        std::vector<bool> continuations;  // per chat: rendered to continue its last message
        std::vector<ChatPromptInput> toolChats;  // what prepareChat() was given
        std::vector<Usage> usages;  // what each Done or Cancelled event reported, in the order they ended
    };
    std::shared_ptr<Record> record;
    // Replies to write instead of the default one, first to last, one per
    // request, while any are left (an agent test scripts a call, then an answer).
    struct Script {
        std::mutex mutex;
        std::deque<std::string> replies;
    };
    std::shared_ptr<Script> script;
};

// The reply the fake writes for a prompt whose last user message is `lastUser`.
std::string fakeReplyFor(const std::string& lastUser);
// How the fake names a request's tag in its replies: "KIND:ID".
std::string tagText(const ClientTag& tag);
// The fake's stand-in for prompt-lookup speculation, over the first `count`
// words of a reply: wherever the last word written occurred earlier, the up
// to 4 words that followed it there are a draft, kept up to the first that
// differs from what the reply writes next. Fills the draft counts of `usage`
// (what every terminal event reports, as the real scheduler's do).
void addFakeDrafts(const std::vector<std::string>& words, size_t count, Usage* usage);

class FakeEngineBackend final : public EngineBackend {
public:
    FakeEngineBackend(const EngineOptions& options, FakeEngineConfig config);
    ~FakeEngineBackend() override;

    const ModelConfig& modelConfig() const override { return config_; }
    const EngineOptions& options() const override { return options_; }
    std::vector<int32_t> tokenizeChat(const std::vector<Message>& messages) const override;
    std::vector<int32_t> tokenizeChatContinuation(const std::vector<Message>& messages) const override;
    // One token per word of the messages' JSON; tools active when there are
    // tools (no reader: the fake's calls are forced, constrained JSON).
    PreparedChat prepareChat(const ChatPromptInput& input) const override;
    uint64_t submit(GenerateRequest request, EventSink sink) override;
    void cancel(uint64_t id) override;
    CacheStatus cacheStatus() const override;
    void clearPrefixCache() override;

    static EngineFactory factory(FakeEngineConfig config = {});

private:
    struct Request {
        uint64_t id;
        GenerateRequest request;
        EventSink sink;
        std::vector<std::string> words;
        size_t next = 0;
        bool cancelled = false;
        bool admitted = false;
    };
    void run();
    void recordUsage(const Usage& usage);

    EngineOptions options_;
    FakeEngineConfig fake_;
    ModelConfig config_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Request> requests_;  // running first, then waiting, in order
    uint64_t nextId_ = 1;
    uint64_t deferrals_ = 0, prefixHits_ = 0;
    bool cacheCleared_ = false;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace weir::desktop::testing
