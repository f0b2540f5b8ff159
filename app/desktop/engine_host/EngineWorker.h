#pragma once
// The half of EngineHost that lives on the engine host thread: it owns the
// backend and is the only code that calls into it (besides cacheStatus).
#include <QHash>
#include <QObject>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>

#include "app/common/call_inbox.h"
#include "engine_host/ContextFit.h"
#include "engine_host/EndpointConfig.h"
#include "engine_host/EngineBackend.h"
#include "engine_host/EngineInboxes.h"

namespace weir::desktop {

class EngineHost;

class EngineWorker : public QObject {
    Q_OBJECT
public:
    // `host` is only posted to, through `hostCalls`; the engine's events and
    // status snapshots go to the host through `events` and `status`.
    EngineWorker(EngineFactory factory, EngineHost* host, std::shared_ptr<common::CallInbox> hostCalls,
                 std::shared_ptr<EngineEvents> events, std::shared_ptr<StatusSnapshots> status,
                 std::shared_ptr<std::atomic<quint64>> generation);
    ~EngineWorker() override;

    // All of these run on the engine host thread (queued from EngineHost).
    void load(quint64 generation, const EngineOptions& options);
    void unload();
    void submit(quint64 ticket, ClientTag tag, std::vector<Message> messages, GenerateRequest request,
                PromptPlan plan);
    void submitChat(quint64 ticket, ClientTag tag, ChatPromptInput chat, GenerateRequest request,
                    PromptPlan plan, std::shared_ptr<ToolCallHandoff> handoff);
    void cancel(quint64 ticket);
    // The request of `ticket` ended (its terminal event reached the host):
    // drop its entry, so the table holds only live requests.
    void forget(quint64 ticket);
    void setStatusInterval(int ms);
    void clearPrefixCache();
    // Starts, restarts or stops the OpenAI-compatible endpoint. It serves the
    // loaded engine and follows it across reloads.
    void setEndpoint(const EndpointConfig& config);
    void shutdown();

    // Where the host posts its calls (they run on the engine host thread).
    const std::shared_ptr<common::CallInbox>& calls() const { return calls_; }

private:
    // Runs `call` on the host's thread, in order.
    void postToHost(std::function<void()> call);
    void failSubmit(quint64 ticket, const QString& message);
    // The model's context: its trained length, or the options' max context when smaller.
    size_t contextTokens() const;
    // The one path of submit and submitChat: fits `turns` to the context by
    // `plan`, has `render` make the prompt of the turns sent (it is called
    // while measuring; its last rendering is kept when it was of those turns),
    // lets `finish` put the rendering into the request, caps the reply at the
    // context's edge, tells the host which turn the prompt starts at, and
    // submits. Whatever fails, the ticket gets its one failed signal.
    void submitTurns(quint64 ticket, ClientTag tag, const std::vector<Message>& turns, const PromptPlan& plan,
                     GenerateRequest request, const std::function<size_t(const std::vector<Message>&)>& render,
                     const std::function<void(GenerateRequest&)>& finish);
    void submitPrepared(quint64 ticket, GenerateRequest request);
    void pollStatus();
    void startEndpoint();
    void stopEndpoint(bool report = true);
    void reportEndpoint();
    QVariantMap describe(const EngineOptions& options) const;

    EngineFactory factory_;
    std::shared_ptr<common::CallInbox> calls_;      // wakes a child of ours: follows us to the engine host thread
    EngineHost* host_;                              // lives on the GUI thread: only post to it
    std::shared_ptr<common::CallInbox> hostCalls_;  // runs on the GUI thread
    std::shared_ptr<EngineEvents> events_;
    std::shared_ptr<std::atomic<quint64>> generation_;
    std::unique_ptr<EngineBackend> backend_;
    quint64 backendGeneration_ = 0;
    QHash<quint64, uint64_t> requests_;      // ticket -> engine request id
    QTimer statusTimer_;
    EndpointConfig endpoint_;
    EndpointState endpointState_;
    std::unique_ptr<QObject> server_;        // weir::server::ApiServer when built with it
    std::shared_ptr<StatusSnapshots> status_;
};

} // namespace weir::desktop
