#include "app/remote/remote_chat_client.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>

#include "app/remote/environment_proxy.h"
#include "app/remote/sse_parser.h"

namespace weir::remote {

namespace {

// An error body is read whole to quote it; past this it is not worth keeping.
constexpr qsizetype kMaxBodyBytes = 4 << 20;

std::optional<qint64> integerField(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isDouble()) return std::nullopt;
    return v.toInteger();
}

RemoteUsage usageOf(const QJsonObject& u) {
    RemoteUsage r;
    r.promptTokens = integerField(u, "prompt_tokens");
    r.completionTokens = integerField(u, "completion_tokens");
    r.cachedPromptTokens = integerField(u.value(QStringLiteral("prompt_tokens_details")).toObject(), "cached_tokens");
    return r;
}

RemoteModel modelOf(const QJsonObject& o) {
    RemoteModel m;
    m.id = o.value(QStringLiteral("id")).toString();
    m.ownedBy = o.value(QStringLiteral("owned_by")).toString();
    // vLLM: max_model_len; llama.cpp's server: meta.n_ctx_train; others: context_length / context_window.
    m.contextLength = integerField(o, "max_model_len");
    if (!m.contextLength) m.contextLength = integerField(o, "context_length");
    if (!m.contextLength) m.contextLength = integerField(o, "context_window");
    if (!m.contextLength) m.contextLength = integerField(o.value(QStringLiteral("meta")).toObject(), "n_ctx_train");
    return m;
}

} // namespace

struct RemoteChatClient::Call {
    quint64 id = 0;
    bool models = false;
    QString model;
    QByteArray body;
    QNetworkReply* reply = nullptr;
    std::unique_ptr<QTimer> timer;
    int attempt = 0;
    // Per attempt:
    SseParser sse;
    bool sent = false, headersSeen = false, streaming = false, timedOut = false;
    QByteArray whole;   // an error body, a models list, or an answer that was not streamed
    QString finishReason;
    RemoteUsage usage;
};

RemoteChatClient::RemoteChatClient(const RemoteEndpoint& endpoint, const RemoteClientOptions& options, QObject* parent)
    : QObject(parent), endpoint_(endpoint), options_(options) {
    qRegisterMetaType<weir::remote::RemoteUsage>();
    qRegisterMetaType<weir::remote::RemoteError>();
    qRegisterMetaType<QList<weir::remote::RemoteModel>>();
    endpoint_.baseUrl = normalizedBaseUrl(endpoint.baseUrl);
    hostPort_ = hostPortOf(endpoint_.baseUrl);
    if (options_.systemProxy) useEnvironmentProxy(nam_);
    else nam_.setProxy(QNetworkProxy::NoProxy);
}

RemoteChatClient::~RemoteChatClient() {
    for (auto& [id, c] : calls_) detachReply(*c, true);
}

QUrl RemoteChatClient::normalizedBaseUrl(const QUrl& base) {
    QUrl u = base;
    QString path = u.path();
    while (path.endsWith(QLatin1Char('/'))) path.chop(1);
    if (path.isEmpty()) path = QStringLiteral("/v1");
    u.setPath(path);
    return u;
}

QUrl RemoteChatClient::urlFor(const QString& path) const {
    QUrl u = endpoint_.baseUrl;
    u.setPath(u.path() + QLatin1Char('/') + path);
    return u;
}

quint64 RemoteChatClient::startChat(const QString& model, const QJsonObject& body) {
    auto c = std::make_unique<Call>();
    c->id = nextId_++;
    c->model = model;
    QJsonObject b = body;
    b.insert(QStringLiteral("model"), model);
    b.insert(QStringLiteral("stream"), true);
    // vLLM, SGLang, llama.cpp's server and Weir send the usage in a last chunk when asked.
    QJsonObject so = b.value(QStringLiteral("stream_options")).toObject();
    so.insert(QStringLiteral("include_usage"), true);
    b.insert(QStringLiteral("stream_options"), so);
    c->body = QJsonDocument(b).toJson(QJsonDocument::Compact);
    const quint64 id = c->id;
    Call& ref = *c;
    calls_.emplace(id, std::move(c));
    send(ref);
    return id;
}

quint64 RemoteChatClient::listModels() {
    auto c = std::make_unique<Call>();
    c->id = nextId_++;
    c->models = true;
    const quint64 id = c->id;
    Call& ref = *c;
    calls_.emplace(id, std::move(c));
    send(ref);
    return id;
}

void RemoteChatClient::send(Call& c) {
    c.sse = SseParser();
    c.sent = c.headersSeen = c.streaming = c.timedOut = false;
    c.whole.clear();
    c.finishReason.clear();
    c.usage = {};
    QNetworkRequest req(urlFor(c.models ? QStringLiteral("models") : QStringLiteral("chat/completions")));
    req.setRawHeader("Accept", c.models ? "application/json" : "text/event-stream");
    if (!endpoint_.apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + endpoint_.apiKey.toUtf8());
    // Our own timers decide; Qt's would fail a long but healthy stream.
    req.setTransferTimeout(0);
    if (c.models) {
        c.reply = nam_.get(req);
    } else {
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        c.reply = nam_.post(req, c.body);
    }
    const quint64 id = c.id;
    QNetworkReply* reply = c.reply;
    auto forThis = [this, id, reply](auto member) {
        return [this, id, reply, member] {
            auto it = calls_.find(id);
            if (it != calls_.end() && it->second->reply == reply) (this->*member)(*it->second);
        };
    };
    connect(reply, &QNetworkReply::requestSent, this, forThis(&RemoteChatClient::onSent));
    connect(reply, &QNetworkReply::metaDataChanged, this, forThis(&RemoteChatClient::onHeaders));
    connect(reply, &QNetworkReply::readyRead, this, forThis(&RemoteChatClient::onReadyRead));
    connect(reply, &QNetworkReply::finished, this, forThis(&RemoteChatClient::onFinished));
    if (!c.timer) {
        c.timer = std::make_unique<QTimer>();
        c.timer->setSingleShot(true);
        connect(c.timer.get(), &QTimer::timeout, this, [this, id] {
            auto it = calls_.find(id);
            if (it != calls_.end() && it->second->reply) onTimeout(*it->second);
        });
    }
    c.timer->start(options_.connectTimeoutMs);
}

void RemoteChatClient::onSent(Call& c) {
    if (c.sent || c.headersSeen) return;
    c.sent = true;
    c.timer->start(options_.readTimeoutMs);
}

void RemoteChatClient::onHeaders(Call& c) {
    if (c.headersSeen) return;
    const QVariant status = c.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid()) return;
    c.headersSeen = true;
    const QByteArray type = c.reply->header(QNetworkRequest::ContentTypeHeader).toByteArray().toLower();
    c.streaming = !c.models && status.toInt() == 200 && type.startsWith("text/event-stream");
    c.timer->start(options_.readTimeoutMs);
}

void RemoteChatClient::onReadyRead(Call& c) {
    onHeaders(c);
    c.timer->start(options_.readTimeoutMs);
    const QByteArray data = c.reply->readAll();
    if (!c.streaming) {
        if (c.whole.size() < kMaxBodyBytes) c.whole.append(data);
        return;
    }
    const quint64 id = c.id;
    for (const SseEvent& e : c.sse.feed(data)) {
        handleEvent(c, e.data);
        if (!calls_.count(id)) return;   // the event ended the request
    }
}

void RemoteChatClient::handleEvent(Call& c, const QByteArray& data) {
    if (data.trimmed() == "[DONE]") return complete(c);
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(data, &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        RemoteError e;
        e.kind = RemoteErrorKind::Protocol;
        e.message = QStringLiteral("%1 sent a stream event that is not JSON: %2")
                        .arg(hostPort_, QString::fromUtf8(data.left(200)));
        return fail(c, e);
    }
    const QJsonObject o = doc.object();
    if (o.contains(QStringLiteral("error"))) return fail(c, errorFromStreamEvent(o, c.model, hostPort_));
    if (o.value(QStringLiteral("usage")).isObject()) c.usage = usageOf(o.value(QStringLiteral("usage")).toObject());
    QString content, reasoning;
    QJsonArray toolCalls;
    for (const QJsonValue& cv : o.value(QStringLiteral("choices")).toArray()) {
        const QJsonObject choice = cv.toObject();
        if (choice.value(QStringLiteral("index")).toInt() != 0) continue;   // n > 1 is never asked for
        const QJsonObject delta = choice.value(QStringLiteral("delta")).toObject();
        content += delta.value(QStringLiteral("content")).toString();
        // vLLM and llama.cpp's server: reasoning_content; some others: reasoning.
        const QString r = delta.value(QStringLiteral("reasoning_content")).toString();
        reasoning += r.isEmpty() ? delta.value(QStringLiteral("reasoning")).toString() : r;
        for (const QJsonValue& tv : delta.value(QStringLiteral("tool_calls")).toArray()) toolCalls.append(tv);
        const QJsonValue fr = choice.value(QStringLiteral("finish_reason"));
        if (fr.isString() && !fr.toString().isEmpty()) c.finishReason = fr.toString();
    }
    // A slot may cancel the request: nothing of `c` is touched after the first signal.
    emitDeltas(c.id, content, reasoning, toolCalls);
}

bool RemoteChatClient::emitDeltas(quint64 id, const QString& content, const QString& reasoning, const QJsonArray& toolCalls) {
    auto alive = [this, id] { return calls_.count(id) > 0; };
    if (!reasoning.isEmpty()) {
        emit reasoningDelta(id, reasoning);
        if (!alive()) return false;
    }
    if (!content.isEmpty()) {
        emit contentDelta(id, content);
        if (!alive()) return false;
    }
    for (qsizetype i = 0; i < toolCalls.size(); ++i) {
        const QJsonObject t = toolCalls[i].toObject();
        const QJsonObject fn = t.value(QStringLiteral("function")).toObject();
        const int index = t.contains(QStringLiteral("index")) ? t.value(QStringLiteral("index")).toInt() : int(i);
        emit toolCallDelta(id, index, t.value(QStringLiteral("id")).toString(), fn.value(QStringLiteral("name")).toString(),
                           fn.value(QStringLiteral("arguments")).toString());
        if (!alive()) return false;
    }
    return true;
}

// An answer that came as one JSON object although a stream was asked for.
void RemoteChatClient::handleWholeAnswer(Call& c, const QByteArray& body) {
    // A stream sent without its text/event-stream type: read it as one.
    if (body.trimmed().startsWith("data:")) {
        const quint64 id = c.id;
        c.streaming = true;
        for (const SseEvent& e : c.sse.feed(body + "\n\n")) {
            handleEvent(c, e.data);
            if (!calls_.count(id)) return;
        }
        if (!c.finishReason.isEmpty()) return complete(c);
        RemoteError e;
        e.kind = RemoteErrorKind::StreamCut;
        e.httpStatus = 200;
        e.message = QStringLiteral("The connection to %1 ended before the answer finished (the text so far is kept).").arg(hostPort_);
        return fail(c, e);
    }
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    const QJsonObject o = doc.object();
    if (!doc.isObject() || !o.value(QStringLiteral("choices")).isArray()) {
        RemoteError e;
        e.kind = RemoteErrorKind::Protocol;
        e.httpStatus = 200;
        e.message = QStringLiteral("%1 answered with something that is not a chat completion: %2")
                        .arg(hostPort_, QString::fromUtf8(body.left(200)));
        return fail(c, e);
    }
    const quint64 id = c.id;
    const QJsonArray choices = o.value(QStringLiteral("choices")).toArray();
    const QJsonObject choice = choices.isEmpty() ? QJsonObject() : choices.first().toObject();
    const QJsonObject msg = choice.value(QStringLiteral("message")).toObject();
    c.finishReason = choice.value(QStringLiteral("finish_reason")).toString();
    c.usage = usageOf(o.value(QStringLiteral("usage")).toObject());
    if (!emitDeltas(id, msg.value(QStringLiteral("content")).toString(), msg.value(QStringLiteral("reasoning_content")).toString(),
                    msg.value(QStringLiteral("tool_calls")).toArray()))
        return;
    complete(*calls_.at(id));
}

void RemoteChatClient::onFinished(Call& c) {
    c.timer->stop();
    onHeaders(c);
    const int status = c.reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (c.timedOut) {
        RemoteError e;
        e.kind = RemoteErrorKind::Timeout;
        e.message = c.headersSeen ? QStringLiteral("%1 sent nothing for %2 s in the middle of the answer; the request was "
                                                   "stopped (the text so far is kept).")
                                        .arg(hostPort_)
                                        .arg(options_.readTimeoutMs / 1000.0)
                    : c.sent ? QStringLiteral("%1 took the request but did not answer within %2 s.")
                                   .arg(hostPort_)
                                   .arg(options_.readTimeoutMs / 1000.0)
                             : QStringLiteral("%1 did not take the request within %2 s.")
                                   .arg(hostPort_)
                                   .arg(options_.connectTimeoutMs / 1000.0);
        return fail(c, e);
    }
    if (status == 0) return fail(c, errorFromNetwork(int(c.reply->error()), c.reply->errorString(), hostPort_));
    const quint64 id = c.id;
    if (c.reply->bytesAvailable() > 0) {
        onReadyRead(c);
        if (!calls_.count(id)) return;
    }
    if (status == 200 && c.models) {
        const QJsonDocument doc = QJsonDocument::fromJson(c.whole);
        if (!doc.object().value(QStringLiteral("data")).isArray()) {
            RemoteError e;
            e.kind = RemoteErrorKind::Protocol;
            e.httpStatus = 200;
            e.message = QStringLiteral("%1 answered GET /models with something that is not a model list: %2")
                            .arg(hostPort_, QString::fromUtf8(c.whole.left(200)));
            return fail(c, e);
        }
        QList<RemoteModel> models;
        for (const QJsonValue& v : doc.object().value(QStringLiteral("data")).toArray()) models.append(modelOf(v.toObject()));
        detachReply(c, false);
        erase(id);
        emit modelsListed(id, models);
        return;
    }
    if (status == 200 && !c.streaming) return handleWholeAnswer(c, c.whole);
    if (status == 200) {
        // Some servers end the stream after the last choice without "[DONE]".
        if (!c.finishReason.isEmpty()) return complete(c);
        RemoteError e;
        e.kind = RemoteErrorKind::StreamCut;
        e.httpStatus = 200;
        e.serverMessage = c.reply->error() == QNetworkReply::NoError ? QString() : c.reply->errorString();
        e.message = QStringLiteral("The connection to %1 ended before the answer finished (the text so far is kept).").arg(hostPort_);
        return fail(c, e);
    }
    if ((status == 429 || status == 503) && c.attempt < options_.maxRetries) {
        QString why;
        if (const std::optional<int> wait = retryWaitMs(c, status, &why)) {
            ++c.attempt;
            detachReply(c, false);
            const int attempt = c.attempt;
            QTimer::singleShot(*wait, this, [this, id, attempt] {
                auto it = calls_.find(id);
                if (it != calls_.end() && !it->second->reply && it->second->attempt == attempt) send(*it->second);
            });
            emit retrying(id, attempt, *wait, why);
            return;
        }
        RemoteError e = errorFromHttp(status, c.whole, c.model, hostPort_);
        e.message = QStringLiteral("%1 is busy (HTTP %2) and %3, longer than the %4 s this client waits.%5")
                        .arg(hostPort_)
                        .arg(status)
                        .arg(why)
                        .arg(options_.maxRetryWaitMs / 1000)
                        .arg(e.serverMessage.isEmpty() ? QString() : QStringLiteral(" The server said: ") + e.serverMessage);
        return fail(c, e);
    }
    fail(c, errorFromHttp(status, c.whole, c.model, hostPort_));
}

std::optional<int> RemoteChatClient::retryWaitMs(Call& c, int status, QString* why) {
    const QByteArray header = c.reply->rawHeader("Retry-After").trimmed();
    qint64 waitMs = -1;
    if (!header.isEmpty()) {
        bool ok = false;
        const qint64 seconds = header.toLongLong(&ok);
        if (ok && seconds >= 0) {
            waitMs = seconds * 1000;
        } else {
            // An HTTP-date ("Fri, 04 Dec 2026 21:51:00 GMT"); Qt's RFC 2822 reader wants "+0000".
            QString text = QString::fromLatin1(header);
            if (text.endsWith(QLatin1String(" GMT"))) text = text.chopped(4) + QStringLiteral(" +0000");
            const QDateTime when = QDateTime::fromString(text, Qt::RFC2822Date);
            if (when.isValid()) waitMs = std::max<qint64>(0, QDateTime::currentDateTimeUtc().msecsTo(when));
        }
    }
    if (waitMs >= 0) {
        *why = QStringLiteral("asked to retry after %1 s").arg(waitMs / 1000.0);
    } else {
        waitMs = qint64(options_.backoffMs) << std::min(c.attempt, 20);
        *why = QStringLiteral("answered HTTP %1; retrying in %2 s").arg(status).arg(waitMs / 1000.0);
    }
    if (waitMs > options_.maxRetryWaitMs) return std::nullopt;
    return int(waitMs);
}

void RemoteChatClient::onTimeout(Call& c) {
    c.timedOut = true;
    const quint64 id = c.id;
    QPointer<QNetworkReply> reply = c.reply;
    reply->abort();   // Qt answers with finished(), which ends the request as a timeout
    auto it = calls_.find(id);
    if (it != calls_.end() && it->second->reply == reply) onFinished(*it->second);
}

void RemoteChatClient::complete(Call& c) {
    const quint64 id = c.id;
    const QString reason = c.finishReason;
    const RemoteUsage usage = c.usage;
    detachReply(c, false);
    erase(id);
    emit finished(id, reason, usage);
}

void RemoteChatClient::fail(Call& c, const RemoteError& e) {
    const quint64 id = c.id;
    detachReply(c, true);
    erase(id);
    emit failed(id, e);
}

void RemoteChatClient::cancel(quint64 id) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    detachReply(*it->second, true);
    erase(id);
    emit cancelled(id);
}

void RemoteChatClient::detachReply(Call& c, bool abort) {
    if (c.timer) c.timer->stop();
    QNetworkReply* r = c.reply;
    c.reply = nullptr;
    if (!r) return;
    disconnect(r, nullptr, this, nullptr);
    if (abort && r->isRunning()) r->abort();   // closes the connection: the server stops generating
    if (r->isFinished()) r->deleteLater();
    else connect(r, &QNetworkReply::finished, r, &QObject::deleteLater);
}

void RemoteChatClient::erase(quint64 id) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    // The timer may be the one whose signal is running now.
    if (it->second->timer) it->second->timer.release()->deleteLater();
    calls_.erase(it);
}

} // namespace weir::remote
