#pragma once
// The replies being written: one engine request each, what streamed so far
// and where the request stands (queued, prefilling, decoding). It turns the
// engine host's events into per-reply state and ends every request with
// exactly one `ended`: the engine's finished, failed or cancelled, or endNow
// when the app gives a reply up first; whatever the engine says after that
// finds nothing. Agent replies are read for tool calls as they stream.
// A conversation on a remote engine has its replies written there
// (RemoteReplySource), followed the same way.
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <memory>
#include <vector>

#include "chat/RemoteReplySource.h"
#include "engine_host/EngineInboxes.h"
#include "storage/Records.h"
#include "weir/engine.h"
#include "weir/tool_calls.h"

namespace weir::desktop {

class EngineHost;
struct ReplyPlan;

struct LiveReply {
    qint64 conversationId = 0, messageId = 0;
    quint64 ticket = 0;
    QString text;
    int tokens = 0;
    bool dirty = false;       // text not yet in the database
    bool viewDirty = false;   // text not yet in the message model
    bool saveFailed = false;  // the last attempt to save the text failed
    QElapsedTimer clock;
    double firstTokenMs = -1;
    // "preparing" while the engine host renders and tokenizes the prompt (a
    // prompt with tools can take seconds) and the engine has not seen the
    // request; then the engine's own state: "waiting", "prefill", "decode".
    QString activity = QStringLiteral("preparing");
    int queuePosition = 0;
    std::vector<qint64> turnIds;  // per turn sent: its first message (0: the system prompt)
    int promptTokens = 0;         // from promptPrepared
    qint64 contextFromId = 0;     // the first message sent after the system prompt, when some were not
    // Continue: the reply already had text and usage; the new part adds to them.
    bool continuing = false;
    int basePromptTokens = 0, baseCompletionTokens = 0, baseCachedTokens = 0;
    int baseDraftTokens = 0, baseAcceptedDraftTokens = 0;
    // Agent replies: read for tool calls.
    bool agent = false;
    bool forced = false;          // held to the forced-call JSON (read at the end)
    bool answerOnly = false;      // tool_choice none: the tools' results are in, answer now
    bool callsComplete = false;   // the reader has the reply's calls: stopped there, not cancelled
    int step = 0;                 // replies of this loop before this one
    QString raw;                  // forced: the JSON as it streams
    std::shared_ptr<ToolCallHandoff> handoff;
    std::shared_ptr<ToolCallReader> reader;
    std::vector<ToolCall> calls;  // read so far
    bool remote = false;          // written by a remote engine: its calls come whole at the end
};

// The record an ended reply is stored as: `stored` (as the database has it)
// with the reply's text, state and usage. A continued reply adds this part's
// tokens to what it had.
MessageRecord endedReplyRecord(MessageRecord stored, const LiveReply& reply, MessageState state, const QString& error,
                               const weir::Usage* usage, const QString& finishReason);

class GenerationTracker : public QObject {
    Q_OBJECT

public:
    explicit GenerationTracker(EngineHost* engine, QObject* parent = nullptr);

    // Submits `plan` for the stored reply plan.reply and follows it; `step`:
    // replies of its agent loop before it.
    const LiveReply& start(qint64 conversationId, const ReplyPlan& plan, int step);
    // The same on the remote engine `engineName` (`target`: its endpoint now,
    // none when it was removed; the reply then fails at once), with `body`
    // the OpenAI request (RemoteChatBody.h).
    const LiveReply& startRemote(qint64 conversationId, const ReplyPlan& plan, int step, const QString& engineName,
                                 const std::optional<RemoteTarget>& target, const QJsonObject& body);
    // The remote engines: their client options, and where keys are read.
    void setRemoteEngines(RemoteEnginesController* engines) {
        remote_.setEngines(engines);
        if (engines) remote_.setClientOptions(engines->clientOptions());
    }
    LiveReply* forConversation(qint64 conversationId);
    const LiveReply* forConversation(qint64 conversationId) const;
    int count() const { return int(replies_.size()); }
    bool isEmpty() const { return replies_.isEmpty(); }
    // Every live reply, for the save and repaint ticks.
    QList<LiveReply*> all();
    QList<const LiveReply*> all() const;

    void cancel(qint64 conversationId);
    void cancelAll();
    // Cancels the reply and ends it now, without waiting for the engine.
    void endNow(quint64 ticket);
    // The context the engine reported with its latest prompt.
    int lastContextTokens() const { return lastContextTokens_; }

signals:
    void tokensArrived(const LiveReply& reply);
    // The reply's request changed state ("waiting" with its place in the queue, "prefill", "decode").
    void activityChanged(const LiveReply& reply);
    // The prompt is rendered: promptTokens and contextFromId are known.
    void promptPrepared(const LiveReply& reply);
    // The one terminal event of a reply, which is no longer live. `usage` is
    // null when the reply was ended by endNow.
    void ended(const LiveReply& reply, MessageState state, const QString& error, const weir::Usage* usage,
               const QString& finishReason);

private:
    LiveReply prepare(qint64 conversationId, const ReplyPlan& plan, int step) const;
    // Cancels at the engine, local or remote, that runs the ticket.
    void cancelTicket(quint64 ticket);
    void onTokens(quint64 ticket, const QString& text, int count);
    void onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens);
    void onStatus(const CacheStatus& status);
    void end(quint64 ticket, MessageState state, const QString& error, const Usage* usage,
             const QString& finishReason = {});
    void readAgentText(LiveReply& g, const QString& text);
    void readAgentReply(LiveReply& g);
    void setActivity(LiveReply& g, const QString& activity, int queuePosition);

    EngineHost* engine_;
    RemoteReplySource remote_;
    QHash<quint64, LiveReply> replies_;  // by ticket
    int lastContextTokens_ = 0;
};

} // namespace weir::desktop
