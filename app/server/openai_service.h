#pragma once
// The endpoint's work, on the HTTP server's thread: routes each request,
// answers the cheap ones at once (/health, /v1/models, /v1/stats), sends
// completions to the worker pool for preparation (request_preparation.h) and
// then to the engine, and turns the engine's events, taken in batches, into
// JSON answers or server-sent events. ApiServer owns it and runs it on its
// own thread; everything here runs on that thread except the few const
// accessors marked as safe from any thread.
#include <QJsonObject>
#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "app/common/call_inbox.h"
#include "app/common/inbox.h"
#include "app/server/api_error.h"
#include "app/server/cors_policy.h"
#include "app/server/cross_site_guard.h"
#include "app/server/http_server.h"
#include "app/server/request_preparation.h"
#include "app/server/served_model.h"
#include "app/server/server_options.h"
#include "app/server/server_stats.h"

namespace weir::server {

struct Job;
struct Choice;

// What a POST to a generating path asks for.
enum class Endpoint { ChatCompletions, Completions, AnthropicMessages, AnthropicCountTokens, Responses, Embeddings };

class OpenAiService : public QObject {
    Q_OBJECT
public:
    OpenAiService(Engine& engine, ServerOptions options);
    ~OpenAiService() override;

    // On the service's thread.
    bool start(QString* error, QString* warning);
    void stop();
    // Runs `call` on the service's thread, after the calls posted before it.
    void post(std::function<void()> call) { calls_->put(std::move(call)); }

    // Safe from any thread.
    bool isListening() const { return listening_; }
    quint16 port() const { return port_; }
    int activeRequests() const { return activeJobs_; }
    QJsonObject statsJson() const;
    const ServedModel& model() const { return model_; }
    const ServerOptions& options() const { return opt_; }

signals:
    void sessionStarted(quint64 requestId, const QString& client, const QString& endpoint);
    void sessionFinished(quint64 requestId, const QString& client, const QString& outcome);

private:
    // Requests.
    void onRequest(HttpConnection* c, const HttpRequest& request);
    void preflight(HttpConnection* c, const HttpRequest& request);
    void route(HttpConnection* c, const HttpRequest& request);
    bool authorized(HttpConnection* c, const HttpRequest& request, ApiDialect dialect);
    void prepare(HttpConnection* c, const HttpRequest& request, Endpoint endpoint);
    void onPrepared(quint64 key, PreparedRequest prepared);
    void clearCache(HttpConnection* c);
    void onClientGone(HttpConnection* c);
    void fail(HttpConnection* c, const ApiError& e, ApiDialect dialect = ApiDialect::OpenAiChat);
    bool queueFull() const;
    ApiError queueFullError() const;
    ApiError shuttingDownError() const;
    HttpErrorBody formatHttpFailure(const HttpFailure& f);

    // Engine events.
    void submit(HttpConnection* c, quint64 key, PreparedRequest prepared);
    void cancelChoices(Job& j);
    void feedChoices(Job& j);
    void drainEvents();
    void onTokens(Job& j, Choice& ch, const std::string& text, int count, std::vector<TokenLogprobs> logprobs);
    void onTerminal(Job& j, Choice& ch, const Event& ev);
    void deliverText(Job& j, Choice& ch, const std::string& delta, bool final);
    void startStream(Job& j);
    void deliverToWriter(Job& j, Choice& ch, const std::string& text, std::vector<ToolCall> calls);
    void writeEvent(Job& j, const QJsonObject& o);
    QJsonObject textChunk(const Job& j, const Choice& ch, const std::string& text, const QString& finish,
                          const QJsonValue& logprobs) const;
    bool writable(const Job& j) const;
    void choiceDone(Job& j, Choice& ch, FinishReason reason);
    void choiceFailed(Job& j, const Event& ev);
    void choiceCancelled(Job& j, const Event& ev);
    void complete(Job& j);
    void endWithError(Job& j, const ApiError& e);
    void finishJob(Job& j, const QString& outcome, const Usage& usage);
    ApiError errorOf(const Event& ev) const;

    Engine& engine_;
    const ServerOptions opt_;
    const ServedModel model_;
    const CrossSiteGuard guard_;
    const CorsPolicy cors_;
    const QString fingerprint_;
    PreparationContext context_;
    QThreadPool pool_;
    HttpServer* http_ = nullptr;
    // The engine's events, (job key, event) from the engine thread: drained
    // in batches, one wake-up each; closed when the server stops.
    using EngineEvents = common::Inbox<std::pair<quint64, Event>>;
    // Calls from the preparation pool, and the preparations it finished.
    std::shared_ptr<common::CallInbox> calls_;
    using Preparations = common::Inbox<std::pair<quint64, PreparedRequest>>;
    std::shared_ptr<Preparations> prepared_;
    std::shared_ptr<EngineEvents> events_;
    std::map<quint64, std::unique_ptr<Job>> jobs_;          // in the engine
    std::map<quint64, QPointer<HttpConnection>> preparing_;  // on the worker pool
    std::unordered_map<HttpConnection*, quint64> keyOf_;     // a connection's request in either map
    quint64 nextKey_ = 1;
    mutable std::mutex statsMutex_;
    ServerStats stats_;
    std::atomic<bool> listening_{false};
    std::atomic<quint16> port_{0};
    std::atomic<int> activeJobs_{0};
    std::atomic<int> preparingCount_{0};
};

} // namespace weir::server
