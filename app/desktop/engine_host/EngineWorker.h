#pragma once
// The half of EngineHost that lives on the engine host thread: it owns the
// backend and is the only code that calls into it (besides cacheStatus).
#include <QHash>
#include <QObject>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>

#include "engine_host/EndpointConfig.h"
#include "app/server/thread_inbox.h"
#include "engine_host/ContextFit.h"
#include "engine_host/EngineBackend.h"
#include "engine_host/ToolCallHandoff.h"

namespace weir::desktop {

class EngineHost;
struct EventRelay;
class StatusSlot;

class EngineWorker : public QObject {
    Q_OBJECT
public:
    EngineWorker(EngineFactory factory, EngineHost* host, std::shared_ptr<EventRelay> relay,
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

    // Where the host posts its calls (lives on the engine host thread with us).
    server::ThreadInbox* inbox() const { return inbox_; }

private:
    // Runs `call` on the host's thread, through its ThreadInbox.
    void postToHost(std::function<void()> call);
    void failSubmit(quint64 ticket, const QString& message);
    // The model's context: its trained length, or the options' max context when smaller.
    size_t contextTokens() const;
    // A prompt that fits: the reply capped at the context's edge, the host told
    // which turn the prompt starts at, then submitted.
    void sendFitted(quint64 ticket, ClientTag tag, GenerateRequest request, int firstTurn, size_t context);
    void submitPrepared(quint64 ticket, GenerateRequest request);
    void pollStatus();
    void startEndpoint();
    void stopEndpoint(bool report = true);
    void reportEndpoint();
    QVariantMap describe(const EngineOptions& options) const;

    EngineFactory factory_;
    server::ThreadInbox* inbox_;             // a child: moves to the engine host thread with us
    EngineHost* host_;                       // lives on the GUI thread: only post to it
    std::shared_ptr<EventRelay> relay_;
    std::shared_ptr<std::atomic<quint64>> generation_;
    std::unique_ptr<EngineBackend> backend_;
    quint64 backendGeneration_ = 0;
    QHash<quint64, uint64_t> requests_;      // ticket -> engine request id
    QTimer statusTimer_;
    EndpointConfig endpoint_;
    EndpointState endpointState_;
    std::unique_ptr<QObject> server_;        // weir::server::ApiServer when built with it
    std::shared_ptr<StatusSlot> statusSlot_; // shared with the host
};

} // namespace weir::desktop
