#include "chat/ChatController.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QLocale>
#include <QRandomGenerator>
#include <algorithm>
#include <limits>

#include "chat/AgentTurns.h"
#include "chat/ConversationTitle.h"
#include "chat/RemoteChatBody.h"
#include "engine_host/EngineHost.h"
#include "remote/RemoteEnginesController.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

namespace weir::desktop {

ChatController::ChatController(Storage* storage, EngineHost* engine, QObject* parent)
    : QObject(parent), storage_(storage), engine_(engine), replies_(engine), saver_(storage, &replies_),
      toolCalls_(storage, nullptr), list_(storage, &replies_) {
    // Replies on screen are repainted at most ~30 times a second however fast
    // tokens come, which keeps Markdown re-layout off the frame budget.
    viewTimer_.setInterval(33);
    viewTimer_.setSingleShot(true);
    connect(&viewTimer_, &QTimer::timeout, this, &ChatController::flushView);
    connect(engine_, &EngineHost::stateChanged, this, &ChatController::contextUsageChanged);
    connectReplies();
    connectParts();
}

ChatController::~ChatController() {
    // Keep what was generated; the next start marks these replies interrupted.
    saver_.saveNow();
}

void ChatController::connectReplies() {
    connect(&replies_, &GenerationTracker::activityChanged, this, [this](const LiveReply& g) {
        list_.model()->setActivity(g.conversationId, g.activity, g.queuePosition);
        if (g.conversationId != currentId()) return;
        messages_.setActivity(g.messageId, g.activity, g.queuePosition);
        emit generationsChanged();
    });
    connect(&replies_, &GenerationTracker::tokensArrived, this, [this](const LiveReply& g) {
        if (g.conversationId == currentId() && !viewTimer_.isActive()) viewTimer_.start();
        emit replyTokens(g.conversationId, g.tokens);
    });
    connect(&replies_, &GenerationTracker::promptPrepared, this, [this](const LiveReply& g) {
        if (g.conversationId != currentId()) return;
        messages_.setContextStart(g.contextFromId);
        emit contextUsageChanged();
    });
    connect(&replies_, &GenerationTracker::ended, this, &ChatController::onReplyEnded);
}

void ChatController::connectParts() {
    connect(&saver_, &ReplySaver::replySaved, this, &ChatController::replySaved);
    connect(&saver_, &ReplySaver::problemChanged, this, &ChatController::saveProblemChanged);
    connect(&saver_, &ReplySaver::notice, this, &ChatController::notice);
    connect(&saver_, &ReplySaver::savedChanged, this, [this](qint64 conversationId, qint64 messageId, bool saved) {
        if (conversationId == currentId()) messages_.setSaved(messageId, saved);
    });
    connect(&toolCalls_, &ToolCallRunner::toolCallChanged, this, &ChatController::toolCallChanged);
    connect(&toolCalls_, &ToolCallRunner::storageFailed, this, &ChatController::storageFailed);
    connect(&toolCalls_, &ToolCallRunner::finished, this, &ChatController::continueAgent);
    connect(&toolCalls_, &ToolCallRunner::callsChanged, this, [this](qint64 conversationId, qint64 messageId) {
        if (conversationId == currentId()) showToolCalls(messageId);
    });
    connect(&list_, &ConversationController::messagesChanged, this, [this](qint64 id) {
        if (id == currentId()) showMessages();
    });
    connect(&list_, &ConversationController::currentChanged, this, &ChatController::currentChanged);
    connect(this, &ChatController::currentChanged, this, &ChatController::askRemoteContext);
    // The messages were shown before the opened conversation's settings were
    // read: its engine, and so its context, is known only now.
    connect(this, &ChatController::currentChanged, this, &ChatController::contextUsageChanged);
    connect(&list_, &ConversationController::selected, this, &ChatController::generationsChanged);
    connect(&list_, &ConversationController::removing, this, &ChatController::stopConversation);
    connect(&list_, &ConversationController::searchTextChanged, this, &ChatController::searchTextChanged);
    connect(&list_, &ConversationController::undoChanged, this, &ChatController::undoChanged);
    connect(&list_, &ConversationController::notice, this, &ChatController::notice);
}

QString ChatController::currentActivity() const {
    const LiveReply* g = replies_.forConversation(currentId());
    return g ? g->activity : QString();
}

void ChatController::storageFailed(const QString& what) {
    emit notice(what + QStringLiteral(": ") + storage_->lastError(), true);
}

void ChatController::databaseReplaced() {
    saver_.clear();
    list_.reload();
    select(conversations()->count() > 0 ? conversations()->idAt(0) : 0);
}

void ChatController::showMessages() {
    const qint64 id = currentId();
    showBranch(id ? storage_->messages(id) : QList<MessageRecord>{});
}

void ChatController::showBranch(const QList<MessageRecord>& branch) {
    const qint64 id = currentId();
    messages_.setMessages(branch);
    for (const MessageRecord& m : branch)
        if (m.role == u"assistant") showToolCalls(m.id);
    // Replies the database has not taken yet show as they are, not as stored.
    for (MessageRecord m : saver_.unsaved()) {
        if (m.conversationId != id) continue;
        if (const MessageRecord* shown = messages_.record(m.id)) {
            m.versionIndex = shown->versionIndex;
            m.versionCount = shown->versionCount;
        }
        messages_.update(m);
        messages_.setSaved(m.id, false);
    }
    // A reply streaming in this conversation shows its latest text at once.
    if (LiveReply* g = replies_.forConversation(id)) {
        messages_.setContent(g->messageId, g->text);
        messages_.setActivity(g->messageId, g->activity, g->queuePosition);
        if (g->saveFailed) messages_.setSaved(g->messageId, false);
        if (g->promptTokens > 0) messages_.setContextStart(g->contextFromId);
        g->viewDirty = false;
    }
    emit contextUsageChanged();
}

void ChatController::showToolCalls(qint64 messageId) {
    if (!messages_.record(messageId)) return;
    // Calls of a loop in progress show their live state.
    const std::optional<QList<ToolCallRecord>> live = toolCalls_.liveCalls(messageId);
    const QList<ToolCallRecord> calls = live ? *live : storage_->toolCalls(messageId);
    QVariantList list;
    for (const ToolCallRecord& c : calls) list << toolCallMap(c);
    messages_.setToolCalls(messageId, list);
}

bool ChatController::send(const QString& text) {
    qint64 id = currentId();
    if (id == 0) id = newConversation();
    return id != 0 && sendTo(id, text);
}

bool ChatController::sendTo(qint64 conversationId, const QString& text) {
    if (text.trimmed().isEmpty() || busy(conversationId)) return false;
    const qint64 userId = appendUserMessage(conversationId, text);
    return userId && startReply(conversationId, ReplyStart::following(userId));
}

qint64 ChatController::appendUserMessage(qint64 conversationId, const QString& text) {
    auto c = storage_->conversation(conversationId);
    if (!c) return 0;
    MessageRecord user;
    user.conversationId = conversationId;
    user.role = QStringLiteral("user");
    user.content = text.trimmed();
    user.id = storage_->appendMessage(user);
    if (!user.id) {
        storageFailed(tr("Could not save your message"));
        return 0;
    }
    if (c->title.isEmpty()) storage_->renameConversation(conversationId, titleFromMessage(user.content));
    if (conversationId == currentId()) {
        if (auto stored = storage_->message(user.id)) messages_.append(*stored);
    }
    return user.id;
}

qint64 ChatController::storeNewReply(qint64 conversationId, const ReplyStart& how, const QString& model) {
    // A new reply (or version) at the end of the visible branch, empty while
    // it streams, so the prompt is the turns before it. An agent loop's next
    // reply follows the reply whose calls ran: one branch.
    MessageRecord reply;
    reply.conversationId = conversationId;
    reply.role = QStringLiteral("assistant");
    reply.state = MessageState::Streaming;
    reply.parentId = how.after;
    reply.model = model;
    const qint64 id = how.versionOf ? storage_->addVersion(reply, how.versionOf) : storage_->appendMessage(reply);
    if (!id) storageFailed(tr("Could not save the reply"));
    return id;
}

ReplyInput ChatController::replyInput(qint64 conversationId, const ConversationSettings& settings,
                                      const ReplyStart& how) const {
    ReplyInput in;
    in.settings = settings;
    in.unsaved = saver_.unsaved();
    in.continuing = how.continueId != 0;
    // Continue writes on in the plain chat format (continueReply refuses it in agent sessions).
    in.agent = tools_ && !in.continuing && storage_->toolsEnabled(conversationId);
    in.forceTool = how.forceTool;
    in.defaultContextPolicy = defaultContextPolicy_;
    in.randomSeed = QRandomGenerator::global()->generate64();
    if (in.agent) {
        in.tools = tools_->openAiTools();
        in.toolsText = tools_->openAiToolsText();
        const QString& name = how.forceTool;
        if (tools_->isAvailable(name) && tools_->policy(name) != ToolRegistry::Policy::Never) in.forcibleTools << name;
    }
    return in;
}

bool ChatController::startReply(qint64 conversationId, const ReplyStart& how) {
    auto c = storage_->conversation(conversationId);
    if (!c) return false;
    // A remote engine's endpoint as it is now (its key when it is in memory;
    // else the reply reads it from the keyring before it goes); the reply is
    // labelled with its model id.
    const QString& engine = c->settings.engine;
    const std::optional<RemoteTarget> target = engine.isEmpty() || !remote_ ? std::nullopt : remote_->target(engine);
    ReplyInput in = replyInput(conversationId, c->settings, how);
    in.modelName = engine.isEmpty() ? loadedModelName() : target && !target->model.isEmpty() ? target->model : engine;
    // Continue reads the reply before it is marked streaming: its text ends the prompt.
    in.replyId = how.continueId ? how.continueId : storeNewReply(conversationId, how, in.modelName);
    if (!in.replyId) return false;
    in.branch = storage_->messages(conversationId);  // the one read of the branch for this reply
    if (in.agent) {
        for (const MessageRecord& m : std::as_const(in.branch))
            if (m.role == u"assistant" && m.id != in.replyId) in.toolCalls.insert(m.id, storage_->toolCalls(m.id));
    }
    ReplyPlan plan = planReply(in);
    if (!plan.reply.id) {
        if (how.continueId) return false;  // Continue of a reply no longer shown
        // A new reply the branch does not show (it follows another version): as stored.
        auto stored = storage_->message(in.replyId);
        if (!stored) return false;
        plan.reply = *stored;
    }
    for (const QString& problem : plan.problems) emit notice(problem, true);
    if (how.continueId && !storage_->updateMessage(plan.reply)) return storageFailed(tr("Could not save the reply")), false;
    const LiveReply& live = engine.isEmpty() ? replies_.start(conversationId, plan, how.step)
                                             : replies_.startRemote(conversationId, plan, how.step, engine, target,
                                                                    remoteChatBody(plan, c->settings));
    showStartedReply(conversationId, how, std::move(in.branch), plan.reply, live);
    return true;
}

void ChatController::showStartedReply(qint64 conversationId, const ReplyStart& how, QList<MessageRecord> branch,
                                      const MessageRecord& reply, const LiveReply& live) {
    const QString activity = live.activity;
    if (conversationId == currentId()) {
        if (how.versionOf || how.continueId) {
            // The new version, and its switcher, in place of the old (the branch as it is now).
            for (MessageRecord& m : branch)
                if (m.id == reply.id) m = reply;
            showBranch(branch);
        } else {
            messages_.append(reply);
        }
        messages_.setActivity(reply.id, activity, 0);
    }
    list_.model()->setActivity(conversationId, activity);
    list_.refreshRow(conversationId);
    if (conversationId == currentId()) list_.announceCurrentChanged();
    saver_.replyStarted();
    emit generationsChanged();
    emit replyStarted(conversationId, reply.id);
}

QString ChatController::loadedModelName() const {
    const QVariantMap info = engine_->modelInfo();
    const QString name = info.value(QStringLiteral("name")).toString();
    return name.isEmpty() ? info.value(QStringLiteral("fileName")).toString() : name;
}

void ChatController::setRemoteEngines(RemoteEnginesController* remote) {
    if (remote_) disconnect(remote_, nullptr, this, nullptr);
    remote_ = remote;
    replies_.setRemoteEngines(remote_);
    if (!remote_) return;
    connect(remote_, &RemoteEnginesController::endpointRenamed, this, &ChatController::followRename);
    connect(remote_, &RemoteEnginesController::contextsChanged, this, &ChatController::contextUsageChanged);
    connect(remote_, &RemoteEnginesController::endpointsChanged, this, [this] {
        askRemoteContext();
        emit contextUsageChanged();
    });
    followFormerNames();  // a rename the database did not take before
    askRemoteContext();
}

QString ChatController::currentEngine() const {
    const QString stored = currentSettings().value(QStringLiteral("engine")).toString();
    if (stored.isEmpty() || !remote_) return stored;
    const std::optional<RemoteTarget> t = remote_->target(stored);
    return t ? t->name : stored;  // a removed one keeps its name, for "(removed)"
}

void ChatController::followRename(const QString& from, const QString& to) {
    const int moved = storage_->renameEngine(from, to);
    // When the database refused, the endpoint still answers to its former name.
    if (moved < 0) storageFailed(tr("Could not move the conversations on %1 to its new name %2").arg(from, to));
    if (moved > 0) list_.announceCurrentChanged();
}

void ChatController::followFormerNames() {
    if (!remote_) return;
    for (const auto& [former, now] : remote_->formerNames()) followRename(former, now);
}

qint64 ChatController::importConversation(const QUrl& file) {
    const qint64 id = list_.importConversation(file);
    if (id) followFormerNames();  // an export names the engine as it was called then
    return id;
}

void ChatController::askRemoteContext() {
    const QString engine = currentEngine();
    if (remote_ && !engine.isEmpty()) remote_->askContext(engine);
}

void ChatController::setEngine(qint64 conversationId, const QString& engine) {
    if (!conversationId) return;
    list_.setSettingsOf(conversationId, {{QStringLiteral("engine"), engine}});
    if (conversationId == currentId()) {
        askRemoteContext();
        emit contextUsageChanged();
    }
}

void ChatController::flushView() {
    for (LiveReply* g : replies_.all()) {
        if (!g->viewDirty || g->conversationId != currentId()) continue;
        messages_.setContent(g->messageId, g->text);
        g->viewDirty = false;
        emit contextUsageChanged();  // the header counts the tokens as they come
    }
}

int ChatController::contextTokens() const {
    const QString remote = currentEngine();
    if (!remote.isEmpty()) {
        // The local model's context says nothing of a remote engine's: its server's listing does.
        const std::optional<qint64> tokens = remote_ ? remote_->contextOf(remote).tokens : std::nullopt;
        return tokens && *tokens > 0 ? int(std::min<qint64>(*tokens, std::numeric_limits<int>::max())) : 0;
    }
    if (!engine_->ready()) return 0;
    const int fromModel = engine_->modelInfo().value(QStringLiteral("contextTokens")).toInt();
    return fromModel > 0 ? fromModel : replies_.lastContextTokens();
}

QString ChatController::contextNote() const {
    const QString remote = currentEngine();
    if (remote.isEmpty() || !remote_ || contextTokens() > 0) return {};
    const std::optional<RemoteTarget> t = remote_->target(remote);
    if (!t || t->model.isEmpty()) return {};  // removed, or no model: the chooser and the reply say so
    if (remote_->contextOf(remote).asking) return tr("asking %1 for its context\u2026").arg(t->name);
    return tr("context not reported by %1").arg(t->name);
}

QString ChatController::contextText() const {
    if (!currentId()) return {};
    const QLocale locale;
    const int used = contextUsed(), context = contextTokens();
    if (context > 0) return tr("%1 / %2 tokens").arg(locale.toString(used), locale.toString(context));
    const QString note = contextNote();
    if (note.isEmpty()) return {};
    return used > 0 ? tr("%1 tokens \u00b7 %2").arg(locale.toString(used), note) : note;
}

int ChatController::contextUsed() const {
    if (const LiveReply* g = replies_.forConversation(currentId()); g && g->promptTokens > 0)
        return (g->continuing ? g->basePromptTokens + g->baseCompletionTokens : g->promptTokens) + g->tokens;
    return messages_.latestReplyTokens();
}

void ChatController::setDefaultContextPolicy(const QString& policy) {
    const QString name = QString::fromLatin1(contextPolicyName(contextPolicyFromName(policy.toStdString(), ContextPolicy::DropOldest)));
    if (name == defaultContextPolicy_) return;
    defaultContextPolicy_ = name;
    emit defaultContextPolicyChanged();
}

void ChatController::showEndedReply(MessageRecord m) {
    if (m.conversationId != currentId()) return;
    if (const MessageRecord* shown = messages_.record(m.id)) {
        m.versionIndex = shown->versionIndex;
        m.versionCount = shown->versionCount;
    }
    messages_.update(m);
    messages_.setSaved(m.id, !saver_.isUnsaved(m.id));
    emit contextUsageChanged();
}

void ChatController::onReplyEnded(const LiveReply& g, MessageState state, const QString& error, const Usage* usage,
                                  const QString& finishReason) {
    auto stored = storage_->message(g.messageId);
    const MessageRecord m = endedReplyRecord(stored ? *stored : MessageRecord{}, g, state, error, usage, finishReason);
    if (stored) saver_.writeEnded(m);
    list_.model()->setActivity(g.conversationId, QString());
    list_.refreshRow(g.conversationId);
    showEndedReply(m);
    const bool calls = g.agent && state == MessageState::Complete && !g.calls.empty();
    // A small model often answers tool results by writing the result marker
    // itself (a stop string), which leaves nothing. That reply is dropped and
    // asked again once with tool_choice none: no tools offered, answer from
    // the results.
    const bool askAgain = !calls && g.agent && state == MessageState::Complete && g.step > 0 && !g.answerOnly &&
                          m.content.trimmed().isEmpty() && stored;
    // The empty reply goes (one message: nothing follows it); its parent is
    // where the reply asked again goes.
    const qint64 askAfter = askAgain ? stored->parentId : 0;
    if (askAgain && storage_->deleteMessage(g.messageId)) {
        saver_.forget(g.messageId);
        if (g.conversationId == currentId()) showMessages();
    }
    if (calls) toolCalls_.start(g.conversationId, g.messageId, g.step, g.calls);
    saver_.settle();
    emit generationsChanged();
    emit replyEnded(g.conversationId, g.messageId, messageStateName(state));
    if (askAgain) {
        if (!startReply(g.conversationId, ReplyStart::following(askAfter, g.step, QStringLiteral("none"))))
            emit agentFinished(g.conversationId, QStringLiteral("failed"));
        return;
    }
    if (g.agent && !calls)
        emit agentFinished(g.conversationId, state == MessageState::Complete    ? QStringLiteral("answered")
                                             : state == MessageState::Cancelled ? QStringLiteral("stopped")
                                                                                : QStringLiteral("failed"));
}

// --- The agent loop ---------------------------------------------------------

bool ChatController::currentToolsEnabled() const {
    return tools_ && currentId() && storage_->toolsEnabled(currentId());
}

void ChatController::setToolsEnabled(qint64 conversationId, bool enabled) {
    if (!conversationId || !tools_) return;
    if (!storage_->setToolsEnabled(conversationId, enabled)) return storageFailed(tr("Could not save the tools switch"));
    if (conversationId == currentId()) list_.announceCurrentChanged();
}

void ChatController::setMaxAgentSteps(int steps) {
    steps = std::clamp(steps, 1, 100);
    if (steps == maxAgentSteps_) return;
    maxAgentSteps_ = steps;
    emit maxAgentStepsChanged();
}

bool ChatController::sendForcing(qint64 conversationId, const QString& text, const QString& forceTool) {
    if (forceTool.isEmpty()) return sendTo(conversationId, text);
    if (!tools_) return false;
    if (conversationId == 0) conversationId = newConversation();
    if (!conversationId || text.trimmed().isEmpty() || busy(conversationId)) return false;
    if (!storage_->toolsEnabled(conversationId)) setToolsEnabled(conversationId, true);
    const qint64 userId = appendUserMessage(conversationId, text);
    return userId && startReply(conversationId, ReplyStart::following(userId, 0, forceTool));
}

void ChatController::approveToolCall(qint64 callId) { toolCalls_.approve(callId); }

void ChatController::denyToolCall(qint64 callId) { toolCalls_.deny(callId); }

void ChatController::continueAgent(qint64 conversationId, qint64 messageId, int step) {
    const int next = step + 1;
    if (next >= maxAgentSteps_) return stopAtStepLimit(conversationId, messageId);
    if (!startReply(conversationId, ReplyStart::following(messageId, next)))
        emit agentFinished(conversationId, QStringLiteral("failed"));
}

void ChatController::stopAtStepLimit(qint64 conversationId, qint64 messageId) {
    // No model reply after the last results: say so where the answer would be.
    MessageRecord m;
    m.conversationId = conversationId;
    m.role = QStringLiteral("assistant");
    m.state = MessageState::Failed;
    m.error = tr("The agent stopped after %n step(s) without an answer (the step limit). Send a message to go on.",
                 nullptr, maxAgentSteps_);
    m.parentId = messageId;
    m.id = storage_->appendMessage(m);
    if (m.id) storage_->updateMessage(m);
    if (conversationId == currentId()) {
        if (auto stored = storage_->message(m.id)) messages_.append(*stored);
    }
    emit notice(m.error, true);
    emit generationsChanged();
    emit agentFinished(conversationId, QStringLiteral("step limit"));
}

void ChatController::stop() { stopConversation(currentId()); }

void ChatController::stopConversation(qint64 conversationId) {
    replies_.cancel(conversationId);
    // Calls not finished end here; a tool still running has its result dropped.
    if (!toolCalls_.stop(conversationId)) return;
    emit generationsChanged();
    emit agentFinished(conversationId, QStringLiteral("stopped"));
}

void ChatController::stopAll() {
    replies_.cancelAll();
    for (const qint64 conversationId : toolCalls_.waitingConversations()) stopConversation(conversationId);
}

void ChatController::copyText(const QString& text) {
    if (auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance())) app->clipboard()->setText(text);
}

} // namespace weir::desktop
