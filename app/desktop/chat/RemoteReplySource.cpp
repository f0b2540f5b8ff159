#include "chat/RemoteReplySource.h"

#include <QJsonArray>
#include <QTimer>
#include <algorithm>

namespace weir::desktop {
namespace {

// The call `body` asks the server to make: tool_choice "required" (a forced
// tool goes as that, with the tool alone offered: RemoteChatBody), or OpenAI's
// named function; none for "auto", "none" or no tools.
std::optional<QString> forcedCallOf(const QJsonObject& body) {
    const QJsonArray tools = body.value(QLatin1String("tools")).toArray();
    if (tools.isEmpty()) return std::nullopt;
    const QJsonValue choice = body.value(QLatin1String("tool_choice"));
    if (choice.isObject()) return choice[QLatin1String("function")][QLatin1String("name")].toString();
    if (choice.toString() != u"required") return std::nullopt;
    if (tools.size() == 1) return tools[0][QLatin1String("function")][QLatin1String("name")].toString();
    return QString();
}

} // namespace

using weir::remote::KeyRead;
using weir::remote::RemoteChatClient;
using weir::remote::RemoteError;
using weir::remote::RemoteUsage;

RemoteReplySource::RemoteReplySource(QObject* parent) : QObject(parent) {}

// The clients abort what still runs, without signals.
RemoteReplySource::~RemoteReplySource() = default;

quint64 RemoteReplySource::start(const QString& engineName, const std::optional<RemoteTarget>& target,
                                 const QJsonObject& body) {
    if (!target)
        return refuse(tr("The remote engine \u2018%1\u2019 no longer exists \u2014 choose another engine for this conversation")
                          .arg(engineName));
    if (target->model.isEmpty())
        return refuse(tr("The remote engine \u2018%1\u2019 has no model chosen \u2014 choose one in Settings \u203a Remote engines")
                          .arg(engineName));
    const quint64 ticket = kTicketBit | next_++;
    auto r = std::make_unique<Request>();
    r->engine = target->name;
    r->model = target->model;
    r->forcedCall = forcedCallOf(body);
    r->body = body;
    r->clock.start();
    Request& request = *requests_.emplace(ticket, std::move(r)).first->second;
    if (target->keyKnown || !engines_) {
        send(ticket, request, target->endpoint);
        return ticket;
    }
    // The key is in the keyring: the request goes when it answers.
    engines_->readApiKey(target->name, this, [this, ticket, endpoint = target->endpoint, name = target->name](const KeyRead& key) {
        auto it = requests_.find(ticket);
        if (it == requests_.end()) return;  // stopped while the key was read
        if (!key.ok) {
            take(ticket);
            emit failed(ticket, tr("Could not read the API key of the remote engine \u2018%1\u2019 from the system keyring: %2 "
                                   "\u2014 try again, or enter the key again in Settings \u203a Remote engines")
                                    .arg(name, key.problem),
                        Usage{});
            return;
        }
        weir::remote::RemoteEndpoint withKey = endpoint;
        withKey.apiKey = key.key;
        send(ticket, *it->second, withKey);
    });
    return ticket;
}

void RemoteReplySource::send(quint64 ticket, Request& r, const weir::remote::RemoteEndpoint& endpoint) {
    r.client = std::make_unique<RemoteChatClient>(endpoint, options_);
    connectClient(ticket, r.client.get());
    r.clientId = r.client->startChat(r.model, r.body);
    r.body = {};
}

quint64 RemoteReplySource::refuse(const QString& message) {
    const quint64 ticket = kTicketBit | next_++;
    refused_.insert(ticket);
    QTimer::singleShot(0, this, [this, ticket, message] {
        if (refused_.remove(ticket)) emit failed(ticket, message, Usage{});
    });
    return ticket;
}

void RemoteReplySource::cancel(quint64 ticket) {
    if (refused_.remove(ticket)) {
        emit cancelled(ticket);
        return;
    }
    auto it = requests_.find(ticket);
    if (it == requests_.end()) return;
    if (!it->second->client) {  // its key is still being read: nothing was sent
        take(ticket);
        emit cancelled(ticket);
        return;
    }
    // The client ends the request with `cancelled`, which ends it here too.
    it->second->client->cancel(it->second->clientId);
}

void RemoteReplySource::connectClient(quint64 ticket, RemoteChatClient* client) {
    connect(client, &RemoteChatClient::contentDelta, this,
            [this, ticket](quint64, const QString& text) { onText(ticket, text, false); });
    connect(client, &RemoteChatClient::reasoningDelta, this,
            [this, ticket](quint64, const QString& text) { onText(ticket, text, true); });
    connect(client, &RemoteChatClient::toolCallDelta, this,
            [this, ticket](quint64, int index, const QString& callId, const QString& name, const QString& part) {
                auto it = requests_.find(ticket);
                if (it == requests_.end()) return;
                PartialCall& call = it->second->calls[index];
                if (!callId.isEmpty()) call.id = callId;
                if (!name.isEmpty()) call.name = name;
                call.arguments += part;
            });
    connect(client, &RemoteChatClient::finished, this,
            [this, ticket](quint64, const QString& reason, const RemoteUsage& usage) { onFinished(ticket, reason, usage); });
    connect(client, &RemoteChatClient::failed, this, [this, ticket](quint64, const RemoteError& error) {
        if (take(ticket)) emit failed(ticket, error.message, Usage{});
    });
    connect(client, &RemoteChatClient::cancelled, this, [this, ticket](quint64) {
        if (take(ticket)) emit cancelled(ticket);
    });
}

void RemoteReplySource::onText(quint64 ticket, const QString& text, bool reasoning) {
    auto it = requests_.find(ticket);
    if (it == requests_.end() || text.isEmpty()) return;
    Request& r = *it->second;
    if (r.firstTokenMs < 0) r.firstTokenMs = double(r.clock.nsecsElapsed()) / 1e6;
    // Reasoning shows as the thinking block the local models write.
    QString piece;
    if (reasoning && !r.inReasoning) piece = QStringLiteral("<think>\n");
    else if (!reasoning && r.inReasoning) piece = QStringLiteral("\n</think>\n\n");
    r.inReasoning = reasoning;
    // A delta is about a token; the server's usage gives the true count at the end.
    emit tokens(ticket, piece + text, 1);
}

void RemoteReplySource::onFinished(quint64 ticket, const QString& finishReason, const RemoteUsage& remoteUsage) {
    std::unique_ptr<Request> r = take(ticket);
    if (!r) return;
    if (r->inReasoning) emit tokens(ticket, QStringLiteral("\n</think>\n"), 0);
    Usage usage;
    usage.promptTokens = int32_t(remoteUsage.promptTokens.value_or(0));
    usage.completionTokens = int32_t(remoteUsage.completionTokens.value_or(0));
    usage.cachedPromptTokens = int32_t(remoteUsage.cachedPromptTokens.value_or(0));
    usage.timeToFirstTokenMs = std::max(0.0, r->firstTokenMs);
    const double decodeMs = double(r->clock.nsecsElapsed()) / 1e6 - r->firstTokenMs;
    if (r->firstTokenMs >= 0 && usage.completionTokens > 1 && decodeMs > 0)
        usage.decodeTokensPerSecond = (usage.completionTokens - 1) * 1000.0 / decodeMs;
    std::vector<ToolCall> calls;
    for (const auto& [index, c] : r->calls) {
        if (c.name.isEmpty()) continue;  // a fragment with no function named is no call
        calls.push_back({c.id.toStdString(), c.name.toStdString(), c.arguments.toStdString()});
    }
    // A server that ignored tool_choice answered in words: not the call asked for.
    if (r->forcedCall && calls.empty()) {
        emit failed(ticket, missedCallMessage(*r), usage);
        return;
    }
    emit finished(ticket, usage, finishReason == u"length" ? QStringLiteral("length") : QStringLiteral("stop"), calls);
}

QString RemoteReplySource::missedCallMessage(const Request& r) const {
    const QString what = r.forcedCall->isEmpty()
                             ? tr("without calling a tool, which this reply was asked to do")
                             : tr("without calling \u201c%1\u201d, which this reply was asked to call").arg(*r.forcedCall);
    const QString kept = r.firstTokenMs >= 0 ? tr(" (its text is kept below)") : QString();
    return tr("The remote engine \u2018%1\u2019 answered %2%3. Its server may not support forced tool calls for the model %4.")
        .arg(r.engine, what, kept, r.model);
}

std::unique_ptr<RemoteReplySource::Request> RemoteReplySource::take(quint64 ticket) {
    auto it = requests_.find(ticket);
    if (it == requests_.end()) return nullptr;
    std::unique_ptr<Request> r = std::move(it->second);
    requests_.erase(it);
    // The client is inside its own signal: it goes when that has returned.
    if (r->client) r->client.release()->deleteLater();
    return r;
}

} // namespace weir::desktop
