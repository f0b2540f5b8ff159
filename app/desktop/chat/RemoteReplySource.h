#pragma once
// Replies written by a remote OpenAI-compatible engine, turned into the
// events GenerationTracker follows for the local engine: text as it streams,
// then exactly one of finished (with the usage and the tool calls the server
// streamed), failed (the error in plain words) or cancelled. Each request gets
// its own client, so cancelling closes its connection and nothing else.
// Tickets carry kTicketBit, so they never meet the engine host's.
// A key the keyring has not given yet is read first (nothing waits for it);
// Stop while it is read ends the request at once, and the key, when it
// comes, finds nothing to start.
// A request that asked for a tool call (tool_choice "required") and was
// answered without one fails, its text kept: a server that does not hold a
// model to tool_choice (llama.cpp's, for some models) would otherwise pass
// prose off as the answer to a call the user forced.
#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "app/remote/remote_chat_client.h"
#include "remote/RemoteEnginesController.h"
#include "weir/engine.h"
#include "weir/tool_calls.h"

namespace weir::desktop {

class RemoteReplySource : public QObject {
    Q_OBJECT

public:
    static constexpr quint64 kTicketBit = quint64(1) << 63;
    static bool isRemoteTicket(quint64 ticket) { return (ticket & kTicketBit) != 0; }

    explicit RemoteReplySource(QObject* parent = nullptr);
    ~RemoteReplySource() override;

    void setClientOptions(const weir::remote::RemoteClientOptions& options) { options_ = options; }
    // Where keys not yet in memory are read (without it they go unread, as none).
    void setEngines(RemoteEnginesController* engines) { engines_ = engines; }

    // Starts `body` on the engine `engineName` (`target`: what its endpoint is
    // now, none when it was removed). A reply that cannot start fails on the
    // next turn of the event loop, after the caller has shown it.
    quint64 start(const QString& engineName, const std::optional<RemoteTarget>& target, const QJsonObject& body);
    // Ends the request with `cancelled` (its connection closes); unknown tickets are ignored.
    void cancel(quint64 ticket);
    int activeRequests() const { return int(requests_.size() + refused_.size()); }

signals:
    void tokens(quint64 ticket, const QString& text, int count);
    void finished(quint64 ticket, const weir::Usage& usage, const QString& finishReason,
                  const std::vector<weir::ToolCall>& calls);
    // `usage`: what the server reported (zero when it did not answer).
    void failed(quint64 ticket, const QString& message, const weir::Usage& usage);
    void cancelled(quint64 ticket);

private:
    struct PartialCall {
        QString id, name, arguments;
    };
    struct Request {
        std::unique_ptr<weir::remote::RemoteChatClient> client;  // none while the key is read
        QString engine, model;
        // The call the server was asked to make: the tool's name, empty for
        // any tool; none when the reply may answer in words.
        std::optional<QString> forcedCall;
        QJsonObject body;                  // until the request is sent
        quint64 clientId = 0;
        QElapsedTimer clock;
        double firstTokenMs = -1;
        bool inReasoning = false;          // a <think> block is open in the text
        std::map<int, PartialCall> calls;  // by the server's index
    };

    quint64 refuse(const QString& message);
    // Why a reply that finished without a call fails, for a forced one.
    QString missedCallMessage(const Request& r) const;
    void send(quint64 ticket, Request& r, const weir::remote::RemoteEndpoint& endpoint);
    void connectClient(quint64 ticket, weir::remote::RemoteChatClient* client);
    void onText(quint64 ticket, const QString& text, bool reasoning);
    void onFinished(quint64 ticket, const QString& finishReason, const weir::remote::RemoteUsage& usage);
    // The request ends: its client goes once its signal has returned.
    std::unique_ptr<Request> take(quint64 ticket);

    weir::remote::RemoteClientOptions options_;
    QPointer<RemoteEnginesController> engines_;
    quint64 next_ = 1;
    std::unordered_map<quint64, std::unique_ptr<Request>> requests_;
    QSet<quint64> refused_;  // failed at start, to be told on the next turn
};

} // namespace weir::desktop
