#pragma once
// EngineHost gives the GUI an engine it never has to wait for. The backend
// (the model, both KV pools, the scheduler) is created, used and destroyed on
// the engine host thread; the GUI talks to it only through queued calls, and
// events come back as queued signals keyed by a ticket (one per request).
// Tokens are coalesced: however fast the engine emits, the GUI thread gets at
// most one wake-up per batch of events.
#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QObject>
#include <QThread>
#include <QTimer>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/common/call_inbox.h"
#include "engine_host/ContextFit.h"
#include "engine_host/EndpointConfig.h"
#include "engine_host/EngineBackend.h"
#include "engine_host/EngineInboxes.h"

namespace weir::desktop {

class EngineWorker;

class EngineHost : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("EngineHost is created by the app")
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(bool ready READ ready NOTIFY stateChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY stateChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY stateChanged)
    Q_PROPERTY(QVariantMap modelInfo READ modelInfo NOTIFY stateChanged)
    Q_PROPERTY(double loadingSeconds READ loadingSeconds NOTIFY loadingSecondsChanged)
    Q_PROPERTY(qint64 loadingFileSize READ loadingFileSize NOTIFY stateChanged)
    Q_PROPERTY(int activeRequests READ activeRequests NOTIFY activeRequestsChanged)

public:
    enum State { NoModel, Loading, Ready, Failed };
    Q_ENUM(State)

    explicit EngineHost(EngineFactory factory, QObject* parent = nullptr);
    ~EngineHost() override;

    State state() const { return state_; }
    bool ready() const { return state_ == Ready; }
    QString errorString() const { return errorString_; }
    QString modelPath() const { return modelPath_; }
    QVariantMap modelInfo() const { return modelInfo_; }
    double loadingSeconds() const;
    qint64 loadingFileSize() const { return loadingFileSize_; }
    int activeRequests() const { return int(active_.size()); }

    // Options used by the next load(); modelPath is taken from load().
    void setEngineOptions(const EngineOptions& options) { options_ = options; }
    const EngineOptions& engineOptions() const { return options_; }

    // Loads (or replaces) the model in the background; state goes Loading,
    // then Ready or Failed. Requests still running are ended with an error.
    // With a file check set and a model in use, the new file is checked first
    // (in the background): a file that fails it leaves the working model and
    // its replies alone and is reported through loadRefused.
    Q_INVOKABLE void load(const QString& path);
    // Throws (weir::Error) when a model file cannot be loaded; cheap, reads
    // only the metadata. The app sets weir::checkModelFile; tests a fake.
    using FileCheck = std::function<void(const std::string& path)>;
    void setFileCheck(FileCheck check) { fileCheck_ = std::move(check); }
    // Stops waiting for a load: the GUI is free at once; the backend being
    // built is thrown away when it finishes.
    Q_INVOKABLE void cancelLoad();
    Q_INVOKABLE void unload();

    // Renders and tokenizes `messages`, then submits them on the engine host
    // thread. Returns a ticket (never 0) that names this request in signals.
    // `tag` comes back in the status snapshot's rows (see ClientTags.h).
    // `plan` says how the prompt is built: a reply to continue, and what to do
    // when the conversation does not fit in the context (promptPrepared says
    // which turns were sent; a conversation that cannot fit ends in failed).
    quint64 submit(ClientTag tag, std::vector<Message> messages, GenerateRequest request, PromptPlan plan = {});
    // The same for a chat with tools (ChatPromptInput, as the endpoint takes
    // it): the template's stop strings are added to the request's, and when
    // the reply is to be read for calls in the model's format, the reader
    // goes into `handoff` before the request runs. The messages are fitted
    // to the context by `plan` as submit() does (a turn is a JSON message;
    // a kept history starts at a user message, so calls keep their results).
    quint64 submitChat(ClientTag tag, ChatPromptInput chat, GenerateRequest request, PromptPlan plan,
                       std::shared_ptr<ToolCallHandoff> handoff);
    void cancel(quint64 ticket);
    bool isActive(quint64 ticket) const { return active_.contains(ticket); }

    // Frees the pages of cached prefixes no request uses (in the background).
    Q_INVOKABLE void clearPrefixCache();

    // How often the engine status is sampled (default 250 ms).
    void setStatusInterval(int ms);

    // The OpenAI-compatible endpoint, owned on the engine host thread and
    // serving the loaded model from a thread of its own (so a client never
    // holds up the app's calls); endpointStateChanged reports what it is doing.
    void setEndpoint(const EndpointConfig& config);
    const EndpointState& endpointState() const { return endpointState_; }

signals:
    void stateChanged();
    void loadingSecondsChanged();
    void activeRequestsChanged();
    void tokens(quint64 ticket, const QString& text, int count);
    void finished(quint64 ticket, const weir::Usage& usage, weir::FinishReason reason);
    // Failed and cancelled replies carry usage too (prompt tokens, tokens so far).
    void failed(quint64 ticket, const QString& message, const weir::Usage& usage);
    void cancelled(quint64 ticket, const weir::Usage& usage);
    void statusUpdated(const weir::CacheStatus& status);
    // The prompt of `ticket` was built: the turns from `firstTurn` on (after
    // the plan's system turns) were sent, `promptTokens` long, in a context of
    // `contextTokens` (0: no limit). Comes before the request's other events.
    void promptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens);
    void endpointStateChanged();
    // load() refused a file that failed the file check; the model in use stays.
    void loadRefused(const QString& path, const QString& message);

private:
    friend class EngineWorker;
    // Runs `call` on the engine host thread, in order.
    void toWorker(std::function<void()> call);
    void drainEvents();
    void onLoaded(quint64 generation, const QVariantMap& info);
    void onLoadFailed(quint64 generation, const QString& message);
    void onFileChecked(quint64 serial, const QString& path, const QString& error);
    void startLoad(const QString& path);
    void onSubmitFailed(quint64 ticket, const QString& message);
    void onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens);
    void onStatus(quint64 generation, const CacheStatus& status);
    void onEndpointState(const EndpointState& state);
    void failAllActive(const QString& message);
    void setState(State s, const QString& error = {});

    // What the engine host thread sends here: calls, the engine's events (in
    // batches) and status snapshots (the latest), each run or taken on this
    // thread; closed when this object goes.
    std::shared_ptr<common::CallInbox> calls_;
    std::shared_ptr<EngineEvents> events_;
    std::shared_ptr<StatusSnapshots> status_;
    QThread thread_;
    EngineWorker* worker_ = nullptr;        // lives on thread_
    std::shared_ptr<std::atomic<quint64>> generation_;
    EngineOptions options_;
    State state_ = NoModel;
    QString errorString_, modelPath_;
    QVariantMap modelInfo_;
    qint64 loadingFileSize_ = 0;
    QElapsedTimer loadClock_;
    QTimer loadTicker_;
    quint64 nextTicket_ = 0;
    QSet<quint64> active_;                  // tickets not yet ended
    EndpointState endpointState_;
    FileCheck fileCheck_;
    quint64 checkSerial_ = 0;               // the file check whose answer counts
};

} // namespace weir::desktop
