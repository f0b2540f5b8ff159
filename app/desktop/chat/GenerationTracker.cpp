#include "chat/GenerationTracker.h"

#include "app/common/forced_tool_call.h"
#include "chat/ReplyPlanner.h"
#include "engine_host/ClientTags.h"
#include "engine_host/EngineHost.h"

namespace weir::desktop {

MessageRecord endedReplyRecord(MessageRecord m, const LiveReply& g, MessageState state, const QString& error,
                               const Usage* usage, const QString& finishReason) {
    m.id = g.messageId;
    m.conversationId = g.conversationId;
    m.role = QStringLiteral("assistant");
    m.content = g.text;
    m.state = state;
    m.error = error;
    m.finishReason = finishReason;
    m.contextFromId = g.contextFromId;
    m.completionTokens = g.tokens;
    m.timeToFirstTokenMs = std::max(0.0, g.firstTokenMs);
    m.draftTokens = m.acceptedDraftTokens = 0;  // this part's, from the engine; a continued reply adds its base below
    // A reply ended by an unload or reload comes with no figures: keep the
    // prompt and the tokens counted as they streamed.
    if (g.promptTokens > 0 && (!usage || usage->promptTokens == 0)) m.promptTokens = g.promptTokens;
    if (usage && (usage->promptTokens > 0 || usage->completionTokens > 0)) {
        m.promptTokens = usage->promptTokens;
        m.completionTokens = usage->completionTokens;
        m.cachedTokens = usage->cachedPromptTokens;
        if (usage->timeToFirstTokenMs > 0) m.timeToFirstTokenMs = usage->timeToFirstTokenMs;
        m.tokensPerSecond = usage->decodeTokensPerSecond;
        m.draftTokens = usage->draftTokens;
        m.acceptedDraftTokens = usage->acceptedDraftTokens;
    }
    if (g.continuing) {
        // One reply written in parts: the first prompt (and what of it was
        // cached: a later part's prompt holds the reply so far), and every
        // part's tokens.
        if (g.basePromptTokens > 0) {
            m.promptTokens = g.basePromptTokens;
            m.cachedTokens = std::min(g.baseCachedTokens, g.basePromptTokens);
        }
        m.completionTokens += g.baseCompletionTokens;
        m.draftTokens += g.baseDraftTokens;
        m.acceptedDraftTokens += g.baseAcceptedDraftTokens;
    }
    if (m.tokensPerSecond <= 0 && g.tokens > 1 && g.firstTokenMs >= 0) {
        const double decodeMs = double(g.clock.nsecsElapsed()) / 1e6 - g.firstTokenMs;
        if (decodeMs > 0) m.tokensPerSecond = (g.tokens - 1) * 1000.0 / decodeMs;
    }
    return m;
}

GenerationTracker::GenerationTracker(EngineHost* engine, QObject* parent) : QObject(parent), engine_(engine) {
    connect(engine_, &EngineHost::tokens, this, &GenerationTracker::onTokens);
    connect(engine_, &EngineHost::finished, this, [this](quint64 t, const Usage& u, FinishReason reason) {
        end(t, MessageState::Complete, {}, &u, reason == FinishReason::Length ? QStringLiteral("length") : QStringLiteral("stop"));
    });
    connect(engine_, &EngineHost::failed, this,
            [this](quint64 t, const QString& message, const Usage& u) { end(t, MessageState::Failed, message, &u); });
    connect(engine_, &EngineHost::cancelled, this,
            [this](quint64 t, const Usage& u) { end(t, MessageState::Cancelled, {}, &u); });
    connect(engine_, &EngineHost::promptPrepared, this, &GenerationTracker::onPromptPrepared);
    connect(engine_, &EngineHost::statusUpdated, this, &GenerationTracker::onStatus);
    connect(&remote_, &RemoteReplySource::tokens, this, &GenerationTracker::onTokens);
    connect(&remote_, &RemoteReplySource::finished, this,
            [this](quint64 t, const Usage& u, const QString& reason, const std::vector<ToolCall>& calls) {
                if (auto it = replies_.find(t); it != replies_.end()) it->calls = calls;
                end(t, MessageState::Complete, {}, &u, reason);
            });
    connect(&remote_, &RemoteReplySource::failed, this,
            [this](quint64 t, const QString& message, const Usage& u) { end(t, MessageState::Failed, message, &u); });
    connect(&remote_, &RemoteReplySource::cancelled, this,
            [this](quint64 t) { end(t, MessageState::Cancelled, {}, nullptr); });
}

LiveReply GenerationTracker::prepare(qint64 conversationId, const ReplyPlan& plan, int step) const {
    LiveReply g;
    g.conversationId = conversationId;
    g.messageId = plan.reply.id;
    g.turnIds = plan.turnIds;
    g.agent = plan.agent;
    g.step = step;
    g.forced = plan.forced;
    g.answerOnly = plan.agent && plan.answerOnly;
    if (plan.prompt.continueLast) {
        g.continuing = true;
        g.text = plan.reply.content;
        g.basePromptTokens = plan.reply.promptTokens;
        g.baseCachedTokens = plan.reply.cachedTokens;
        g.baseCompletionTokens = plan.reply.completionTokens;
        g.baseDraftTokens = plan.reply.draftTokens;
        g.baseAcceptedDraftTokens = plan.reply.acceptedDraftTokens;
    }
    g.clock.start();
    return g;
}

const LiveReply& GenerationTracker::startRemote(qint64 conversationId, const ReplyPlan& plan, int step,
                                                const QString& engineName, const std::optional<RemoteTarget>& target,
                                                const QJsonObject& body) {
    LiveReply g = prepare(conversationId, plan, step);
    g.remote = true;
    g.forced = false;  // the server's tool_choice forces the call; it comes back as a call
    g.ticket = remote_.start(engineName, target, body);
    return *replies_.insert(g.ticket, g);
}

const LiveReply& GenerationTracker::start(qint64 conversationId, const ReplyPlan& plan, int step) {
    LiveReply g = prepare(conversationId, plan, step);
    if (plan.agent) {
        // The worker hands over the reader of the model's tool-call syntax here.
        g.handoff = ToolCallHandoff::create(common::Keep::Latest);
        g.ticket = engine_->submitChat(conversationTag(conversationId), plan.chat, plan.request, plan.prompt, g.handoff);
    } else {
        g.ticket = engine_->submit(conversationTag(conversationId), plan.turns, plan.request, plan.prompt);
    }
    return *replies_.insert(g.ticket, g);
}

LiveReply* GenerationTracker::forConversation(qint64 conversationId) {
    for (auto& g : replies_)
        if (g.conversationId == conversationId) return &g;
    return nullptr;
}

const LiveReply* GenerationTracker::forConversation(qint64 conversationId) const {
    for (const auto& g : replies_)
        if (g.conversationId == conversationId) return &g;
    return nullptr;
}

QList<LiveReply*> GenerationTracker::all() {
    QList<LiveReply*> out;
    for (auto& g : replies_) out << &g;
    return out;
}

QList<const LiveReply*> GenerationTracker::all() const {
    QList<const LiveReply*> out;
    for (const auto& g : replies_) out << &g;
    return out;
}

void GenerationTracker::cancelTicket(quint64 ticket) {
    if (RemoteReplySource::isRemoteTicket(ticket)) remote_.cancel(ticket);
    else engine_->cancel(ticket);
}

void GenerationTracker::cancel(qint64 conversationId) {
    if (LiveReply* g = forConversation(conversationId)) cancelTicket(g->ticket);
}

void GenerationTracker::cancelAll() {
    // A remote cancel ends its reply at once: cancel from a copy of the tickets.
    const QList<quint64> tickets = replies_.keys();
    for (const quint64 ticket : tickets) cancelTicket(ticket);
}

void GenerationTracker::endNow(quint64 ticket) {
    cancelTicket(ticket);
    end(ticket, MessageState::Cancelled, {}, nullptr);
}

void GenerationTracker::readAgentText(LiveReply& g, const QString& text) {
    // The model's own call syntax is held back by the reader; only text shows.
    if (!g.reader && g.handoff) g.reader = g.handoff->take().value_or(nullptr);
    if (g.callsComplete) return;  // tokens already on their way when the reply was stopped after its calls
    if (!g.reader) {
        g.text += text;
        return;
    }
    ToolCallReader::Output out = g.reader->push(text.toStdString());
    for (ToolCall& call : out.calls) g.calls.push_back(std::move(call));
    g.text += QString::fromStdString(out.text);
    // Nothing after the calls belongs to the reply: stop generating.
    if (g.reader->done()) {
        g.callsComplete = true;
        engine_->cancel(g.ticket);
    }
}

void GenerationTracker::onTokens(quint64 ticket, const QString& text, int count) {
    auto it = replies_.find(ticket);
    if (it == replies_.end()) return;
    LiveReply& g = it.value();
    if (g.firstTokenMs < 0) g.firstTokenMs = double(g.clock.nsecsElapsed()) / 1e6;
    if (g.agent && !g.forced) readAgentText(g, text);
    else if (g.forced) g.raw += text;
    else g.text += text;
    g.tokens += count;
    g.dirty = g.viewDirty = true;
    if (g.activity != u"decode") setActivity(g, QStringLiteral("decode"), 0);
    emit tokensArrived(g);
}

void GenerationTracker::setActivity(LiveReply& g, const QString& activity, int queuePosition) {
    g.activity = activity;
    g.queuePosition = queuePosition;
    emit activityChanged(g);
}

void GenerationTracker::onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens) {
    lastContextTokens_ = contextTokens;
    auto it = replies_.find(ticket);
    if (it == replies_.end()) return;
    LiveReply& g = it.value();
    g.promptTokens = promptTokens;
    // Turns before firstTurn (after the system prompt) were left out.
    const size_t systemTurns = !g.turnIds.empty() && g.turnIds.front() == 0 ? 1 : 0;
    g.contextFromId = size_t(firstTurn) > systemTurns && size_t(firstTurn) < g.turnIds.size() ? g.turnIds[firstTurn] : 0;
    emit promptPrepared(g);
}

void GenerationTracker::onStatus(const CacheStatus& status) {
    // The engine lists waiting requests in queue order.
    QHash<qint64, QPair<QString, int>> seen;
    int waiting = 0;
    for (const RequestStatus& r : status.requests) {
        const qint64 conv = conversationOf(r.tag);
        if (!conv) continue;
        const QString state = QString::fromUtf8(requestStateName(r.state));
        seen.insert(conv, {state, r.state == RequestState::Waiting ? ++waiting : 0});
    }
    for (auto& g : replies_) {
        auto it = seen.find(g.conversationId);
        if (it == seen.end() || (g.activity == it->first && g.queuePosition == it->second)) continue;
        setActivity(g, it->first, it->second);
    }
}

void GenerationTracker::readAgentReply(LiveReply& g) {
    if (g.forced) {
        // Held to the call's JSON: it is a call, or (cut short) shown as it came.
        if (std::optional<ToolCall> call = common::readForcedCall(g.raw.toStdString())) g.calls.push_back(std::move(*call));
        else g.text = g.raw;
        return;
    }
    if (!g.reader && g.handoff) g.reader = g.handoff->take().value_or(nullptr);
    if (!g.reader) return;
    ToolCallReader::Output out = g.reader->finish();
    for (ToolCall& call : out.calls) g.calls.push_back(std::move(call));
    g.text += QString::fromStdString(out.text);
}

void GenerationTracker::end(quint64 ticket, MessageState state, const QString& error, const Usage* usage,
                            const QString& finishReason) {
    auto it = replies_.find(ticket);
    if (it == replies_.end()) return;  // ended already: one terminal event per request
    LiveReply g = it.value();
    replies_.erase(it);
    if (g.callsComplete && state == MessageState::Cancelled) state = MessageState::Complete;
    if (g.agent && state == MessageState::Complete) readAgentReply(g);
    else if (g.forced && g.text.isEmpty()) g.text = g.raw;
    emit ended(g, state, error, usage, finishReason);
}

} // namespace weir::desktop
