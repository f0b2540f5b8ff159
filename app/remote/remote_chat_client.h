#pragma once
// The client of a remote OpenAI-compatible engine (vLLM, SGLang, llama.cpp's
// server, Ollama, another Weir): POST {base}/chat/completions with
// "stream": true, read as server-sent events, and GET {base}/models.
//
// Every request started ends in exactly one terminal signal: finished (with
// the usage when the server sent it), failed (an error in plain words), or
// cancelled; models requests end in modelsListed or failed. Deltas of the
// content, the reasoning and the tool calls come before it. Cancelling aborts
// the reply, which closes the connection, so the server stops generating.
// 429 and 503 are retried with backoff, honouring Retry-After; a request that
// cannot be sent within connectTimeoutMs, or then waits readTimeoutMs for
// the answer's headers or inside its stream, fails as a timeout. (A server may
// hold its headers back while it reads a long prompt or writes a tool call it
// sends whole, as weir serve does: that wait is the server working, not a
// connection that failed.) The proxy comes from the environment
// (http_proxy, https_proxy, no_proxy) unless the options say otherwise.
// Destroying the client aborts what still runs, without signals.
#include <QJsonObject>
#include <QList>
#include <QNetworkAccessManager>
#include <QObject>
#include <QString>
#include <QUrl>
#include <memory>
#include <optional>
#include <unordered_map>

#include "app/remote/remote_error.h"

class QNetworkReply;
class QTimer;

namespace weir::remote {

struct RemoteEndpoint {
    QUrl baseUrl;     // the OpenAI base, e.g. http://gpu-box:8000/v1 ("/v1" is added to a bare host)
    QString apiKey;   // sent as "Authorization: Bearer"; none when empty
};

struct RemoteClientOptions {
    int connectTimeoutMs = 15000;    // until the request is sent
    int readTimeoutMs = 120000;      // the longest silence after that: before the headers, inside a stream
    int maxRetries = 3;              // extra tries after a 429 or 503
    int backoffMs = 1000;            // first wait when the server gives no Retry-After; doubles per try
    int maxRetryWaitMs = 60000;      // a longer Retry-After fails the request instead of waiting
    bool systemProxy = true;         // proxy settings from the environment
};

struct RemoteUsage {
    std::optional<qint64> promptTokens, completionTokens, cachedPromptTokens;
};

struct RemoteModel {
    QString id;
    QString ownedBy;
    std::optional<qint64> contextLength;   // vLLM's max_model_len, llama.cpp's n_ctx_train, ...
};

class RemoteChatClient : public QObject {
    Q_OBJECT
public:
    explicit RemoteChatClient(const RemoteEndpoint& endpoint, const RemoteClientOptions& options = {},
                              QObject* parent = nullptr);
    ~RemoteChatClient() override;

    // `body` holds the chat request's fields (messages, tools, tool_choice,
    // response_format, max_tokens, ...); model, stream and stream_options are
    // set here. Returns the request's id (never 0).
    quint64 startChat(const QString& model, const QJsonObject& body);
    quint64 listModels();
    // Ends the request with `cancelled` (once; no other terminal signal follows).
    // Unknown or finished ids are ignored.
    void cancel(quint64 id);
    int activeRequests() const { return int(calls_.size()); }

    // {base}/path for this endpoint.
    QUrl urlFor(const QString& path) const;
    static QUrl normalizedBaseUrl(const QUrl& base);

signals:
    void contentDelta(quint64 id, const QString& text);
    void reasoningDelta(quint64 id, const QString& text);
    // One piece of tool call `index`: the id and name arrive once, the
    // arguments in fragments to append.
    void toolCallDelta(quint64 id, int index, const QString& callId, const QString& name, const QString& argumentsPart);
    void retrying(quint64 id, int attempt, int waitMs, const QString& why);
    void finished(quint64 id, const QString& finishReason, const weir::remote::RemoteUsage& usage);
    void modelsListed(quint64 id, const QList<weir::remote::RemoteModel>& models);
    void failed(quint64 id, const weir::remote::RemoteError& error);
    void cancelled(quint64 id);

private:
    struct Call;
    void send(Call& c);
    void onSent(Call& c);      // the request is out: the server is working on it
    void onHeaders(Call& c);
    void onReadyRead(Call& c);
    void onFinished(Call& c);
    void onTimeout(Call& c);
    void handleEvent(Call& c, const QByteArray& data);
    void handleWholeAnswer(Call& c, const QByteArray& body);
    // False when a slot ended the request on the way.
    bool emitDeltas(quint64 id, const QString& content, const QString& reasoning, const class QJsonArray& toolCalls);
    void complete(Call& c);
    void fail(Call& c, const RemoteError& e);
    void detachReply(Call& c, bool abort);
    void erase(quint64 id);
    std::optional<int> retryWaitMs(Call& c, int status, QString* why);

    RemoteEndpoint endpoint_;
    RemoteClientOptions options_;
    QNetworkAccessManager nam_;
    QString hostPort_;
    quint64 nextId_ = 1;
    std::unordered_map<quint64, std::unique_ptr<Call>> calls_;
};

} // namespace weir::remote

Q_DECLARE_METATYPE(weir::remote::RemoteUsage)
Q_DECLARE_METATYPE(weir::remote::RemoteError)
Q_DECLARE_METATYPE(QList<weir::remote::RemoteModel>)
