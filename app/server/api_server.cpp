#include "app/server/api_server.h"

#include "app/server/api_client_tag.h"

#include <QAbstractHttpServer>
#include <QDateTime>
#include <QHash>
#include <QHostAddress>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <exception>
#include <functional>
#include <map>
#include <mutex>

#include "app/server/api_error.h"
#include "app/server/chat_prompt.h"
#include "app/server/request_parser.h"
#include "app/server/response_json.h"
#include "app/server/server_stats.h"
#include "engine/chat/tool_call_parser.h"
#include "engine/chat/tool_format.h"
#include "weir/engine.h"
#include "engine/tokenizer/tokenizer.h"

namespace weir::server {

namespace {

using Status = QHttpServerResponder::StatusCode;
using Headers = std::vector<std::pair<QByteArray, QByteArray>>;

// Counts what each connection sends between two complete requests. Qt's
// HTTP server buffers a whole body before anyone sees it, so a client that
// sends far more than the body limit is answered with 413 and closed here,
// before the buffer grows. (Bodies just over the limit get a regular 413.)
class GuardedTcpServer final : public QTcpServer {
public:
    GuardedTcpServer(qint64 maxBytes, QObject* parent) : QTcpServer(parent), maxBytes_(maxBytes) {}

    void requestSeen(QTcpSocket* s) { received_[s] = 0; }

protected:
    void incomingConnection(qintptr descriptor) override {
        auto* s = new QTcpSocket(this);
        if (!s->setSocketDescriptor(descriptor)) {
            delete s;
            return;
        }
        // Connected before the HTTP server's own handler: runs first.
        connect(s, &QTcpSocket::readyRead, this, [this, s] { onReadyRead(s); });
        connect(s, &QObject::destroyed, this, [this, s] { received_.remove(s); });
        addPendingConnection(s);
    }

private:
    void onReadyRead(QTcpSocket* s) {
        if (s->property("weirRefused").toBool()) {
            s->readAll();  // discard: the answer is already on its way
            return;
        }
        qint64& n = received_[s];
        n += s->bytesAvailable();
        if (n <= maxBytes_ + kHeaderAllowance) return;
        s->setProperty("weirRefused", true);
        s->readAll();
        ApiError e;
        e.status = 413;
        e.code = QStringLiteral("request_too_large");
        e.message = QStringLiteral("The request body exceeds the limit of %1 bytes.").arg(maxBytes_);
        const QByteArray body = e.body();
        s->write("HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
        s->disconnectFromHost();
    }

    static constexpr qint64 kHeaderAllowance = 256 * 1024;
    qint64 maxBytes_;
    QHash<QTcpSocket*, qint64> received_;
};

class HttpFront final : public QAbstractHttpServer {
public:
    using Handler = std::function<void(const QHttpServerRequest&, QTcpSocket*, QHttpServerResponder&&)>;
    explicit HttpFront(Handler handler) : handler_(std::move(handler)) {}

protected:
    bool handleRequest(const QHttpServerRequest& request, QTcpSocket* socket) override {
        handler_(request, socket, makeResponder(request, socket));
        return true;
    }
    void missingHandler(const QHttpServerRequest&, QTcpSocket*) override {}

private:
    Handler handler_;
};

// Engine events cross to the server's thread through this: the engine thread
// only locks a mutex and posts; once the server is gone, nothing is posted.
struct Relay {
    std::mutex mutex;
    QObject* target = nullptr;
    std::function<void(quint64, const Event&)> deliver;  // runs on the target's thread
};

QString randomId(int n) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    QString s;
    s.reserve(n);
    for (int i = 0; i < n; ++i) s += QLatin1Char(alphabet[QRandomGenerator::global()->bounded(62)]);
    return s;
}

QByteArray header(const QHttpServerRequest& req, QByteArrayView name) {
    for (const auto& [k, v] : req.headers())
        if (k.compare(name, Qt::CaseInsensitive) == 0) return v;
    return {};
}

bool sameSecret(const QByteArray& a, const QByteArray& b) {
    // Constant time in the length of the given key.
    unsigned diff = unsigned(a.size() ^ b.size());
    for (qsizetype i = 0; i < a.size(); ++i) diff |= unsigned(uchar(a[i]) ^ uchar(i < b.size() ? b[i] : 0));
    return diff == 0;
}

void respond(QHttpServerResponder& r, int status, const QByteArray& body, const Headers& extra = {},
             const QByteArray& contentType = QByteArrayLiteral("application/json")) {
    r.writeStatusLine(Status(status));
    r.writeHeader(QByteArrayLiteral("Content-Type"), contentType);
    r.writeHeader(QByteArrayLiteral("Content-Length"), QByteArray::number(body.size()));
    for (const auto& [k, v] : extra) r.writeHeader(k, v);
    r.writeBody(body);
}

void respondError(QHttpServerResponder& r, const ApiError& e) {
    Headers extra;
    if (e.retryAfterSeconds > 0) extra.emplace_back(QByteArrayLiteral("Retry-After"), QByteArray::number(e.retryAfterSeconds));
    if (e.status == 401) extra.emplace_back(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
    respond(r, e.status, e.body(), extra);
}

QByteArray json(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

std::string toStd(const QString& s) { return s.toStdString(); }

} // namespace

// One request in flight: its connection, what was sent, what the parser holds.
struct Job {
    quint64 key = 0;
    uint64_t requestId = 0;
    QString client, endpoint;
    bool chat = true, stream = false, includeUsage = false;
    QString id, model;
    qint64 created = 0;
    std::unique_ptr<QHttpServerResponder> responder;
    QPointer<QTcpSocket> socket;
    QMetaObject::Connection onDisconnect;
    bool headersSent = false;
    bool clientGone = false;
    bool callsComplete = false;   // the parser has the whole reply: generation was stopped
    std::unique_ptr<ToolCallParser> parser;
    std::string text;             // non-streaming: everything so far
    std::vector<ToolCall> calls;  // non-streaming: every call so far
    int callCount = 0;
    ServerStats::Clock::time_point start = ServerStats::Clock::now();
};

struct ApiServer::Impl {
    Impl(ApiServer* q_, Engine& e, ServerOptions o)
        : q(q_), engine(e), opt(std::move(o)), relay(std::make_shared<Relay>()),
          tools(ToolFormat::detect(e.chatTemplate(), [&e](std::string_view t) { return e.tokenizer().find(t) >= 0; })) {
        modelId = opt.modelId;
        if (modelId.isEmpty()) {
            QString file = QString::fromStdString(e.options().modelPath);
            file = file.mid(file.lastIndexOf(QLatin1Char('/')) + 1);
            if (file.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) file.chop(5);
            modelId = file.isEmpty() ? QStringLiteral("weir") : file;
        }
        const ModelConfig& c = e.modelConfig();
        contextLimit = c.nCtxTrain > 0 ? c.nCtxTrain : 4096;
        if (e.options().maxContext > 0) contextLimit = std::min<int64_t>(contextLimit, e.options().maxContext);
        const int64_t full = e.cacheStatus().full.capacityTokens;
        if (full > 0) contextLimit = std::min(contextLimit, full);
        relay->target = q;
        relay->deliver = [this](quint64 key, const Event& ev) { onEvent(key, ev); };
    }

    ApiServer* q;
    Engine& engine;
    ServerOptions opt;
    std::shared_ptr<Relay> relay;
    ToolFormat tools;
    QString modelId;
    int64_t contextLimit = 0;
    std::unique_ptr<HttpFront> http;
    QPointer<GuardedTcpServer> tcp;
    quint16 boundPort = 0;
    std::map<quint64, std::unique_ptr<Job>> jobs;
    quint64 nextKey = 1;
    ServerStats stats;

    // ------------------------------------------------------------ routing

    void handle(const QHttpServerRequest& req, QTcpSocket* socket, QHttpServerResponder&& responder) {
        if (tcp) tcp->requestSeen(socket);
        try {
            route(req, socket, responder);
        } catch (const std::exception& e) {
            ApiError err;
            err.status = 500;
            err.type = QStringLiteral("server_error");
            err.message = QStringLiteral("Internal error: %1").arg(QString::fromUtf8(e.what()));
            fail(responder, err);
        }
    }

    void fail(QHttpServerResponder& r, const ApiError& e) {
        stats.rejected(e.status);
        respondError(r, e);
    }

    void route(const QHttpServerRequest& req, QTcpSocket* socket, QHttpServerResponder& r) {
        using M = QHttpServerRequest::Method;
        const QString path = req.url().path();
        const M method = req.method();
        auto methodName = [&] {
            switch (method) {
            case M::Get: return QStringLiteral("GET");
            case M::Post: return QStringLiteral("POST");
            case M::Put: return QStringLiteral("PUT");
            case M::Delete: return QStringLiteral("DELETE");
            case M::Head: return QStringLiteral("HEAD");
            case M::Options: return QStringLiteral("OPTIONS");
            case M::Patch: return QStringLiteral("PATCH");
            default: return QStringLiteral("?");
            }
        };
        auto wrongMethod = [&](const char* allowed) {
            ApiError e;
            e.status = 405;
            e.code = QStringLiteral("method_not_allowed");
            e.message = QStringLiteral("%1 %2 is not supported; use %3.").arg(methodName(), path, QLatin1String(allowed));
            fail(r, e);
        };

        if (path == QLatin1String("/health") || path == QLatin1String("/v1/health")) {
            if (method != M::Get) return wrongMethod("GET");
            respond(r, 200, json({{QStringLiteral("status"), QStringLiteral("ok")}, {QStringLiteral("model"), modelId}}));
            return;
        }
        if (!authorized(req, r)) return;
        if (req.body().size() > opt.maxBodyBytes) {
            ApiError e;
            e.status = 413;
            e.code = QStringLiteral("request_too_large");
            e.message = QStringLiteral("The request body is %1 bytes; the limit is %2 bytes.")
                            .arg(req.body().size())
                            .arg(opt.maxBodyBytes);
            return fail(r, e);
        }
        if (path == QLatin1String("/v1/models")) {
            if (method != M::Get) return wrongMethod("GET");
            respond(r, 200, json({{QStringLiteral("object"), QStringLiteral("list")},
                                  {QStringLiteral("data"), QJsonArray{modelJson()}}}));
            return;
        }
        if (path.startsWith(QLatin1String("/v1/models/"))) {
            if (method != M::Get) return wrongMethod("GET");
            const QString id = QUrl::fromPercentEncoding(path.mid(11).toUtf8());
            if (!modelMatches(id)) return fail(r, unknownModel(id));
            respond(r, 200, json(modelJson()));
            return;
        }
        if (path == QLatin1String("/v1/chat/completions")) {
            if (method != M::Post) return wrongMethod("POST");
            return chatCompletions(req, socket, r);
        }
        if (path == QLatin1String("/v1/completions")) {
            if (method != M::Post) return wrongMethod("POST");
            return completions(req, socket, r);
        }
        if (path == QLatin1String("/v1/cache/status")) {
            if (method != M::Get) return wrongMethod("GET");
            respond(r, 200, json(weir::server::cacheStatusJson(engine.cacheStatus())));
            return;
        }
        if (path == QLatin1String("/v1/cache/clear")) {
            if (method != M::Post) return wrongMethod("POST");
            engine.clearPrefixCache();
            respond(r, 200, json(weir::server::cacheStatusJson(engine.cacheStatus())));
            return;
        }
        if (path == QLatin1String("/v1/stats")) {
            if (method != M::Get) return wrongMethod("GET");
            respond(r, 200, json(statsJson()));
            return;
        }
        ApiError e;
        e.status = 404;
        e.code = QStringLiteral("unknown_url");
        e.message = QStringLiteral("Invalid URL (%1 %2).").arg(methodName(), path.left(200));
        fail(r, e);
    }

    bool authorized(const QHttpServerRequest& req, QHttpServerResponder& r) {
        if (opt.apiKey.isEmpty()) return true;
        const QByteArray auth = header(req, "authorization");
        ApiError e;
        e.status = 401;
        if (auth.isEmpty()) {
            e.message = QStringLiteral("You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.");
            e.code = QStringLiteral("missing_api_key");
        } else {
            const QByteArray prefix = QByteArrayLiteral("Bearer ");
            const QByteArray given = auth.startsWith(prefix) ? auth.mid(prefix.size()).trimmed() : QByteArray();
            if (!given.isEmpty() && sameSecret(given, opt.apiKey.toUtf8())) return true;
            e.message = QStringLiteral("Incorrect API key provided.");
            e.code = QStringLiteral("invalid_api_key");
        }
        fail(r, e);
        return false;
    }

    QJsonObject modelJson() const {
        return {{QStringLiteral("id"), modelId},
                {QStringLiteral("object"), QStringLiteral("model")},
                {QStringLiteral("created"), qint64(0)},
                {QStringLiteral("owned_by"), QStringLiteral("weir")}};
    }

    bool modelMatches(const QString& id) const {
        return id == modelId || id == modelId + QLatin1String(".gguf") ||
               id == QString::fromStdString(engine.options().modelPath);
    }

    ApiError unknownModel(const QString& id) const {
        ApiError e;
        e.status = 404;
        e.param = QStringLiteral("model");
        e.code = QStringLiteral("model_not_found");
        e.message = QStringLiteral("The model '%1' does not exist; this server serves '%2'.").arg(id.left(200), modelId);
        return e;
    }

    // ------------------------------------------------------------ endpoints

    int32_t defaultMaxTokens(size_t promptTokens) const {
        if (opt.defaultMaxTokens > 0) return int32_t(std::min<qint64>(opt.defaultMaxTokens, INT32_MAX));
        return int32_t(std::max<int64_t>(1, contextLimit - int64_t(promptTokens)));
    }

    bool checkContext(size_t promptTokens, QHttpServerResponder& r, const char* param) {
        if (int64_t(promptTokens) < contextLimit) return true;
        ApiError e = ApiError::invalid(QString::fromLatin1(param),
                                       QStringLiteral("The prompt is %1 tokens; this server's context limit is %2 tokens.")
                                           .arg(promptTokens)
                                           .arg(contextLimit),
                                       QStringLiteral("context_length_exceeded"));
        fail(r, e);
        return false;
    }

    bool queueFull(QHttpServerResponder& r) {
        if (engine.cacheStatus().waiting < engine.options().maxWaiting) return false;
        fail(r, queueFullError());
        return true;
    }

    ApiError queueFullError() const {
        ApiError e;
        e.status = 503;
        e.type = QStringLiteral("server_error");
        e.code = QStringLiteral("queue_full");
        e.message = QStringLiteral("The server is busy: %1 requests are waiting. Try again later.")
                        .arg(engine.options().maxWaiting);
        e.retryAfterSeconds = opt.retryAfterSeconds;
        return e;
    }

    void chatCompletions(const QHttpServerRequest& req, QTcpSocket* socket, QHttpServerResponder& r) {
        ChatRequest cr;
        ApiError err;
        if (!parseChatRequest(req.body(), cr, err)) return fail(r, err);
        if (!modelMatches(cr.model)) return fail(r, unknownModel(cr.model));
        ChatPrompt prompt;
        if (!buildChatPrompt(cr, engine.chatTemplate(), tools, prompt, err)) return fail(r, err);
        GenerateRequest g;
        g.prompt = engine.tokenizePrompt(prompt.text);
        if (!checkContext(g.prompt.size(), r, "messages")) return;
        if (queueFull(r)) return;
        g.sampling = cr.gen.sampling;
        if (!cr.gen.seedGiven) g.sampling.seed = QRandomGenerator::global()->generate64();
        g.maxTokens = cr.gen.maxTokens ? int32_t(*cr.gen.maxTokens) : defaultMaxTokens(g.prompt.size());
        g.stop = prompt.stop;
        g.showSpecialTokens = prompt.showSpecialTokens;
        g.stopAtEndOfGeneration = !cr.gen.ignoreEos;

        auto job = std::make_unique<Job>();
        job->chat = true;
        job->stream = cr.gen.stream;
        job->includeUsage = cr.gen.stream && cr.gen.includeUsage;
        job->id = QStringLiteral("chatcmpl-") + randomId(24);
        job->endpoint = QStringLiteral("chat.completions");
        if (prompt.toolsActive) {
            job->parser = tools.makeParser(prompt.toolNames);
            job->parser->push(prompt.forcedPrefix);  // held: it opens a call
        }
        submit(std::move(job), std::move(g), socket, r, cr.model);
    }

    void completions(const QHttpServerRequest& req, QTcpSocket* socket, QHttpServerResponder& r) {
        CompletionRequest cr;
        ApiError err;
        if (!parseCompletionRequest(req.body(), cr, err)) return fail(r, err);
        if (!modelMatches(cr.model)) return fail(r, unknownModel(cr.model));
        GenerateRequest g;
        std::string echo;
        if (cr.promptIsTokens) {
            const int32_t vocab = engine.tokenizer().vocabSize();
            for (int32_t t : cr.promptTokens)
                if (t >= vocab)
                    return fail(r, ApiError::invalid(QStringLiteral("prompt"),
                                                     QStringLiteral("Token id %1 is outside the vocabulary (%2 tokens).")
                                                         .arg(t)
                                                         .arg(vocab),
                                                     QStringLiteral("invalid_value")));
            g.prompt = cr.promptTokens;
            if (cr.echo) echo = engine.tokenizer().decode(cr.promptTokens);
        } else {
            g.prompt = engine.tokenizePrompt(cr.prompt);
            if (cr.echo) echo = cr.prompt;
        }
        if (!checkContext(g.prompt.size(), r, "prompt")) return;
        if (queueFull(r)) return;
        g.sampling = cr.gen.sampling;
        if (!cr.gen.seedGiven) g.sampling.seed = QRandomGenerator::global()->generate64();
        g.maxTokens = int32_t(cr.gen.maxTokens.value_or(16));
        g.stop = cr.gen.stop;
        g.stopAtEndOfGeneration = !cr.gen.ignoreEos;

        auto job = std::make_unique<Job>();
        job->chat = false;
        job->stream = cr.gen.stream;
        job->includeUsage = cr.gen.stream && cr.gen.includeUsage;
        job->id = QStringLiteral("cmpl-") + randomId(24);
        job->endpoint = QStringLiteral("completions");
        job->text = echo;  // a stream sends it first, with the headers
        submit(std::move(job), std::move(g), socket, r, cr.model);
    }

    void submit(std::unique_ptr<Job> job, GenerateRequest g, QTcpSocket* socket, QHttpServerResponder& r,
                const QString& model) {
        const quint64 key = nextKey++;
        job->key = key;
        job->model = model;
        job->created = QDateTime::currentSecsSinceEpoch();
        job->client = QStringLiteral("api:%1").arg(key);
        job->socket = socket;
        job->responder = std::make_unique<QHttpServerResponder>(std::move(r));
        g.tag = ClientTag{kApiRequestTagKind, key};
        if (socket)
            job->onDisconnect = QObject::connect(socket, &QAbstractSocket::disconnected, q,
                                                 [this, key] { clientGone(key); });
        Job* raw = job.get();
        jobs.emplace(key, std::move(job));

        std::shared_ptr<Relay> rl = relay;
        EventSink sink = [rl, key](const Event& ev) {
            std::lock_guard<std::mutex> lock(rl->mutex);
            if (!rl->target) return;
            QObject* target = rl->target;
            Relay* relayPtr = rl.get();
            QMetaObject::invokeMethod(
                target, [relayPtr, key, ev] { relayPtr->deliver(key, ev); }, Qt::QueuedConnection);
        };
        stats.accepted();
        raw->requestId = engine.submit(std::move(g), std::move(sink));
        emit q->sessionStarted(raw->requestId, raw->client, raw->endpoint);
    }

    // ------------------------------------------------------------ events

    void onEvent(quint64 key, const Event& ev) {
        auto it = jobs.find(key);
        if (it == jobs.end()) return;
        Job& j = *it->second;
        try {
            switch (ev.kind) {
            case Event::Kind::Token:
                stats.token();
                if (j.clientGone || j.callsComplete) return;
                deliverText(j, ev.text, false);
                if (j.parser && j.parser->done()) {
                    // The reply's calls are complete: nothing after them is
                    // part of it, so stop generating now.
                    j.callsComplete = true;
                    engine.cancel(j.requestId);
                }
                return;
            case Event::Kind::Done: return done(j, ev);
            case Event::Kind::Error: return failed(j, ev);
            case Event::Kind::Cancelled: return cancelled(j, ev);
            }
        } catch (const std::exception&) {
            // A broken client connection must not take the server down.
            engine.cancel(j.requestId);
            finishJob(j, QStringLiteral("error"), ev.usage);
        }
    }

    bool writable(const Job& j) const {
        return !j.clientGone && j.responder && j.socket && j.socket->state() == QAbstractSocket::ConnectedState;
    }

    void writeChunk(Job& j, const QByteArray& data) {
        if (!writable(j) || data.isEmpty()) return;
        j.responder->writeBody(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
    }

    void startStream(Job& j) {
        if (j.headersSent || !writable(j)) return;
        j.headersSent = true;
        j.responder->writeStatusLine(Status::Ok);
        j.responder->writeHeader(QByteArrayLiteral("Content-Type"), QByteArrayLiteral("text/event-stream"));
        j.responder->writeHeader(QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("no-cache"));
        j.responder->writeHeader(QByteArrayLiteral("Transfer-Encoding"), QByteArrayLiteral("chunked"));
        if (j.chat) {
            QJsonObject delta{{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), QString()}};
            writeChunk(j, sseEvent(chatChunkJson(j.id, j.created, j.model, delta, {}, j.includeUsage)));
        } else if (!j.text.empty()) {
            writeChunk(j, sseEvent(textChunk(j, j.text, {})));  // echo
            j.text.clear();
        }
    }

    QJsonObject textChunk(const Job& j, const std::string& text, const QString& finish) const {
        QJsonObject o = textCompletionJson(j.id, j.created, j.model, text, finish, nullptr);
        if (j.includeUsage) o.insert(QStringLiteral("usage"), QJsonValue::Null);
        return o;
    }

    void deliverText(Job& j, const std::string& delta, bool final) {
        std::string text;
        std::vector<ToolCall> calls;
        if (j.parser) {
            ToolCallParser::Output out = final ? j.parser->finish() : j.parser->push(delta);
            text = std::move(out.text);
            calls = std::move(out.calls);
        } else {
            text = delta;
        }
        for (ToolCall& c : calls) c.id = toStd(QStringLiteral("call_") + randomId(24));
        if (!j.stream) {
            j.text += text;
            j.calls.insert(j.calls.end(), calls.begin(), calls.end());
            j.callCount += int(calls.size());
            return;
        }
        if (text.empty() && calls.empty()) return;
        startStream(j);
        if (!text.empty()) {
            if (j.chat)
                writeChunk(j, sseEvent(chatChunkJson(j.id, j.created, j.model,
                                                     QJsonObject{{QStringLiteral("content"), QString::fromStdString(text)}},
                                                     {}, j.includeUsage)));
            else
                writeChunk(j, sseEvent(textChunk(j, text, {})));
        }
        if (!calls.empty()) {
            QJsonObject delta{{QStringLiteral("tool_calls"), toolCallsJson(calls, j.callCount, true)}};
            writeChunk(j, sseEvent(chatChunkJson(j.id, j.created, j.model, delta, {}, j.includeUsage)));
            j.callCount += int(calls.size());
        }
    }

    void done(Job& j, const Event& ev) {
        if (!j.clientGone) deliverText(j, {}, true);
        const QString finish = j.callCount > 0 ? QStringLiteral("tool_calls") : finishReasonName(ev.finish);
        if (writable(j)) {
            if (j.stream) {
                startStream(j);
                if (j.chat)
                    writeChunk(j, sseEvent(chatChunkJson(j.id, j.created, j.model, QJsonObject{}, finish, j.includeUsage)));
                else
                    writeChunk(j, sseEvent(textChunk(j, {}, finish)));
                if (j.includeUsage)
                    writeChunk(j, sseEvent(usageChunkJson(j.id, j.created, j.model,
                                                          j.chat ? QStringLiteral("chat.completion.chunk")
                                                                 : QStringLiteral("text_completion"),
                                                          ev.usage)));
                endStream(j);
            } else if (j.chat) {
                respond(*j.responder, 200,
                        json(chatCompletionJson(j.id, j.created, j.model, j.text, j.calls, finish, ev.usage)));
            } else {
                respond(*j.responder, 200, json(textCompletionJson(j.id, j.created, j.model, j.text, finish, &ev.usage)));
            }
        }
        finishJob(j, finish, ev.usage);
    }

    void endStream(Job& j) {
        writeChunk(j, QByteArrayLiteral("data: [DONE]\n\n"));
        if (writable(j)) j.responder->writeBody(QByteArrayLiteral("0\r\n\r\n"));
    }

    ApiError errorOf(const Event& ev) const {
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

    void failed(Job& j, const Event& ev) {
        const ApiError e = errorOf(ev);
        if (writable(j)) {
            if (!j.headersSent) {
                respondError(*j.responder, e);
            } else {
                writeChunk(j, sseEvent(e.toJson()));
                endStream(j);
            }
        }
        if (e.status == 503) stats.rejected(503);
        finishJob(j, e.status == 503 ? QString() : QStringLiteral("error"), ev.usage);
    }

    void cancelled(Job& j, const Event& ev) {
        if (j.callsComplete) {
            // Stopped by us after the calls: a normal end.
            Event end = ev;
            end.kind = Event::Kind::Done;
            return done(j, end);
        }
        if (writable(j)) {
            // Not the client's doing: the engine is shutting down.
            ApiError e;
            e.status = 503;
            e.type = QStringLiteral("server_error");
            e.code = QStringLiteral("cancelled");
            e.message = QStringLiteral("The request was cancelled: %1").arg(QString::fromStdString(ev.text));
            if (!j.headersSent) respondError(*j.responder, e);
            else {
                writeChunk(j, sseEvent(e.toJson()));
                endStream(j);
            }
        }
        finishJob(j, QStringLiteral("cancelled"), ev.usage);
    }

    // The request's last step: stats, the app's session list, the job itself.
    void finishJob(Job& j, const QString& outcome, const Usage& usage) {
        const double ms = std::chrono::duration<double, std::milli>(ServerStats::Clock::now() - j.start).count();
        if (!outcome.isEmpty()) stats.finished(outcome, usage, ms);
        QObject::disconnect(j.onDisconnect);
        emit q->sessionFinished(j.requestId, j.client, outcome.isEmpty() ? QStringLiteral("error") : outcome);
        j.responder.reset();
        jobs.erase(j.key);
    }

    void clientGone(quint64 key) {
        auto it = jobs.find(key);
        if (it == jobs.end()) return;
        Job& j = *it->second;
        if (j.clientGone) return;
        j.clientGone = true;
        j.responder.reset();  // the socket is going away
        engine.cancel(j.requestId);  // pages come back now; the Cancelled event ends the job
    }

    QJsonObject statsJson() const { return stats.toJson(engine.cacheStatus(), int(jobs.size())); }

    // ------------------------------------------------------------ lifecycle

    bool start(QString* error, QString* warning) {
        if (http) return true;
        QHostAddress address;
        const QString host = opt.host.trimmed();
        if (host.isEmpty() || host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
            address = QHostAddress(QHostAddress::LocalHost);
        else if (!address.setAddress(host)) {
            if (error) *error = QStringLiteral("'%1' is not an IP address to listen on").arg(host);
            return false;
        }
        auto* server = new GuardedTcpServer(opt.maxBodyBytes, nullptr);
        if (!server->listen(address, opt.port)) {
            if (error)
                *error = QStringLiteral("cannot listen on %1:%2: %3").arg(host).arg(opt.port).arg(server->errorString());
            delete server;
            return false;
        }
        boundPort = server->serverPort();
        http = std::make_unique<HttpFront>(
            [this](const QHttpServerRequest& req, QTcpSocket* s, QHttpServerResponder&& r) { handle(req, s, std::move(r)); });
        http->bind(server);  // the HTTP server owns it from here
        tcp = server;
        if (warning) {
            warning->clear();
            if (!isLoopbackHost(host))
                *warning = QStringLiteral("Listening on %1:%2: other machines on the network can reach this endpoint%3.")
                               .arg(host)
                               .arg(boundPort)
                               .arg(opt.apiKey.isEmpty() ? QStringLiteral(", and no API key is set")
                                                         : QStringLiteral(" (an API key is required)"));
        }
        emit q->listeningChanged(true);
        return true;
    }

    void stop() {
        if (!http && jobs.empty()) return;
        // Requests in flight end now; their clients hear why when still connected.
        std::vector<quint64> keys;
        for (const auto& [k, j] : jobs) keys.push_back(k);
        for (quint64 k : keys) {
            auto it = jobs.find(k);
            if (it == jobs.end()) continue;
            Job& j = *it->second;
            engine.cancel(j.requestId);
            Event ev;
            ev.kind = Event::Kind::Cancelled;
            ev.text = "the server was stopped";
            cancelled(j, ev);
        }
        const bool was = http != nullptr;
        http.reset();  // closes the listener and every connection
        boundPort = 0;
        if (was) emit q->listeningChanged(false);
    }
};

ApiServer::ApiServer(Engine& engine, ServerOptions options, QObject* parent)
    : QObject(parent), d_(std::make_unique<Impl>(this, engine, std::move(options))) {}

ApiServer::~ApiServer() {
    {
        std::lock_guard<std::mutex> lock(d_->relay->mutex);
        d_->relay->target = nullptr;  // the engine thread posts nothing more
    }
    d_->stop();
}

bool ApiServer::start(QString* error, QString* warning) { return d_->start(error, warning); }
void ApiServer::stop() { d_->stop(); }
bool ApiServer::isListening() const { return d_->http != nullptr; }
quint16 ApiServer::port() const { return d_->boundPort; }
QString ApiServer::modelId() const { return d_->modelId; }
const ServerOptions& ApiServer::options() const { return d_->opt; }
int ApiServer::activeRequests() const { return int(d_->jobs.size()); }
QJsonObject ApiServer::statsJson() const { return d_->statsJson(); }
QJsonObject ApiServer::cacheStatusJson() const { return weir::server::cacheStatusJson(d_->engine.cacheStatus()); }

QString ApiServer::url() const {
    QString host = d_->opt.host.trimmed();
    QHostAddress a;
    if (host.isEmpty() || (a.setAddress(host) && (a == QHostAddress::AnyIPv4 || a == QHostAddress::AnyIPv6 ||
                                                   a == QHostAddress::Any)))
        host = QStringLiteral("127.0.0.1");
    else if (a.protocol() == QAbstractSocket::IPv6Protocol)
        host = QLatin1Char('[') + host + QLatin1Char(']');
    return QStringLiteral("http://%1:%2/v1").arg(host).arg(d_->boundPort ? d_->boundPort : d_->opt.port);
}

bool ApiServer::isLoopbackHost(const QString& host) {
    const QString h = host.trimmed();
    if (h.isEmpty() || h.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0) return true;
    QHostAddress a;
    return a.setAddress(h) && a.isLoopback();
}

} // namespace weir::server
