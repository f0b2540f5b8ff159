#include "app/server/openai_service.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QRandomGenerator>
#include <QUrl>
#include <exception>
#include <optional>

#include "app/server/anthropic_answer.h"
#include "app/common/client_tag_kinds.h"
#include "app/server/embeddings_request.h"
#include "app/common/forced_tool_call.h"
#include "app/server/maintenance_answer.h"
#include "app/server/request_parser.h"
#include "app/server/response_json.h"
#include "app/server/responses_answer.h"

namespace weir::server {

namespace {

// How long stop() waits for the last answers to reach their clients.
constexpr int kShutdownFlushMs = 2000;

// Embedding inputs in the engine at once, per request: a batch of many never
// fills the wait queue, and still keeps the engine's running slots busy.
constexpr int kEmbeddingsInFlight = 8;

QString randomId(int n) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    QString s;
    s.reserve(n);
    for (int i = 0; i < n; ++i) s += QLatin1Char(alphabet[QRandomGenerator::global()->bounded(62)]);
    return s;
}

bool sameSecret(const QByteArray& a, const QByteArray& b) {
    // Constant time in the length of the given key.
    unsigned diff = unsigned(a.size() ^ b.size());
    for (qsizetype i = 0; i < a.size(); ++i) diff |= unsigned(uchar(a[i]) ^ uchar(i < b.size() ? b[i] : 0));
    return diff == 0;
}

QByteArray json(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

const QByteArray kJsonType = QByteArrayLiteral("application/json");

void respondJson(HttpConnection* c, int status, const QJsonObject& body, HttpHeaders extra = {}) {
    extra.emplace_back(QByteArrayLiteral("Content-Type"), kJsonType);
    c->respond(status, std::move(extra), json(body));
}

void respondError(HttpConnection* c, const ApiError& e, ApiDialect dialect = ApiDialect::OpenAiChat) {
    HttpHeaders extra;
    if (e.retryAfterSeconds > 0) extra.emplace_back(QByteArrayLiteral("Retry-After"), QByteArray::number(e.retryAfterSeconds));
    if (e.status == 401) extra.emplace_back(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
    respondJson(c, e.status, errorJsonFor(dialect, e), std::move(extra));
}

int64_t contextLimitOf(const Engine& e) {
    const ModelConfig& c = e.modelConfig();
    int64_t limit = c.nCtxTrain > 0 ? c.nCtxTrain : 4096;
    if (e.options().maxContext > 0) limit = std::min<int64_t>(limit, e.options().maxContext);
    const int64_t full = e.cacheStatus().full.capacityTokens;
    if (full > 0) limit = std::min(limit, full);
    return limit;
}

} // namespace

// One choice of a request: its own sequence in the engine.
struct Choice {
    int index = 0;
    int prompt = 0;
    uint64_t requestId = 0;
    bool ended = false;           // its terminal event came
    bool callsComplete = false;   // the reply's calls are all read: generation was stopped
    std::unique_ptr<ToolCallReader> reader;
    bool forcedCall = false;      // the reply is a call as JSON, read at its end (forced_tool_call.h)
    std::string heldCall;         // forcedCall: the reply so far
    FinishReason reason = FinishReason::Stop;  // the engine's, for the answer writers
    int stopIndex = -1;           // which stop string ended it (Event::stopIndex)
    std::string echo;             // completions with echo: the prompt, before the reply
    std::optional<GenerateRequest> unsent;  // not yet in the engine (embeddings go in a few at a time)
    std::vector<float> embedding; // embeddings: the input's vector
    std::string text;             // non-streaming: everything so far
    std::vector<ToolCall> calls;  // non-streaming: every call so far
    int callCount = 0;
    std::vector<TokenLogprobs> logprobs;  // non-streaming: all of them; streaming: not yet sent
    qint64 textOffset = 0;        // completions' text_offset of the next token
    QString finish;
    Usage usage;
};

// One request in the engine: its connection, what was asked, its choices.
struct Job {
    quint64 key = 0;
    QString client, endpoint;
    bool chat = true, stream = false, includeUsage = false, logprobs = false, parallelToolCalls = true;
    bool embeddings = false, base64 = false;
    AnswerHeader header;
    ApiDialect dialect = ApiDialect::OpenAiChat;
    std::unique_ptr<AnswerWriter> writer;  // Anthropic, Responses: their shape; null: chat completions'
    std::vector<std::string> clientStops;  // a stop at one of these is the client's stop sequence
    QPointer<HttpConnection> conn;
    bool headersSent = false;
    bool clientGone = false;
    bool failed = false;          // a choice failed: the answer was an error
    int failStatus = 0;
    std::vector<Choice> choices;
    int open = 0;                 // choices still in the engine
    ServerStats::Clock::time_point start = ServerStats::Clock::now();
};

namespace {

// Engine events name the choice: the request's key and the choice's index.
constexpr int kChoiceBits = 12;
static_assert(kMaxPrompts * kMaxChoicesPerPrompt <= (1 << kChoiceBits), "choices must fit the event key");
static_assert(kMaxEmbeddingInputs <= (1 << kChoiceBits), "embedding inputs must fit the event key");
quint64 eventKey(quint64 key, int index) { return (key << kChoiceBits) | quint64(index); }
quint64 jobOf(quint64 eventKey) { return eventKey >> kChoiceBits; }
int choiceOf(quint64 eventKey) { return int(eventKey & ((1u << kChoiceBits) - 1)); }

// The same for every answer of this server while it serves this model: what
// the model and the KV cache's number format are.
QString fingerprintOf(const QString& modelId, const Engine& e) {
    const QByteArray what = modelId.toUtf8() + '|' + kvDtypeName(e.options().kvDtype);
    return QStringLiteral("fp_") +
           QString::fromLatin1(QCryptographicHash::hash(what, QCryptographicHash::Sha256).toHex().left(10));
}

} // namespace

OpenAiService::OpenAiService(Engine& engine, ServerOptions options)
    : engine_(engine), opt_(std::move(options)),
      model_{opt_.modelId.isEmpty() ? ServedModel::idForFile(QString::fromStdString(engine.options().modelPath))
                                    : opt_.modelId,
             contextLimitOf(engine)},
      guard_(opt_.host, opt_.allowedHosts, !opt_.apiKey.isEmpty()), cors_(opt_.corsOrigins),
      fingerprint_(fingerprintOf(model_.id, engine)), pool_(this) {
    // Their wake-up targets are children: they move to the service's thread with it.
    calls_ = common::makeCallInbox(this);
    prepared_ = Preparations::create(common::Keep::Every, this, [this](Preparations& done) {
        for (auto& [key, request] : done.takeAll()) onPrepared(key, std::move(request));
    });
    context_.engine = &engine_;
    context_.model = model_;
    context_.contextLimit = model_.contextLength;
    context_.defaultMaxTokens = opt_.defaultMaxTokens;
    pool_.setMaxThreadCount(std::max(1, opt_.prepareThreads));
}

OpenAiService::~OpenAiService() {
    stop();
    pool_.waitForDone();
}

// ---------------------------------------------------------------- lifecycle

bool OpenAiService::start(QString* error, QString* warning) {
    if (http_) return true;
    QHostAddress address;
    const QString host = opt_.host.trimmed();
    if (host.isEmpty() || host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        address = QHostAddress(QHostAddress::LocalHost);
    else if (!address.setAddress(host)) {
        if (error) *error = QStringLiteral("'%1' is not an IP address to listen on").arg(host);
        return false;
    }
    auto* http = new HttpServer(opt_.http, [this](const HttpFailure& f) { return formatHttpFailure(f); }, this);
    QString why;
    if (!http->listen(address, opt_.port, &why)) {
        if (error) *error = QStringLiteral("cannot listen on %1:%2: %3").arg(host).arg(opt_.port).arg(why);
        delete http;
        return false;
    }
    connect(http, &HttpServer::requestReceived, this, &OpenAiService::onRequest);
    connect(http, &HttpServer::clientGone, this, &OpenAiService::onClientGone);
    http_ = http;
    events_ = EngineEvents::create(common::Keep::Every, this, [this](EngineEvents&) { drainEvents(); });
    port_ = http->port();
    listening_ = true;
    if (warning) {
        warning->clear();
        QHostAddress a;
        const bool loopback = host.isEmpty() || host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0 ||
                              (a.setAddress(host) && a.isLoopback());
        if (!loopback)
            *warning = QStringLiteral("Listening on %1:%2: other machines on the network can reach this endpoint%3.")
                           .arg(host)
                           .arg(port_.load())
                           .arg(opt_.apiKey.isEmpty() ? QStringLiteral(", and no API key is set")
                                                      : QStringLiteral(" (an API key is required)"));
    }
    return true;
}

void OpenAiService::stop() {
    if (!http_) return;
    http_->stopListening();
    listening_ = false;
    // Requests still being prepared never reach the engine.
    for (auto& [key, conn] : preparing_) {
        keyOf_.erase(conn.data());
        if (conn && conn->owesAnswer()) fail(conn, shuttingDownError());
    }
    preparing_.clear();
    preparingCount_ = 0;
    // Requests in the engine end now; their clients hear why.
    std::vector<quint64> keys;
    for (const auto& [k, j] : jobs_) keys.push_back(k);
    for (quint64 k : keys) {
        auto it = jobs_.find(k);
        if (it == jobs_.end()) continue;
        Job& j = *it->second;
        cancelChoices(j);
        if (writable(j) && !j.failed) endWithError(j, shuttingDownError());
        finishJob(j, QStringLiteral("cancelled"), Usage{});
    }
    // The engine's late events for them have nobody to go to.
    if (events_) events_->close();
    events_.reset();
    // Every answer goes out before its connection closes.
    const QDeadlineTimer deadline(kShutdownFlushMs);
    for (HttpConnection* c : http_->connections()) c->flushAndClose(deadline);
    // Preparation still running reads the engine: it must end first.
    pool_.waitForDone();
    delete http_;
    http_ = nullptr;
    port_ = 0;
}

QJsonObject OpenAiService::statsJson() const {
    const CacheStatus cache = engine_.cacheStatus();
    QJsonObject o;
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        o = stats_.toJson(cache, activeJobs_);
    }
    // Requests being parsed, rendered and tokenized, not yet in the engine.
    QJsonObject requests = o.value(QStringLiteral("requests")).toObject();
    requests.insert(QStringLiteral("preparing"), preparingCount_.load());
    o.insert(QStringLiteral("requests"), requests);
    return o;
}

// ---------------------------------------------------------------- routing

HttpErrorBody OpenAiService::formatHttpFailure(const HttpFailure& f) {
    ApiError e;
    e.status = f.status;
    e.type = f.status >= 500 ? QStringLiteral("server_error") : QStringLiteral("invalid_request_error");
    e.code = f.code;
    e.message = f.message;
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.rejected(f.status);
    }
    return {kJsonType, e.body()};
}

void OpenAiService::fail(HttpConnection* c, const ApiError& e, ApiDialect dialect) {
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.rejected(e.status);
    }
    respondError(c, e, dialect);
}

void OpenAiService::onRequest(HttpConnection* c, const HttpRequest& request) {
    try {
        route(c, request);
    } catch (const std::exception& e) {
        ApiError err;
        err.status = 500;
        err.type = QStringLiteral("server_error");
        err.message = QStringLiteral("Internal error: %1").arg(QString::fromUtf8(e.what()));
        if (c->owesAnswer()) fail(c, err);
    }
}

void OpenAiService::route(HttpConnection* c, const HttpRequest& req) {
    QString path = req.path;
    // Clients configured with the server's root as their base URL leave out /v1.
    if (path == QLatin1String("/chat/completions") || path == QLatin1String("/completions") ||
        path == QLatin1String("/models") || path.startsWith(QLatin1String("/models/")) ||
        path == QLatin1String("/messages") || path == QLatin1String("/messages/count_tokens") ||
        path == QLatin1String("/responses") || path == QLatin1String("/embeddings"))
        path.prepend(QLatin1String("/v1"));
    // Anthropic's clients read errors in Anthropic's shape.
    const ApiDialect dialect =
        path.startsWith(QLatin1String("/v1/messages")) ? ApiDialect::Anthropic : ApiDialect::OpenAiChat;
    const QByteArray& method = req.method;
    const bool get = method == "GET" || method == "HEAD";
    auto wrongMethod = [&](const char* allowed) {
        ApiError e;
        e.status = 405;
        e.code = QStringLiteral("method_not_allowed");
        e.message = QStringLiteral("%1 %2 is not supported; use %3.")
                        .arg(QString::fromLatin1(method.left(20)), path.left(200), QLatin1String(allowed));
        fail(c, e, dialect);
    };

    // An allowed page's answers say so, whatever the answer is.
    c->setAnswerHeaders(cors_.answerHeaders(req.header("origin")));
    if (auto refused = guard_.check(req)) return fail(c, *refused, dialect);
    // A browser's preflight never carries the key: answered before authentication.
    if (method == "OPTIONS") return preflight(c, req);
    if (path == QLatin1String("/health") || path == QLatin1String("/v1/health")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, {{QStringLiteral("status"), QStringLiteral("ok")}, {QStringLiteral("model"), model_.id}});
    }
    if (!authorized(c, req, dialect)) return;
    if (path == QLatin1String("/v1/models")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, {{QStringLiteral("object"), QStringLiteral("list")},
                                    {QStringLiteral("data"), QJsonArray{model_.json()}}});
    }
    if (path.startsWith(QLatin1String("/v1/models/"))) {
        if (!get) return wrongMethod("GET");
        const QString id = QUrl::fromPercentEncoding(path.mid(11).toUtf8());
        if (!model_.matches(id)) return fail(c, model_.unknown(id));
        return respondJson(c, 200, model_.json());
    }
    if (path == QLatin1String("/v1/chat/completions")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::ChatCompletions);
    }
    if (path == QLatin1String("/v1/completions")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::Completions);
    }
    if (path == QLatin1String("/v1/messages")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::AnthropicMessages);
    }
    if (path == QLatin1String("/v1/messages/count_tokens")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::AnthropicCountTokens);
    }
    if (path == QLatin1String("/v1/responses")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::Responses);
    }
    if (path == QLatin1String("/v1/embeddings")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, Endpoint::Embeddings);
    }
    if (path == QLatin1String("/v1/cache/status")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, cacheStatusJson(engine_.cacheStatus(), engine_.options().maxRunningRequests));
    }
    if (path == QLatin1String("/v1/cache/clear")) {
        if (method != "POST") return wrongMethod("POST");
        return clearCache(c);
    }
    if (path == QLatin1String("/v1/stats")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, statsJson());
    }
    ApiError e;
    e.status = 404;
    e.code = QStringLiteral("unknown_url");
    e.message = QStringLiteral("Invalid URL (%1 %2).").arg(QString::fromLatin1(method.left(20)), path.left(200));
    fail(c, e, dialect);
}

void OpenAiService::preflight(HttpConnection* c, const HttpRequest& req) {
    const QByteArray origin = req.header("origin");
    if (!origin.isEmpty() && !cors_.allows(origin)) {
        ApiError e;
        e.status = 403;
        e.type = QStringLiteral("permission_error");
        e.code = QStringLiteral("origin_not_allowed");
        e.message = QStringLiteral("Requests from the web page origin '%1' are not allowed; list it with "
                                   "--cors-origins (or in the app's endpoint settings).")
                        .arg(QString::fromLatin1(origin.left(200)));
        return fail(c, e);
    }
    HttpHeaders headers = cors_.preflightHeaders(req);
    headers.emplace_back(QByteArrayLiteral("Allow"), QByteArrayLiteral("GET, POST, OPTIONS"));
    c->respond(204, std::move(headers), {});
}

bool OpenAiService::authorized(HttpConnection* c, const HttpRequest& req, ApiDialect dialect) {
    if (opt_.apiKey.isEmpty()) return true;
    const QByteArray auth = req.header("authorization");
    // Anthropic's clients send the key as x-api-key.
    const QByteArray apiKey = req.header("x-api-key").trimmed();
    ApiError e;
    e.status = 401;
    if (!apiKey.isEmpty()) {
        if (sameSecret(apiKey, opt_.apiKey.toUtf8())) return true;
        e.message = QStringLiteral("Incorrect API key provided.");
        e.code = QStringLiteral("invalid_api_key");
    } else if (auth.isEmpty()) {
        e.message = QStringLiteral("You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY' "
                                   "(or as 'x-api-key: YOUR_KEY').");
        e.code = QStringLiteral("missing_api_key");
    } else {
        // The scheme is case-insensitive (RFC 7235): "bearer KEY" is fine.
        const QByteArray scheme = auth.left(auth.indexOf(' ') < 0 ? auth.size() : auth.indexOf(' '));
        const QByteArray given =
            scheme.compare("Bearer", Qt::CaseInsensitive) == 0 ? auth.mid(scheme.size()).trimmed() : QByteArray();
        if (!given.isEmpty() && sameSecret(given, opt_.apiKey.toUtf8())) return true;
        e.message = QStringLiteral("Incorrect API key provided.");
        e.code = QStringLiteral("invalid_api_key");
    }
    fail(c, e, dialect);
    return false;
}

ApiError OpenAiService::queueFullError() const {
    ApiError e;
    e.status = 503;
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("queue_full");
    e.message = QStringLiteral("The server is busy: %1 requests are waiting. Try again later.")
                    .arg(engine_.options().maxWaiting);
    e.retryAfterSeconds = opt_.http.retryAfterSeconds;
    return e;
}

ApiError OpenAiService::shuttingDownError() const {
    ApiError e;
    e.status = 503;
    e.type = QStringLiteral("server_error");
    e.code = QStringLiteral("shutting_down");
    e.message = QStringLiteral("The server is shutting down; the request was not completed. Try again later.");
    e.retryAfterSeconds = opt_.http.retryAfterSeconds;
    return e;
}

bool OpenAiService::queueFull() const { return engine_.cacheStatus().waiting >= engine_.options().maxWaiting; }

// ---------------------------------------------------------------- work off this thread

void OpenAiService::prepare(HttpConnection* c, const HttpRequest& request, Endpoint endpoint) {
    const quint64 key = nextKey_++;
    preparing_.emplace(key, QPointer<HttpConnection>(c));
    preparingCount_ = int(preparing_.size());
    keyOf_[c] = key;
    const PreparationContext context = context_;
    const QByteArray body = request.body;
    pool_.start([this, key, endpoint, body, context] {
        PreparedRequest result;
        try {
            switch (endpoint) {
            case Endpoint::ChatCompletions: result = prepareChatCompletion(body, context); break;
            case Endpoint::Completions: result = prepareCompletion(body, context); break;
            case Endpoint::AnthropicMessages: result = prepareAnthropicMessages(body, context, false); break;
            case Endpoint::AnthropicCountTokens: result = prepareAnthropicMessages(body, context, true); break;
            case Endpoint::Responses: result = prepareResponses(body, context); break;
            case Endpoint::Embeddings: result = prepareEmbeddings(body, context); break;
            }
        } catch (const std::exception& e) {
            ApiError err;
            err.status = 500;
            err.type = QStringLiteral("server_error");
            err.message = QStringLiteral("Internal error: %1").arg(QString::fromUtf8(e.what()));
            result = PreparedRequest{};
            result.error = err;
            if (endpoint == Endpoint::AnthropicMessages || endpoint == Endpoint::AnthropicCountTokens)
                result.dialect = ApiDialect::Anthropic;
        }
        prepared_->put({key, std::move(result)});
    });
}

void OpenAiService::onPrepared(quint64 key, PreparedRequest prepared) {
    const auto it = preparing_.find(key);
    if (it == preparing_.end()) return;  // the client left, or the server stopped
    QPointer<HttpConnection> c = it->second;
    preparing_.erase(it);
    preparingCount_ = int(preparing_.size());
    if (!c) return;
    keyOf_.erase(c.data());
    if (!c->owesAnswer()) return;
    if (prepared.error) return fail(c, *prepared.error, prepared.dialect);
    if (prepared.countOnly) return respondJson(c, 200, {{QStringLiteral("input_tokens"), prepared.promptTokens}});
    if (queueFull()) return fail(c, queueFullError(), prepared.dialect);
    submit(c, key, std::move(prepared));
}

void OpenAiService::clearCache(HttpConnection* c) {
    // Clearing waits for the engine thread's next step: not on this thread.
    QPointer<HttpConnection> conn(c);
    pool_.start([this, conn] {
        const MaintenanceResult cleared = engine_.clearPrefixCache();
        const QJsonObject status = cacheStatusJson(engine_.cacheStatus(), engine_.options().maxRunningRequests);
        const ApiError error = maintenanceError(cleared);
        calls_->put([conn, status, cleared = cleared.ok(), error] {
            if (!conn || !conn->owesAnswer()) return;
            if (cleared) respondJson(conn, 200, status);
            else respondError(conn, error);
        });
    });
}

void OpenAiService::onClientGone(HttpConnection* c) {
    const auto k = keyOf_.find(c);
    if (k == keyOf_.end()) return;
    const quint64 key = k->second;
    keyOf_.erase(k);
    preparing_.erase(key);  // its result is dropped when it comes
    preparingCount_ = int(preparing_.size());
    const auto it = jobs_.find(key);
    if (it == jobs_.end()) return;
    Job& j = *it->second;
    if (j.clientGone) return;
    j.clientGone = true;
    cancelChoices(j);  // pages come back now; the Cancelled events end the job
}

void OpenAiService::cancelChoices(Job& j) {
    for (Choice& ch : j.choices)
        if (!ch.ended && !ch.unsent) engine_.cancel(ch.requestId);
}

// Hands the engine the choices not yet in it: all of them, except for
// embeddings, which go in a few at a time, the next as one ends. Once the
// request has failed or its client left, they are dropped instead.
void OpenAiService::feedChoices(Job& j) {
    int inFlight = 0;
    for (const Choice& ch : j.choices)
        if (!ch.ended && !ch.unsent) ++inFlight;
    const int limit = j.embeddings ? kEmbeddingsInFlight : int(j.choices.size());
    std::shared_ptr<EngineEvents> queue = events_;
    for (Choice& ch : j.choices) {
        if (!ch.unsent) continue;
        if (j.failed || j.clientGone || !queue) {
            ch.unsent.reset();
            ch.ended = true;
            --j.open;
            continue;
        }
        if (inFlight >= limit) break;
        const quint64 ek = eventKey(j.key, ch.index);
        EventSink sink = [queue, ek](const Event& ev) { queue->put({ek, ev}); };
        GenerateRequest g = std::move(*ch.unsent);
        ch.unsent.reset();
        ch.requestId = engine_.submit(std::move(g), std::move(sink));
        ++inFlight;
    }
}

// ---------------------------------------------------------------- the engine

void OpenAiService::submit(HttpConnection* c, quint64 key, PreparedRequest p) {
    auto job = std::make_unique<Job>();
    job->key = key;
    job->chat = p.chat;
    job->stream = p.stream;
    job->includeUsage = p.includeUsage;
    job->logprobs = p.logprobs;
    job->parallelToolCalls = p.parallelToolCalls;
    job->header.id = (p.chat ? QStringLiteral("chatcmpl-") : QStringLiteral("cmpl-")) + randomId(24);
    job->header.created = QDateTime::currentSecsSinceEpoch();
    job->header.model = p.model;
    job->header.fingerprint = fingerprint_;
    job->endpoint = p.chat ? QStringLiteral("chat.completions") : QStringLiteral("completions");
    job->dialect = p.dialect;
    job->embeddings = p.embeddings;
    job->base64 = p.base64;
    if (p.embeddings) {
        job->header.id = QStringLiteral("embd-") + randomId(24);
        job->endpoint = QStringLiteral("embeddings");
    }
    job->clientStops = std::move(p.clientStops);
    if (p.dialect == ApiDialect::Anthropic) {
        job->header.id = QStringLiteral("msg_") + randomId(24);
        job->endpoint = QStringLiteral("messages");
        job->writer = std::make_unique<AnthropicAnswer>(job->header.id, p.model, p.promptTokens);
    } else if (p.dialect == ApiDialect::Responses) {
        job->header.id = QStringLiteral("resp_") + randomId(24);
        job->endpoint = QStringLiteral("responses");
        job->writer = std::make_unique<ResponsesAnswer>(job->header.id, p.model, job->header.created, std::move(p.echo));
    }
    job->client = QStringLiteral("api:%1").arg(key);
    job->conn = c;
    job->choices.resize(p.choices.size());
    job->open = int(p.choices.size());
    for (size_t i = 0; i < p.choices.size(); ++i) {
        Choice& ch = job->choices[i];
        ch.index = int(i);
        ch.prompt = p.choices[i].prompt;
        ch.reader = std::move(p.choices[i].reader);
        ch.forcedCall = p.choices[i].forcedCall;
        ch.echo = std::move(p.choices[i].echo);  // a stream sends it first, with the headers
        ch.textOffset = textLength(ch.echo);
        if (!job->stream) ch.text = ch.echo;
    }
    Job* raw = job.get();
    jobs_.emplace(key, std::move(job));
    keyOf_[c] = key;
    ++activeJobs_;
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.accepted();
    }
    for (size_t i = 0; i < p.choices.size(); ++i) {
        raw->choices[i].unsent = std::move(p.choices[i].generate);
        raw->choices[i].unsent->tag = ClientTag{common::kApiRequestTagKind, key};
    }
    // The engine may answer at once (a refusal): the job is complete before.
    feedChoices(*raw);
    emit sessionStarted(raw->choices.empty() ? 0 : raw->choices[0].requestId, raw->client, raw->endpoint);
}

void OpenAiService::drainEvents() {
    if (!events_) return;
    const std::vector<std::pair<quint64, Event>> batch = events_->takeAll();
    // A choice's tokens in one batch go out as one delta: one write, one
    // SSE event, however many tokens the engine produced since the last turn.
    struct Pending {
        quint64 key;
        std::string text;
        int count = 0;
        std::vector<TokenLogprobs> logprobs;
    };
    std::vector<Pending> pending;
    auto find = [this](quint64 ek) -> std::pair<Job*, Choice*> {
        const auto j = jobs_.find(jobOf(ek));
        if (j == jobs_.end() || choiceOf(ek) >= int(j->second->choices.size())) return {nullptr, nullptr};
        return {j->second.get(), &j->second->choices[size_t(choiceOf(ek))]};
    };
    auto flush = [&](quint64 key) {
        for (auto it = pending.begin(); it != pending.end(); ++it) {
            if (it->key != key) continue;
            Pending p = std::move(*it);
            pending.erase(it);
            if (auto [j, ch] = find(key); j) onTokens(*j, *ch, p.text, p.count, std::move(p.logprobs));
            return;
        }
    };
    for (const auto& [key, ev] : batch) {
        if (ev.kind == Event::Kind::Token) {
            auto it = std::find_if(pending.begin(), pending.end(), [key = key](const Pending& p) { return p.key == key; });
            if (it == pending.end()) it = pending.insert(pending.end(), Pending{key, {}, 0, {}});
            it->text += ev.text;
            ++it->count;
            if (ev.logprobs) it->logprobs.push_back(*ev.logprobs);
            continue;
        }
        flush(key);
        if (auto [j, ch] = find(key); j) onTerminal(*j, *ch, ev);
    }
    while (!pending.empty()) flush(pending.front().key);
}

void OpenAiService::onTokens(Job& j, Choice& ch, const std::string& text, int count,
                             std::vector<TokenLogprobs> logprobs) {
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        for (int i = 0; i < count; ++i) stats_.token();
    }
    if (j.clientGone || j.failed || ch.callsComplete) return;
    if (j.logprobs) ch.logprobs.insert(ch.logprobs.end(), logprobs.begin(), logprobs.end());
    try {
        deliverText(j, ch, text, false);
    } catch (const std::exception&) {
        // A broken client connection must not take the server down.
        j.clientGone = true;
        cancelChoices(j);
        return;
    }
    if (ch.reader && ch.reader->done() && !ch.callsComplete) {
        // The reply's calls are complete: nothing after them is part of it,
        // so stop generating now.
        ch.callsComplete = true;
        engine_.cancel(ch.requestId);
    }
}

void OpenAiService::onTerminal(Job& j, Choice& ch, const Event& ev) {
    if (ch.ended) return;
    ch.ended = true;
    --j.open;
    ch.usage = ev.usage;
    ch.reason = ev.finish;
    ch.stopIndex = ev.stopIndex;
    if (ev.kind == Event::Kind::Done && j.embeddings) ch.embedding = ev.embedding;
    try {
        switch (ev.kind) {
        case Event::Kind::Done: choiceDone(j, ch, ev.finish); break;
        case Event::Kind::Error: choiceFailed(j, ev); break;
        case Event::Kind::Cancelled:
            // Stopped by us after the calls: a normal end.
            if (ch.callsComplete) choiceDone(j, ch, FinishReason::Stop);
            else choiceCancelled(j, ev);
            break;
        case Event::Kind::Token: break;
        }
    } catch (const std::exception&) {
        j.failed = true;
    }
    feedChoices(j);
    if (j.open == 0) complete(j);
}

bool OpenAiService::writable(const Job& j) const { return !j.clientGone && j.conn && j.conn->owesAnswer(); }

void OpenAiService::writeEvent(Job& j, const QJsonObject& o) {
    if (writable(j)) j.conn->streamData(sseEvent(o));
}

QJsonObject OpenAiService::textChunk(const Job& j, const Choice& ch, const std::string& text, const QString& finish,
                                     const QJsonValue& logprobs) const {
    QJsonObject o = textCompletionJson(j.header, {TextChoice{text, finish, logprobs}}, nullptr, ch.index);
    if (j.includeUsage) o.insert(QStringLiteral("usage"), QJsonValue::Null);
    return o;
}

void OpenAiService::startStream(Job& j) {
    if (j.headersSent || !writable(j)) return;
    j.headersSent = true;
    j.conn->beginStream(200, {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("text/event-stream")},
                              {QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("no-cache")},
                              // nginx in front: pass each event on at once
                              {QByteArrayLiteral("X-Accel-Buffering"), QByteArrayLiteral("no")}});
    if (j.writer) {
        j.conn->streamData(j.writer->begin());
        return;
    }
    for (Choice& ch : j.choices) {
        if (j.chat) {
            QJsonObject delta{{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), QString()}};
            writeEvent(j, chatChunkJson(j.header, ch.index, delta, {}, QJsonValue::Null, j.includeUsage));
        } else if (!ch.echo.empty()) {
            writeEvent(j, textChunk(j, ch, ch.echo, {}, QJsonValue::Null));
        }
        ch.echo.clear();
    }
}

void OpenAiService::deliverText(Job& j, Choice& ch, const std::string& delta, bool final) {
    std::string text;
    std::vector<ToolCall> calls;
    if (ch.reader) {
        ToolCallReader::Output out = final ? ch.reader->finish() : ch.reader->push(delta);
        text = std::move(out.text);
        calls = std::move(out.calls);
    } else if (ch.forcedCall) {
        // Held until the reply ends; one that is not a call (cut short) is shown as text.
        ch.heldCall += delta;
        if (final) {
            if (std::optional<std::vector<ToolCall>> read = common::readForcedCalls(ch.heldCall)) calls = std::move(*read);
            else text = std::move(ch.heldCall);
            ch.heldCall.clear();
        }
    } else {
        text = delta;
    }
    if (!j.parallelToolCalls && !calls.empty()) {
        // One call at most: the first ends the reply.
        calls.resize(size_t(std::max(0, 1 - ch.callCount)));
        if (!ch.callsComplete) {
            ch.callsComplete = true;
            if (!ch.ended) engine_.cancel(ch.requestId);
        }
    }
    for (ToolCall& c : calls) c.id = (QStringLiteral("call_") + randomId(24)).toStdString();
    if (j.writer) return deliverToWriter(j, ch, text, std::move(calls));
    if (!j.stream) {
        ch.text += text;
        ch.calls.insert(ch.calls.end(), calls.begin(), calls.end());
        ch.callCount += int(calls.size());
        return;
    }
    if (text.empty() && calls.empty() && ch.logprobs.empty()) return;
    startStream(j);
    if (!text.empty() || !ch.logprobs.empty()) {
        // Log probabilities go with the text of their tokens, or as soon as
        // they come when the text is held back (a possible stop string).
        QJsonValue logprobs = QJsonValue::Null;
        if (j.logprobs) {
            logprobs = j.chat ? chatLogprobsJson(ch.logprobs) : completionLogprobsJson(ch.logprobs, ch.textOffset);
            for (const TokenLogprobs& t : ch.logprobs) ch.textOffset += textLength(t.chosen.bytes);
            ch.logprobs.clear();
        }
        if (j.chat)
            writeEvent(j, chatChunkJson(j.header, ch.index,
                                        QJsonObject{{QStringLiteral("content"), QString::fromStdString(text)}}, {},
                                        logprobs, j.includeUsage));
        else
            writeEvent(j, textChunk(j, ch, text, {}, logprobs));
    }
    if (!calls.empty()) {
        QJsonObject delta{{QStringLiteral("tool_calls"), toolCallsJson(calls, ch.callCount, true)}};
        writeEvent(j, chatChunkJson(j.header, ch.index, delta, {}, QJsonValue::Null, j.includeUsage));
        ch.callCount += int(calls.size());
    }
}

void OpenAiService::deliverToWriter(Job& j, Choice& ch, const std::string& text, std::vector<ToolCall> calls) {
    ch.callCount += int(calls.size());
    if (text.empty() && calls.empty()) return;
    // The stream's opening events come before the first piece's.
    if (j.stream) startStream(j);
    QByteArray out = j.writer->text(text);
    for (const ToolCall& c : calls) out += j.writer->call(c);
    if (j.stream && writable(j)) j.conn->streamData(out);
}

void OpenAiService::choiceDone(Job& j, Choice& ch, FinishReason reason) {
    if (j.clientGone || j.failed) return;
    deliverText(j, ch, {}, true);
    ch.finish = ch.callCount > 0 ? QStringLiteral("tool_calls") : finishReasonName(reason);
    ch.reason = reason;
    if (j.writer) return;  // its end goes out with the usage, in complete()
    if (!j.stream || !writable(j)) return;
    startStream(j);
    if (j.chat) writeEvent(j, chatChunkJson(j.header, ch.index, QJsonObject{}, ch.finish, QJsonValue::Null, j.includeUsage));
    else writeEvent(j, textChunk(j, ch, {}, ch.finish, QJsonValue::Null));
}

ApiError OpenAiService::errorOf(const Event& ev) const {
    ApiError e;
    const QString message = QString::fromStdString(ev.text);
    switch (ev.error) {
    case ErrorCode::QueueFull: return queueFullError();
    case ErrorCode::TooLong:
        return ApiError::invalid(QStringLiteral("messages"), message, QStringLiteral("context_length_exceeded"));
    case ErrorCode::BadRequest: return ApiError::invalid({}, message);
    default:
        e.status = 500;
        e.type = QStringLiteral("server_error");
        e.message = message.isEmpty() ? QStringLiteral("The engine failed this request.") : message;
        return e;
    }
}

// A request that ends badly: an error answer if nothing was sent yet, else
// an error event, then "[DONE]" and the end of the stream.
void OpenAiService::endWithError(Job& j, const ApiError& e) {
    if (!writable(j)) return;
    if (!j.headersSent) return respondError(j.conn, e, j.dialect);
    if (j.writer) {
        // Anthropic and Responses streams end with their error event (no [DONE]).
        j.conn->streamData(j.writer->errorEvent(e));
        j.conn->endStream();
        return;
    }
    writeEvent(j, e.toJson());
    j.conn->streamData(QByteArrayLiteral("data: [DONE]\n\n"));
    j.conn->endStream();
}

// One choice failed: the whole answer is that error; the other choices stop.
void OpenAiService::choiceFailed(Job& j, const Event& ev) {
    if (j.failed || j.clientGone) return;
    j.failed = true;
    const ApiError e = errorOf(ev);
    j.failStatus = e.status;
    endWithError(j, e);
    cancelChoices(j);
}

void OpenAiService::choiceCancelled(Job& j, const Event& ev) {
    if (j.failed || j.clientGone) return;
    // Not the client's doing: the engine is going away (a reload, the app quitting).
    j.failed = true;
    ApiError e = shuttingDownError();
    e.code = QStringLiteral("cancelled");
    e.message = QStringLiteral("The request was cancelled: %1").arg(QString::fromStdString(ev.text));
    endWithError(j, e);
    cancelChoices(j);
}

// Every choice has ended: the answer's end, then the bookkeeping.
void OpenAiService::complete(Job& j) {
    // Usage over the choices: each prompt's tokens once, every completion token.
    Usage usage;
    std::vector<bool> counted;
    for (const Choice& ch : j.choices) {
        if (size_t(ch.prompt) >= counted.size()) counted.resize(size_t(ch.prompt) + 1, false);
        usage.completionTokens += ch.usage.completionTokens;
        usage.draftTokens += ch.usage.draftTokens;
        usage.acceptedDraftTokens += ch.usage.acceptedDraftTokens;
        if (!counted[size_t(ch.prompt)]) {
            counted[size_t(ch.prompt)] = true;
            usage.promptTokens += ch.usage.promptTokens;
            // The first choice's hit is what the cache held before this request.
            usage.cachedPromptTokens += ch.usage.cachedPromptTokens;
        }
    }
    if (!j.choices.empty()) {
        usage.timeToFirstTokenMs = j.choices[0].usage.timeToFirstTokenMs;
        usage.decodeTokensPerSecond = j.choices[0].usage.decodeTokensPerSecond;
    }
    QString outcome;
    if (j.clientGone) outcome = QStringLiteral("cancelled");
    else if (j.failed) outcome = j.failStatus == 503 ? QString() : QStringLiteral("error");
    else outcome = j.choices.size() == 1 ? j.choices[0].finish : QStringLiteral("stop");
    if (j.failed && j.failStatus == 503) {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.rejected(503);
    }
    // The app hears of the end before the client does.
    QPointer<HttpConnection> c = writable(j) && !j.failed ? j.conn : nullptr;
    QByteArray streamEnd;
    QJsonObject whole;
    if (c && j.embeddings) {
        std::vector<std::vector<float>> vectors;
        for (Choice& ch : j.choices) vectors.push_back(std::move(ch.embedding));
        whole = embeddingsJson(j.header.model, vectors, j.base64, QStringLiteral("last"), usage.promptTokens);
    } else if (c && j.writer) {
        const Choice& ch = j.choices.front();
        AnswerEnding ending;
        ending.reason = ch.reason;
        ending.toolCalls = ch.callCount > 0;
        if (ch.reason == FinishReason::StopString && ch.stopIndex >= 0 && size_t(ch.stopIndex) < j.clientStops.size())
            ending.stopSequence = j.clientStops[size_t(ch.stopIndex)];
        ending.usage = usage;
        if (j.stream) {
            startStream(j);
            if (writable(j)) j.conn->streamData(j.writer->end(ending));
        } else {
            whole = j.writer->whole(ending);
        }
    } else if (c && j.stream) {
        startStream(j);
        if (j.includeUsage)
            writeEvent(j, usageChunkJson(j.header,
                                         j.chat ? QStringLiteral("chat.completion.chunk") : QStringLiteral("text_completion"),
                                         usage));
    } else if (c) {
        if (j.chat) {
            std::vector<ChatChoice> choices;
            for (const Choice& ch : j.choices)
                choices.push_back({ch.text, ch.calls, ch.finish,
                                   j.logprobs ? QJsonValue(chatLogprobsJson(ch.logprobs)) : QJsonValue(QJsonValue::Null)});
            whole = chatCompletionJson(j.header, choices, usage);
        } else {
            std::vector<TextChoice> choices;
            for (const Choice& ch : j.choices)
                choices.push_back({ch.text, ch.finish,
                                   j.logprobs ? QJsonValue(completionLogprobsJson(ch.logprobs, textLength(ch.echo)))
                                              : QJsonValue(QJsonValue::Null)});
            whole = textCompletionJson(j.header, choices, &usage);
        }
    }
    const bool stream = j.stream, headersSent = j.headersSent, done = !j.writer;
    finishJob(j, outcome, usage);  // j is gone from here on
    if (!c) return;
    if (stream) {
        if (headersSent) {
            if (done) c->streamData(QByteArrayLiteral("data: [DONE]\n\n"));
            c->endStream();
        }
    } else {
        respondJson(c, 200, whole);
    }
}

// The request's last step: stats, the app's session list, the job itself.
void OpenAiService::finishJob(Job& j, const QString& outcome, const Usage& usage) {
    const double ms = std::chrono::duration<double, std::milli>(ServerStats::Clock::now() - j.start).count();
    if (!outcome.isEmpty()) {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.finished(outcome, usage, ms);
    }
    const quint64 requestId = j.choices.empty() ? 0 : j.choices[0].requestId;
    const QString client = j.client;
    if (j.conn) {
        j.conn->setAnswerTokens(usage.completionTokens);  // for its access-log line
        const auto k = keyOf_.find(j.conn.data());
        if (k != keyOf_.end() && k->second == j.key) keyOf_.erase(k);
    }
    jobs_.erase(j.key);
    --activeJobs_;
    emit sessionFinished(requestId, client, outcome.isEmpty() ? QStringLiteral("error") : outcome);
}

} // namespace weir::server
