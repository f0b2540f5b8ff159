#include "app/server/openai_service.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QRandomGenerator>
#include <QUrl>
#include <exception>

#include "app/server/api_client_tag.h"
#include "app/server/response_json.h"

namespace weir::server {

namespace {

// How long stop() waits for the last answers to reach their clients.
constexpr int kShutdownFlushMs = 2000;

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

void respondError(HttpConnection* c, const ApiError& e) {
    HttpHeaders extra;
    if (e.retryAfterSeconds > 0) extra.emplace_back(QByteArrayLiteral("Retry-After"), QByteArray::number(e.retryAfterSeconds));
    if (e.status == 401) extra.emplace_back(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
    respondJson(c, e.status, e.toJson(), std::move(extra));
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

// One request in the engine: its connection, what was asked, what the
// tool-call reader holds.
struct Job {
    quint64 key = 0;
    uint64_t requestId = 0;
    QString client, endpoint;
    bool chat = true, stream = false, includeUsage = false;
    QString id, model;
    qint64 created = 0;
    QPointer<HttpConnection> conn;
    bool headersSent = false;
    bool clientGone = false;
    bool callsComplete = false;   // the reader has the whole reply: generation was stopped
    std::unique_ptr<ToolCallReader> reader;
    std::string text;             // non-streaming: everything so far; completions: the echo
    std::vector<ToolCall> calls;  // non-streaming: every call so far
    int callCount = 0;
    ServerStats::Clock::time_point start = ServerStats::Clock::now();
};

OpenAiService::OpenAiService(Engine& engine, ServerOptions options)
    : engine_(engine), opt_(std::move(options)),
      model_{opt_.modelId.isEmpty() ? ServedModel::idForFile(QString::fromStdString(engine.options().modelPath))
                                    : opt_.modelId},
      guard_(opt_.host, opt_.allowedHosts, !opt_.apiKey.isEmpty()), pool_(this) {
    context_.engine = &engine_;
    context_.model = model_;
    context_.contextLimit = contextLimitOf(engine_);
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
    events_ = std::make_shared<EngineEventQueue>(this, [this] { drainEvents(); });
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
        engine_.cancel(j.requestId);
        if (writable(j)) endWithError(j, shuttingDownError());
        finishJob(j, QStringLiteral("cancelled"), Usage{});
    }
    // The engine's late events for them have nobody to go to.
    if (events_) events_->detach();
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

void OpenAiService::fail(HttpConnection* c, const ApiError& e) {
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.rejected(e.status);
    }
    respondError(c, e);
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
    const QString path = req.path;
    const QByteArray& method = req.method;
    const bool get = method == "GET" || method == "HEAD";
    auto wrongMethod = [&](const char* allowed) {
        ApiError e;
        e.status = 405;
        e.code = QStringLiteral("method_not_allowed");
        e.message = QStringLiteral("%1 %2 is not supported; use %3.")
                        .arg(QString::fromLatin1(method.left(20)), path.left(200), QLatin1String(allowed));
        fail(c, e);
    };

    if (auto refused = guard_.check(req)) return fail(c, *refused);
    if (path == QLatin1String("/health") || path == QLatin1String("/v1/health")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, {{QStringLiteral("status"), QStringLiteral("ok")}, {QStringLiteral("model"), model_.id}});
    }
    if (!authorized(c, req)) return;
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
        return prepare(c, req, true);
    }
    if (path == QLatin1String("/v1/completions")) {
        if (method != "POST") return wrongMethod("POST");
        return prepare(c, req, false);
    }
    if (path == QLatin1String("/v1/cache/status")) {
        if (!get) return wrongMethod("GET");
        return respondJson(c, 200, cacheStatusJson(engine_.cacheStatus()));
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
    fail(c, e);
}

bool OpenAiService::authorized(HttpConnection* c, const HttpRequest& req) {
    if (opt_.apiKey.isEmpty()) return true;
    const QByteArray auth = req.header("authorization");
    ApiError e;
    e.status = 401;
    if (auth.isEmpty()) {
        e.message = QStringLiteral("You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.");
        e.code = QStringLiteral("missing_api_key");
    } else {
        const QByteArray prefix = QByteArrayLiteral("Bearer ");
        const QByteArray given = auth.startsWith(prefix) ? auth.mid(prefix.size()).trimmed() : QByteArray();
        if (!given.isEmpty() && sameSecret(given, opt_.apiKey.toUtf8())) return true;
        e.message = QStringLiteral("Incorrect API key provided.");
        e.code = QStringLiteral("invalid_api_key");
    }
    fail(c, e);
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

void OpenAiService::prepare(HttpConnection* c, const HttpRequest& request, bool chat) {
    const quint64 key = nextKey_++;
    preparing_.emplace(key, QPointer<HttpConnection>(c));
    preparingCount_ = int(preparing_.size());
    keyOf_[c] = key;
    const PreparationContext context = context_;
    const QByteArray body = request.body;
    pool_.start([this, key, chat, body, context] {
        auto result = std::make_shared<PreparedRequest>();
        try {
            *result = chat ? prepareChatCompletion(body, context) : prepareCompletion(body, context);
        } catch (const std::exception& e) {
            ApiError err;
            err.status = 500;
            err.type = QStringLiteral("server_error");
            err.message = QStringLiteral("Internal error: %1").arg(QString::fromUtf8(e.what()));
            result->error = err;
        }
        QMetaObject::invokeMethod(this, [this, key, result] { onPrepared(key, std::move(*result)); },
                                  Qt::QueuedConnection);
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
    if (prepared.error) return fail(c, *prepared.error);
    if (queueFull()) return fail(c, queueFullError());
    submit(c, key, std::move(prepared));
}

void OpenAiService::clearCache(HttpConnection* c) {
    // Clearing waits for the engine thread's next step: not on this thread.
    QPointer<HttpConnection> conn(c);
    pool_.start([this, conn] {
        engine_.clearPrefixCache();
        const QJsonObject status = cacheStatusJson(engine_.cacheStatus());
        QMetaObject::invokeMethod(this, [conn, status] {
            if (conn && conn->owesAnswer()) respondJson(conn, 200, status);
        }, Qt::QueuedConnection);
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
    engine_.cancel(j.requestId);  // pages come back now; the Cancelled event ends the job
}

// ---------------------------------------------------------------- the engine

void OpenAiService::submit(HttpConnection* c, quint64 key, PreparedRequest p) {
    auto job = std::make_unique<Job>();
    job->key = key;
    job->chat = p.chat;
    job->stream = p.stream;
    job->includeUsage = p.includeUsage;
    job->id = (p.chat ? QStringLiteral("chatcmpl-") : QStringLiteral("cmpl-")) + randomId(24);
    job->endpoint = p.chat ? QStringLiteral("chat.completions") : QStringLiteral("completions");
    job->model = p.model;
    job->created = QDateTime::currentSecsSinceEpoch();
    job->client = QStringLiteral("api:%1").arg(key);
    job->conn = c;
    job->reader = std::move(p.reader);
    job->text = std::move(p.echo);  // a stream sends it first, with the headers
    p.generate.tag = ClientTag{kApiRequestTagKind, key};
    Job* raw = job.get();
    jobs_.emplace(key, std::move(job));
    keyOf_[c] = key;
    ++activeJobs_;

    std::shared_ptr<EngineEventQueue> queue = events_;
    EventSink sink = [queue, key](const Event& ev) { queue->push(key, ev); };
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.accepted();
    }
    raw->requestId = engine_.submit(std::move(p.generate), std::move(sink));
    emit sessionStarted(raw->requestId, raw->client, raw->endpoint);
}

void OpenAiService::drainEvents() {
    if (!events_) return;
    const EngineEventQueue::Batch batch = events_->take();
    // A request's tokens in one batch go out as one delta: one write, one
    // SSE event, however many tokens the engine produced since the last turn.
    struct Pending {
        quint64 key;
        std::string text;
        int count = 0;
    };
    std::vector<Pending> pending;
    auto flush = [&](quint64 key) {
        for (auto it = pending.begin(); it != pending.end(); ++it) {
            if (it->key != key) continue;
            const Pending p = std::move(*it);
            pending.erase(it);
            if (auto j = jobs_.find(key); j != jobs_.end()) onTokens(*j->second, p.text, p.count);
            return;
        }
    };
    for (const auto& [key, ev] : batch) {
        if (ev.kind == Event::Kind::Token) {
            auto it = std::find_if(pending.begin(), pending.end(), [key = key](const Pending& p) { return p.key == key; });
            if (it == pending.end()) it = pending.insert(pending.end(), Pending{key, {}, 0});
            it->text += ev.text;
            ++it->count;
            continue;
        }
        flush(key);
        if (auto j = jobs_.find(key); j != jobs_.end()) onTerminal(*j->second, ev);
    }
    while (!pending.empty()) flush(pending.front().key);
}

void OpenAiService::onTokens(Job& j, const std::string& text, int count) {
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        for (int i = 0; i < count; ++i) stats_.token();
    }
    if (j.clientGone || j.callsComplete) return;
    try {
        deliverText(j, text, false);
    } catch (const std::exception&) {
        // A broken client connection must not take the server down.
        j.clientGone = true;
        engine_.cancel(j.requestId);
        return;
    }
    if (j.reader && j.reader->done()) {
        // The reply's calls are complete: nothing after them is part of it,
        // so stop generating now.
        j.callsComplete = true;
        engine_.cancel(j.requestId);
    }
}

void OpenAiService::onTerminal(Job& j, const Event& ev) {
    try {
        switch (ev.kind) {
        case Event::Kind::Done: return done(j, ev);
        case Event::Kind::Error: return failed(j, ev);
        case Event::Kind::Cancelled: return cancelled(j, ev);
        case Event::Kind::Token: return;
        }
    } catch (const std::exception&) {
        finishJob(j, QStringLiteral("error"), ev.usage);
    }
}

bool OpenAiService::writable(const Job& j) const { return !j.clientGone && j.conn && j.conn->owesAnswer(); }

void OpenAiService::writeEvent(Job& j, const QJsonObject& o) {
    if (writable(j)) j.conn->streamData(sseEvent(o));
}

void OpenAiService::startStream(Job& j) {
    if (j.headersSent || !writable(j)) return;
    j.headersSent = true;
    j.conn->beginStream(200, {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("text/event-stream")},
                              {QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("no-cache")},
                              // nginx in front: pass each event on at once
                              {QByteArrayLiteral("X-Accel-Buffering"), QByteArrayLiteral("no")}});
    if (j.chat) {
        QJsonObject delta{{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), QString()}};
        writeEvent(j, chatChunkJson(j.id, j.created, j.model, delta, {}, j.includeUsage));
    } else if (!j.text.empty()) {
        QJsonObject o = textCompletionJson(j.id, j.created, j.model, j.text, {}, nullptr);  // echo
        if (j.includeUsage) o.insert(QStringLiteral("usage"), QJsonValue::Null);
        writeEvent(j, o);
        j.text.clear();
    }
}

void OpenAiService::deliverText(Job& j, const std::string& delta, bool final) {
    std::string text;
    std::vector<ToolCall> calls;
    if (j.reader) {
        ToolCallReader::Output out = final ? j.reader->finish() : j.reader->push(delta);
        text = std::move(out.text);
        calls = std::move(out.calls);
    } else {
        text = delta;
    }
    for (ToolCall& c : calls) c.id = (QStringLiteral("call_") + randomId(24)).toStdString();
    if (!j.stream) {
        j.text += text;
        j.calls.insert(j.calls.end(), calls.begin(), calls.end());
        j.callCount += int(calls.size());
        return;
    }
    if (text.empty() && calls.empty()) return;
    startStream(j);
    if (!text.empty()) {
        if (j.chat) {
            writeEvent(j, chatChunkJson(j.id, j.created, j.model,
                                        QJsonObject{{QStringLiteral("content"), QString::fromStdString(text)}}, {},
                                        j.includeUsage));
        } else {
            QJsonObject o = textCompletionJson(j.id, j.created, j.model, text, {}, nullptr);
            if (j.includeUsage) o.insert(QStringLiteral("usage"), QJsonValue::Null);
            writeEvent(j, o);
        }
    }
    if (!calls.empty()) {
        QJsonObject delta{{QStringLiteral("tool_calls"), toolCallsJson(calls, j.callCount, true)}};
        writeEvent(j, chatChunkJson(j.id, j.created, j.model, delta, {}, j.includeUsage));
        j.callCount += int(calls.size());
    }
}

void OpenAiService::endStream(Job& j) {
    if (!writable(j)) return;
    j.conn->streamData(QByteArrayLiteral("data: [DONE]\n\n"));
    j.conn->endStream();
}

void OpenAiService::done(Job& j, const Event& ev) {
    if (!j.clientGone) deliverText(j, {}, true);
    const QString finish = j.callCount > 0 ? QStringLiteral("tool_calls") : finishReasonName(ev.finish);
    // The app hears of the end before the client does.
    QPointer<HttpConnection> c = j.clientGone ? nullptr : j.conn;
    const bool stream = j.stream, chat = j.chat, includeUsage = j.includeUsage;
    if (writable(j) && stream) {
        startStream(j);
        if (chat) {
            writeEvent(j, chatChunkJson(j.id, j.created, j.model, QJsonObject{}, finish, includeUsage));
        } else {
            QJsonObject o = textCompletionJson(j.id, j.created, j.model, {}, finish, nullptr);
            if (includeUsage) o.insert(QStringLiteral("usage"), QJsonValue::Null);
            writeEvent(j, o);
        }
        if (includeUsage)
            writeEvent(j, usageChunkJson(j.id, j.created, j.model,
                                         chat ? QStringLiteral("chat.completion.chunk") : QStringLiteral("text_completion"),
                                         ev.usage));
    }
    QJsonObject whole;
    if (!stream)
        whole = chat ? chatCompletionJson(j.id, j.created, j.model, j.text, j.calls, finish, ev.usage)
                     : textCompletionJson(j.id, j.created, j.model, j.text, finish, &ev.usage);
    const bool canWrite = writable(j);
    const bool headersSent = j.headersSent;
    finishJob(j, finish, ev.usage);  // j is gone from here on
    if (!c || !canWrite) return;
    if (stream) {
        if (headersSent) {
            c->streamData(QByteArrayLiteral("data: [DONE]\n\n"));
            c->endStream();
        }
    } else {
        respondJson(c, 200, whole);
    }
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
    if (!j.headersSent) return respondError(j.conn, e);
    writeEvent(j, e.toJson());
    endStream(j);
}

void OpenAiService::failed(Job& j, const Event& ev) {
    const ApiError e = errorOf(ev);
    if (e.status == 503) {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.rejected(503);
    }
    endWithError(j, e);
    finishJob(j, e.status == 503 ? QString() : QStringLiteral("error"), ev.usage);
}

void OpenAiService::cancelled(Job& j, const Event& ev) {
    if (j.callsComplete) {
        // Stopped by us after the calls: a normal end.
        Event end = ev;
        end.kind = Event::Kind::Done;
        return done(j, end);
    }
    if (writable(j)) {
        // Not the client's doing: the engine is going away (a reload, the app quitting).
        ApiError e = shuttingDownError();
        e.code = QStringLiteral("cancelled");
        e.message = QStringLiteral("The request was cancelled: %1").arg(QString::fromStdString(ev.text));
        endWithError(j, e);
    }
    finishJob(j, QStringLiteral("cancelled"), ev.usage);
}

// The request's last step: stats, the app's session list, the job itself.
void OpenAiService::finishJob(Job& j, const QString& outcome, const Usage& usage) {
    const double ms = std::chrono::duration<double, std::milli>(ServerStats::Clock::now() - j.start).count();
    if (!outcome.isEmpty()) {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.finished(outcome, usage, ms);
    }
    const quint64 requestId = j.requestId;
    const QString client = j.client;
    if (j.conn) {
        const auto k = keyOf_.find(j.conn.data());
        if (k != keyOf_.end() && k->second == j.key) keyOf_.erase(k);
    }
    jobs_.erase(j.key);
    --activeJobs_;
    emit sessionFinished(requestId, client, outcome.isEmpty() ? QStringLiteral("error") : outcome);
}

} // namespace weir::server
