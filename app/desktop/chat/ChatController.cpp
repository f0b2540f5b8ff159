#include "chat/ChatController.h"

#include <QClipboard>
#include <QDateTime>
#include <QFile>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSaveFile>

#include "app/server/forced_tool_call.h"
#include "chat/AgentTurns.h"
#include "chat/ConversationTitle.h"
#include "engine_host/ClientTags.h"
#include "engine_host/EngineHost.h"
#include "storage/ConversationExport.h"
#include "storage/MessageTree.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"

namespace weir::desktop {
namespace {

QVariantMap settingsToMap(const ConversationSettings& s) {
    return {{"systemPrompt", s.systemPrompt}, {"temperature", s.temperature}, {"topP", s.topP},
            {"topK", s.topK},                 {"maxTokens", s.maxTokens},     {"seed", s.seed},
            {"contextPolicy", s.contextPolicy}, {"minP", s.minP}, {"repeatPenalty", s.repeatPenalty}};
}

} // namespace

ChatController::ChatController(Storage* storage, EngineHost* engine, QObject* parent)
    : QObject(parent), storage_(storage), engine_(engine) {
    currentSettings_ = defaultSettings();
    saveTimer_.setInterval(1000);
    connect(&saveTimer_, &QTimer::timeout, this, &ChatController::saveProgress);
    // Replies on screen are repainted at most ~30 times a second however fast
    // tokens come, which keeps Markdown re-layout off the frame budget.
    viewTimer_.setInterval(33);
    viewTimer_.setSingleShot(true);
    connect(&viewTimer_, &QTimer::timeout, this, &ChatController::flushView);

    connect(engine_, &EngineHost::tokens, this, &ChatController::onTokens);
    connect(engine_, &EngineHost::finished, this, [this](quint64 t, const Usage& u, FinishReason reason) {
        endReply(t, MessageState::Complete, {}, &u,
                 reason == FinishReason::Length ? QStringLiteral("length") : QStringLiteral("stop"));
    });
    connect(engine_, &EngineHost::promptPrepared, this, &ChatController::onPromptPrepared);
    connect(engine_, &EngineHost::stateChanged, this, &ChatController::contextUsageChanged);
    connect(engine_, &EngineHost::failed, this, [this](quint64 t, const QString& message, const Usage& u) {
        endReply(t, MessageState::Failed, message, &u);
    });
    connect(engine_, &EngineHost::cancelled, this,
            [this](quint64 t, const Usage& u) { endReply(t, MessageState::Cancelled, {}, &u); });
    connect(engine_, &EngineHost::statusUpdated, this, &ChatController::onStatus);
    reload();
}

ChatController::~ChatController() {
    // Keep what was generated; the next start marks these replies interrupted.
    saveProgress();
}

QString ChatController::currentTitle() const {
    const int row = conversations_.rowOf(currentId_);
    if (row >= 0) return conversations_.data(conversations_.index(row), ConversationListModel::TitleRole).toString();
    if (currentId_ == 0) return {};
    auto c = storage_->conversation(currentId_);
    return c && !c->title.isEmpty() ? c->title : tr("New conversation");
}

// QML bindings read currentSettings often; it is read from the database once
// per change of the current conversation, not on every read.
QVariantMap ChatController::currentSettings() const { return currentSettings_; }

void ChatController::announceCurrentChanged() {
    if (currentId_ == 0) {
        currentSettings_ = defaultSettings();
    } else {
        auto c = storage_->conversation(currentId_);
        currentSettings_ = settingsToMap(c ? c->settings : ConversationSettings{});
    }
    emit currentChanged();
}

QVariantMap ChatController::defaultSettings() const { return settingsToMap(ConversationSettings{}); }

QString ChatController::currentActivity() const {
    const Generation* g = generationFor(currentId_);
    return g ? g->activity : QString();
}

QString ChatController::undoText() const {
    if (deletedMessage_) return deletedMessage_->text;
    if (removed_.isEmpty()) return {};
    const QString title = removed_.last().second.isEmpty() ? tr("New conversation") : removed_.last().second;
    return tr("Deleted \u201c%1\u201d").arg(title);
}

void ChatController::reload() {
    QList<ConversationRecord> all = storage_->conversations();
    QHash<qint64, ConversationListModel::SearchMatch> matches;
    if (const QString needle = searchText_.trimmed(); !needle.isEmpty()) {
        const QList<qint64> ids = storage_->searchConversations(needle);
        const QSet<qint64> keep(ids.begin(), ids.end());
        all.erase(std::remove_if(all.begin(), all.end(), [&](const ConversationRecord& c) { return !keep.contains(c.id); }),
                  all.end());
        const auto hits = storage_->firstMatchingMessages(needle);
        for (auto it = hits.begin(); it != hits.end(); ++it)
            matches.insert(it.key(), {it.value().first, searchSnippet(it.value().second, needle)});
    }
    conversations_.setConversations(all, matches);
}

void ChatController::setSearchText(const QString& text) {
    if (text == searchText_) return;
    searchText_ = text;
    reload();
    emit searchTextChanged();
}

void ChatController::refreshConversationRow(qint64 id) {
    auto c = storage_->conversation(id);
    if (!c || c->deletedAt != 0) return;
    if (searchText_.trimmed().isEmpty() || conversations_.rowOf(id) >= 0) conversations_.upsert(*c);
}

void ChatController::storageFailed(const QString& what) {
    emit notice(what + QStringLiteral(": ") + storage_->lastError(), true);
}

int ChatController::unsavedCount() const {
    int n = int(unsaved_.size());
    for (const auto& g : generations_) n += g.saveFailed ? 1 : 0;
    return n;
}

void ChatController::replyWriteFailed() {
    QString text;
    switch (storage_->lastProblem()) {
    case StorageProblem::DiskFull:
        text = tr("The disk is full, so Weir cannot save. Replies stay on screen, marked \u201cnot saved\u201d, and are "
                  "saved as soon as there is space again.");
        break;
    case StorageProblem::ReadOnly:
        text = tr("Weir cannot write to its conversation database (%1). Replies stay on screen, marked \u201cnot "
                  "saved\u201d, and Weir keeps trying to save them.").arg(storage_->lastError());
        break;
    default:
        text = tr("Weir could not save to its conversation database (%1). Replies stay on screen, marked \u201cnot "
                  "saved\u201d, and Weir keeps trying to save them.").arg(storage_->lastError());
        break;
    }
    if (text == saveProblem_) return;
    saveProblem_ = text;
    emit saveProblemChanged();
}

void ChatController::updateSaveProblem() {
    if (saveProblem_.isEmpty() || unsavedCount() > 0) return;
    saveProblem_.clear();
    emit saveProblemChanged();
    emit notice(tr("Saving works again: every reply is in the database."), false);
}

void ChatController::retryUnsaved() {
    for (auto it = unsaved_.begin(); it != unsaved_.end();) {
        if (storage_->updateMessage(it.value())) {
            if (it->conversationId == currentId_) messages_.setSaved(it.key(), true);
            it = unsaved_.erase(it);
        } else if (!storage_->message(it.key())) {
            it = unsaved_.erase(it);  // deleted meanwhile (regenerate, edit): nothing to keep
        } else {
            replyWriteFailed();
            ++it;
        }
    }
}

void ChatController::databaseReplaced() {
    unsaved_.clear();
    for (auto& g : generations_) g.saveFailed = false;
    if (!saveProblem_.isEmpty()) {
        saveProblem_.clear();
        emit saveProblemChanged();
    }
    reload();
    select(conversations_.count() > 0 ? conversations_.idAt(0) : 0);
}

qint64 ChatController::newConversation() {
    const qint64 id = storage_->createConversation(QString());
    if (!id) {
        storageFailed(tr("Could not create a conversation"));
        return 0;
    }
    if (!searchText_.isEmpty()) setSearchText(QString());
    refreshConversationRow(id);
    select(id);
    return id;
}

QList<qint64> ChatController::emptyConversations() const {
    QList<qint64> ids;
    for (const ConversationRecord& c : storage_->conversations())
        if (c.title.isEmpty() && !generationFor(c.id) && storage_->messages(c.id).isEmpty()) ids << c.id;
    return ids;
}

void ChatController::select(qint64 id) {
    if (id != 0 && !storage_->conversation(id)) id = 0;
    currentId_ = id;
    showMessages();
    announceCurrentChanged();
    emit generationsChanged();
}

void ChatController::showMessages() {
    const qint64 id = currentId_;
    const QList<MessageRecord> branch = id ? storage_->messages(id) : QList<MessageRecord>{};
    messages_.setMessages(branch);
    for (const MessageRecord& m : branch)
        if (m.role == u"assistant") showToolCalls(m.id);
    // Replies the database has not taken yet show as they are, not as stored.
    for (MessageRecord m : std::as_const(unsaved_)) {
        if (m.conversationId != id) continue;
        if (const MessageRecord* shown = messages_.record(m.id)) {
            m.versionIndex = shown->versionIndex;
            m.versionCount = shown->versionCount;
        }
        messages_.update(m);
        messages_.setSaved(m.id, false);
    }
    // A reply streaming in this conversation shows its latest text at once.
    if (Generation* g = generationFor(id)) {
        messages_.setContent(g->messageId, g->text);
        messages_.setActivity(g->messageId, g->activity, g->queuePosition);
        if (g->saveFailed) messages_.setSaved(g->messageId, false);
        if (g->promptTokens > 0) messages_.setContextStart(g->contextFromId);
        g->viewDirty = false;
    }
    emit contextUsageChanged();
}

void ChatController::rename(qint64 id, const QString& title) {
    const QString t = title.simplified();
    if (t.isEmpty()) return;
    if (!storage_->renameConversation(id, t)) return storageFailed(tr("Could not rename"));
    const int row = conversations_.rowOf(id);
    if (row >= 0) {
        auto c = storage_->conversation(id);
        if (c) conversations_.upsert(*c);
    }
    if (id == currentId_) announceCurrentChanged();
}

void ChatController::remove(qint64 id) {
    auto c = storage_->conversation(id);
    if (!c) return;
    stopConversation(id);
    if (!storage_->setConversationDeleted(id, true)) return storageFailed(tr("Could not delete"));
    removed_.append({id, c->title});
    deletedMessage_.reset();  // Undo now means this conversation
    const int row = conversations_.rowOf(id);
    conversations_.remove(id);
    if (id == currentId_) {
        const int next = std::min(row, conversations_.count() - 1);
        select(next >= 0 ? conversations_.idAt(next) : 0);
    }
    emit undoChanged();
}

void ChatController::undoRemove() {
    if (deletedMessage_) {
        const DeletedMessage d = *std::exchange(deletedMessage_, std::nullopt);
        if (!storage_->restoreMessages(d.before, d.toolCalls)) return storageFailed(tr("Could not restore the message"));
        if (d.conversationId == currentId_) showMessages();
        else select(d.conversationId);
        refreshConversationRow(d.conversationId);
        emit undoChanged();
        return;
    }
    if (removed_.isEmpty()) return;
    const qint64 id = removed_.takeLast().first;
    if (!storage_->setConversationDeleted(id, false)) return storageFailed(tr("Could not restore"));
    reload();
    select(id);
    emit undoChanged();
}

void ChatController::purgeRemoved() {
    for (const auto& r : std::as_const(removed_)) storage_->deleteConversation(r.first);
    removed_.clear();
    deletedMessage_.reset();
    emit undoChanged();
}

ChatController::Generation* ChatController::generationFor(qint64 conversationId) {
    for (auto& g : generations_)
        if (g.conversationId == conversationId) return &g;
    return nullptr;
}

const ChatController::Generation* ChatController::generationFor(qint64 conversationId) const {
    for (const auto& g : generations_)
        if (g.conversationId == conversationId) return &g;
    return nullptr;
}

bool ChatController::send(const QString& text) {
    qint64 id = currentId_;
    if (id == 0) id = newConversation();
    return id != 0 && sendTo(id, text);
}

bool ChatController::sendTo(qint64 conversationId, const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || busy(conversationId)) return false;
    auto c = storage_->conversation(conversationId);
    if (!c) return false;
    MessageRecord user;
    user.conversationId = conversationId;
    user.role = QStringLiteral("user");
    user.content = trimmed;
    user.id = storage_->appendMessage(user);
    if (!user.id) {
        storageFailed(tr("Could not save your message"));
        return false;
    }
    if (c->title.isEmpty()) storage_->renameConversation(conversationId, titleFromMessage(trimmed));
    if (conversationId == currentId_) {
        if (auto stored = storage_->message(user.id)) messages_.append(*stored);
    }
    return startReply(conversationId);
}

std::vector<Message> ChatController::history(qint64 conversationId, const ConversationSettings& s,
                                             std::vector<qint64>* turnIds) const {
    std::vector<Message> out;
    auto turn = [](std::string role, std::string content) {
        Message m;
        m.role = std::move(role);
        m.content = std::move(content);
        return m;
    };
    std::vector<qint64> ids;
    if (!s.systemPrompt.trimmed().isEmpty()) {
        out.push_back(turn("system", s.systemPrompt.trimmed().toStdString()));
        ids.push_back(0);
    }
    for (MessageRecord m : storage_->messages(conversationId)) {
        if (auto it = unsaved_.constFind(m.id); it != unsaved_.cend()) m = it.value();
        if (m.role == u"assistant" && (m.state == MessageState::Failed || m.state == MessageState::Streaming)) continue;
        if (m.content.isEmpty()) continue;
        const std::string role = m.role.toStdString();
        // Templates want roles to alternate; a reply that failed leaves two user
        // turns in a row, which are sent as one.
        if (!out.empty() && out.back().role == role && role != "system") {
            out.back().content += "\n\n" + m.content.toStdString();
            continue;
        }
        out.push_back(turn(role, m.content.toStdString()));
        ids.push_back(m.id);
    }
    if (turnIds) *turnIds = std::move(ids);
    return out;
}

bool ChatController::startReply(qint64 conversationId, qint64 versionOf, qint64 continueId, int step,
                                const QString& forceTool, qint64 after) {
    auto c = storage_->conversation(conversationId);
    if (!c) return false;
    // Continue writes on in the plain chat format (continueReply refuses it in agent sessions).
    const bool agent = tools_ && storage_->toolsEnabled(conversationId) && !continueId;
    MessageRecord reply;
    reply.conversationId = conversationId;
    reply.role = QStringLiteral("assistant");
    reply.state = MessageState::Streaming;
    Generation g;
    std::vector<qint64> turnIds;
    std::vector<Message> turns;
    PromptPlan plan;
    if (continueId) {
        auto existing = storage_->message(continueId);
        if (!existing) return false;
        // The prompt ends with the reply's text, left open (read before it is marked streaming).
        turns = history(conversationId, c->settings, &turnIds);
        reply = *existing;
        plan.continueLast = true;
        g.continuing = true;
        g.text = reply.content;
        g.basePromptTokens = reply.promptTokens;
        g.baseCachedTokens = reply.cachedTokens;
        g.baseCompletionTokens = reply.completionTokens;
        g.baseDraftTokens = reply.draftTokens;
        g.baseAcceptedDraftTokens = reply.acceptedDraftTokens;
        reply.state = MessageState::Streaming;
        reply.finishReason.clear();
        if (!storage_->updateMessage(reply)) return storageFailed(tr("Could not save the reply")), false;
    } else {
        // A new reply (or version) at the end of the visible branch, empty while
        // it streams, so the prompt is the turns before it. An agent loop's
        // next reply follows the reply whose calls ran: one branch.
        reply.parentId = after;
        reply.id = versionOf ? storage_->addVersion(reply, versionOf) : storage_->appendMessage(reply);
        if (!reply.id) {
            storageFailed(tr("Could not save the reply"));
            return false;
        }
        turns = history(conversationId, c->settings, &turnIds);
    }
    ChatPromptInput chat;
    OutputConstraint forcedCall;
    if (agent) {
        QList<AgentTurn> agentTurns;
        for (MessageRecord m : storage_->messages(conversationId)) {
            if (m.id == reply.id) continue;  // the reply being written
            if (auto it = unsaved_.constFind(m.id); it != unsaved_.cend()) m = it.value();
            agentTurns.append({m, m.role == u"assistant" ? storage_->toolCalls(m.id) : QList<ToolCallRecord>{}});
        }
        // The context is fitted over the JSON messages: their stored ids stand in for the turns'.
        chat.messagesJson = agentMessagesJson(c->settings.systemPrompt, agentTurns, &turnIds);
        const QJsonArray tools = tools_->openAiTools();
        if (!tools.isEmpty()) chat.toolsJson = QJsonDocument(tools).toJson(QJsonDocument::Compact).toStdString();
        if (!forceTool.isEmpty() && !tools.isEmpty()) {
            if (forceTool == u"none") {
                chat.toolChoice.mode = ToolChoice::Mode::None;
            } else if (forceTool == u"required") {
                chat.toolChoice.mode = ToolChoice::Mode::Required;
            } else if (tools_->isAvailable(forceTool) && tools_->policy(forceTool) != ToolRegistry::Policy::Never) {
                chat.toolChoice.mode = ToolChoice::Mode::Function;
                chat.toolChoice.function = forceTool.toStdString();
            } else {
                emit notice(tr("There is no tool \u201c%1\u201d to force: the reply may call any tool.").arg(forceTool), true);
            }
        }
        if (server::forcesToolCall(chat.toolChoice)) {
            // The reply is held to {"name", "arguments"} for the tool's schema.
            chat.openForcedCall = false;
            forcedCall = {OutputConstraint::Kind::JsonSchema, server::forcedCallSchema(tools, chat.toolChoice)};
            const std::string problem = Engine::outputConstraintProblem(forcedCall);
            if (!problem.empty()) {
                emit notice(tr("Cannot force a call of %1: its arguments cannot be constrained (%2).")
                                .arg(forceTool, QString::fromStdString(problem)), true);
                forcedCall = {};
                chat.toolChoice = {};
                chat.openForcedCall = true;
            }
        }
    }

    plan.systemTurns = turnIds.empty() || turnIds.front() != 0 ? 0 : 1;
    plan.policy = contextPolicyFromName((c->settings.contextPolicy.isEmpty() ? defaultContextPolicy_
                                                                              : c->settings.contextPolicy).toStdString(),
                                       ContextPolicy::DropOldest);
    // Drop oldest keeps the cut of the previous reply: find where it began.
    const QList<MessageRecord> branch = storage_->messages(conversationId);
    for (auto it = branch.crbegin(); it != branch.crend(); ++it) {
        if (it->role != u"assistant" || it->id == reply.id) continue;
        for (size_t i = 0; i < turnIds.size(); ++i)
            if (it->contextFromId != 0 && turnIds[i] == it->contextFromId) plan.earliestTurn = int(i);
        break;
    }

    GenerateRequest request;
    request.maxTokens = std::max(1, c->settings.maxTokens);
    request.sampling.temperature = float(c->settings.temperature);
    request.sampling.topP = float(c->settings.topP);
    request.sampling.topK = c->settings.topK;
    request.sampling.minP = float(c->settings.minP);
    request.sampling.repeatPenalty = float(c->settings.repeatPenalty);
    request.sampling.seed = c->settings.seed >= 0 ? quint64(c->settings.seed) : QRandomGenerator::global()->generate64();

    g.conversationId = conversationId;
    g.messageId = reply.id;
    g.turnIds = std::move(turnIds);
    g.clock.start();
    g.agent = agent;
    g.step = step;
    if (agent) {
        g.forced = forcedCall.kind != OutputConstraint::Kind::None;
        g.answerOnly = forceTool == u"none";
        request.constraint = forcedCall;
        g.handoff = std::make_shared<ToolCallHandoff>();
        g.ticket = engine_->submitChat(conversationTag(conversationId), chat, request, plan, g.handoff);
    } else {
        g.ticket = engine_->submit(conversationTag(conversationId), turns, request, plan);
    }
    generations_.insert(g.ticket, g);

    if (conversationId == currentId_) {
        if (versionOf || continueId) showMessages();  // the new version, and its switcher, in place of the old
        else if (auto stored = storage_->message(reply.id)) messages_.append(*stored);
        messages_.setActivity(reply.id, g.activity, 0);
    }
    conversations_.setActivity(conversationId, g.activity);
    refreshConversationRow(conversationId);
    if (conversationId == currentId_) announceCurrentChanged();
    if (!saveTimer_.isActive()) saveTimer_.start();
    emit generationsChanged();
    emit replyStarted(conversationId, reply.id);
    return true;
}

void ChatController::onTokens(quint64 ticket, const QString& text, int count) {
    auto it = generations_.find(ticket);
    if (it == generations_.end()) return;
    Generation& g = it.value();
    if (g.firstTokenMs < 0) g.firstTokenMs = double(g.clock.nsecsElapsed()) / 1e6;
    if (g.agent && !g.forced) {
        // The model's own call syntax is held back by the reader; only text shows.
        if (!g.reader && g.handoff) g.reader = g.handoff->take();
        if (g.callsComplete) {
            // Tokens already on their way when the reply was stopped after its calls.
        } else if (g.reader) {
            ToolCallReader::Output out = g.reader->push(text.toStdString());
            for (ToolCall& call : out.calls) g.calls.push_back(std::move(call));
            g.text += QString::fromStdString(out.text);
            // Nothing after the calls belongs to the reply: stop generating.
            if (!g.callsComplete && g.reader->done()) {
                g.callsComplete = true;
                engine_->cancel(g.ticket);
            }
        } else {
            g.text += text;
        }
    } else if (g.forced) {
        g.raw += text;
    } else {
        g.text += text;
    }
    g.tokens += count;
    g.dirty = g.viewDirty = true;
    if (g.activity != u"decode") {
        g.activity = QStringLiteral("decode");
        g.queuePosition = 0;
        conversations_.setActivity(g.conversationId, g.activity);
        if (g.conversationId == currentId_) {
            messages_.setActivity(g.messageId, g.activity, 0);
            emit generationsChanged();
        }
    }
    if (g.conversationId == currentId_ && !viewTimer_.isActive()) viewTimer_.start();
    emit replyTokens(g.conversationId, g.tokens);
}

void ChatController::flushView() {
    for (auto& g : generations_) {
        if (!g.viewDirty || g.conversationId != currentId_) continue;
        messages_.setContent(g.messageId, g.text);
        g.viewDirty = false;
        emit contextUsageChanged();  // the header counts the tokens as they come
    }
}

void ChatController::saveProgress() {
    for (auto& g : generations_) {
        if (!g.dirty) continue;
        if (storage_->saveProgress(g.messageId, g.text)) {
            g.dirty = false;
            if (g.saveFailed) {
                g.saveFailed = false;
                if (g.conversationId == currentId_) messages_.setSaved(g.messageId, true);
            }
            emit replySaved(g.conversationId, g.messageId, int(g.text.size()));
        } else if (storage_->message(g.messageId)) {
            // Kept in memory and tried again on the next tick.
            if (!g.saveFailed) {
                g.saveFailed = true;
                if (g.conversationId == currentId_) messages_.setSaved(g.messageId, false);
            }
            replyWriteFailed();
        } else {
            g.dirty = false;  // the message was deleted while it streamed
        }
    }
    retryUnsaved();
    if (generations_.isEmpty() && unsaved_.isEmpty()) saveTimer_.stop();
    updateSaveProblem();
}

void ChatController::onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens) {
    lastContextTokens_ = contextTokens;
    auto it = generations_.find(ticket);
    if (it == generations_.end()) return;
    Generation& g = it.value();
    g.promptTokens = promptTokens;
    // Turns before firstTurn (after the system prompt) were left out.
    const size_t systemTurns = !g.turnIds.empty() && g.turnIds.front() == 0 ? 1 : 0;
    g.contextFromId = size_t(firstTurn) > systemTurns && size_t(firstTurn) < g.turnIds.size() ? g.turnIds[firstTurn] : 0;
    if (g.conversationId == currentId_) {
        messages_.setContextStart(g.contextFromId);
        emit contextUsageChanged();
    }
}

int ChatController::contextTokens() const {
    if (!engine_->ready()) return 0;
    const int fromModel = engine_->modelInfo().value(QStringLiteral("contextTokens")).toInt();
    return fromModel > 0 ? fromModel : lastContextTokens_;
}

int ChatController::contextUsed() const {
    if (const Generation* g = generationFor(currentId_); g && g->promptTokens > 0)
        return (g->continuing ? g->basePromptTokens + g->baseCompletionTokens : g->promptTokens) + g->tokens;
    // The latest reply: what it was sent and what it wrote.
    for (int row = messages_.count() - 1; row >= 0; --row) {
        const QVariantMap m = messages_.get(row);
        if (m.value(QStringLiteral("role")).toString() != u"assistant") continue;
        const int used = m.value(QStringLiteral("promptTokens")).toInt() + m.value(QStringLiteral("completionTokens")).toInt();
        if (used > 0) return used;
    }
    return 0;
}

void ChatController::setDefaultContextPolicy(const QString& policy) {
    const QString name = QString::fromLatin1(contextPolicyName(contextPolicyFromName(policy.toStdString(), ContextPolicy::DropOldest)));
    if (name == defaultContextPolicy_) return;
    defaultContextPolicy_ = name;
    emit defaultContextPolicyChanged();
}

void ChatController::readAgentReply(Generation& g, QString* text) const {
    if (g.forced) {
        // Held to the call's JSON: it is a call, or (cut short) shown as it came.
        if (std::optional<ToolCall> call = server::readForcedCall(g.raw.toStdString())) {
            g.calls.push_back(std::move(*call));
        } else {
            *text = g.raw;
        }
        return;
    }
    if (!g.reader && g.handoff) g.reader = g.handoff->take();
    if (!g.reader) return;
    ToolCallReader::Output out = g.reader->finish();
    for (ToolCall& call : out.calls) g.calls.push_back(std::move(call));
    *text += QString::fromStdString(out.text);
}

void ChatController::endReply(quint64 ticket, MessageState state, const QString& error, const Usage* usage,
                              const QString& finishReason) {
    auto it = generations_.find(ticket);
    if (it == generations_.end()) return;
    Generation g = it.value();
    generations_.erase(it);
    if (g.callsComplete && state == MessageState::Cancelled) state = MessageState::Complete;
    if (g.agent && state == MessageState::Complete) readAgentReply(g, &g.text);
    else if (g.forced && g.text.isEmpty()) g.text = g.raw;

    auto stored = storage_->message(g.messageId);
    MessageRecord m = stored ? *stored : MessageRecord{};
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
    if (stored && !storage_->updateMessage(m) && storage_->message(m.id)) {
        // Kept here and written again on every save tick until it goes in.
        unsaved_.insert(m.id, m);
        replyWriteFailed();
        if (!saveTimer_.isActive()) saveTimer_.start();
    }

    conversations_.setActivity(g.conversationId, QString());
    refreshConversationRow(g.conversationId);
    if (g.conversationId == currentId_) {
        if (const MessageRecord* shown = messages_.record(m.id)) {
            m.versionIndex = shown->versionIndex;
            m.versionCount = shown->versionCount;
        }
        messages_.update(m);
        messages_.setSaved(m.id, !unsaved_.contains(m.id));
        emit contextUsageChanged();
    }
    const bool calls = g.agent && state == MessageState::Complete && !g.calls.empty();
    // A small model often answers tool results by writing the result marker
    // itself (a stop string), which leaves nothing. That reply is dropped and
    // asked again once with tool_choice none: no tools offered, answer from
    // the results.
    const bool askAgain = !calls && g.agent && state == MessageState::Complete && g.step > 0 && !g.answerOnly &&
                          g.text.trimmed().isEmpty() && stored;
    // The empty reply goes (one message: nothing follows it); its parent is
    // where the reply asked again goes.
    const qint64 askAfter = askAgain ? stored->parentId : 0;
    if (askAgain && storage_->deleteMessage(g.messageId)) {
        unsaved_.remove(g.messageId);
        if (g.conversationId == currentId_) showMessages();
    }
    if (calls) startToolCalls(g.conversationId, g.messageId, g.step, g.calls);
    if (generations_.isEmpty() && unsaved_.isEmpty()) saveTimer_.stop();
    updateSaveProblem();
    emit generationsChanged();
    emit replyEnded(g.conversationId, g.messageId, messageStateName(state));
    if (askAgain) {
        if (!startReply(g.conversationId, 0, 0, g.step, QStringLiteral("none"), askAfter)) emit agentFinished(g.conversationId, QStringLiteral("failed"));
        return;
    }
    if (g.agent && !calls)
        emit agentFinished(g.conversationId, state == MessageState::Complete    ? QStringLiteral("answered")
                                             : state == MessageState::Cancelled ? QStringLiteral("stopped")
                                                                                : QStringLiteral("failed"));
}

// --- The agent loop ---------------------------------------------------------

bool ChatController::currentToolsEnabled() const {
    return tools_ && currentId_ && storage_->toolsEnabled(currentId_);
}

void ChatController::setToolsEnabled(qint64 conversationId, bool enabled) {
    if (!conversationId || !tools_) return;
    if (!storage_->setToolsEnabled(conversationId, enabled)) return storageFailed(tr("Could not save the tools switch"));
    if (conversationId == currentId_) announceCurrentChanged();
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
    auto c = storage_->conversation(conversationId);
    if (!c) return false;
    MessageRecord user;
    user.conversationId = conversationId;
    user.role = QStringLiteral("user");
    user.content = text.trimmed();
    user.id = storage_->appendMessage(user);
    if (!user.id) {
        storageFailed(tr("Could not save your message"));
        return false;
    }
    if (c->title.isEmpty()) storage_->renameConversation(conversationId, titleFromMessage(user.content));
    if (conversationId == currentId_) {
        if (auto stored = storage_->message(user.id)) messages_.append(*stored);
    }
    return startReply(conversationId, 0, 0, 0, forceTool);
}

void ChatController::showToolCalls(qint64 messageId) {
    if (!messages_.record(messageId)) return;
    QList<ToolCallRecord> calls = storage_->toolCalls(messageId);
    // Calls of a loop in progress show their live state.
    for (const AgentWait& w : std::as_const(waits_))
        if (w.messageId == messageId) calls = w.calls;
    QVariantList list;
    for (const ToolCallRecord& c : calls) list << toolCallMap(c);
    messages_.setToolCalls(messageId, list);
}

void ChatController::startToolCalls(qint64 conversationId, qint64 messageId, int step, const std::vector<ToolCall>& calls) {
    AgentWait wait;
    wait.messageId = messageId;
    wait.step = step;
    int n = 0;
    for (const ToolCall& call : calls) {
        ToolCallRecord r;
        r.messageId = messageId;
        r.callId = QStringLiteral("call_%1_%2").arg(messageId).arg(n++);
        r.name = QString::fromStdString(call.name);
        r.arguments = QString::fromStdString(call.arguments);
        if (!tools_->isAvailable(r.name) || tools_->policy(r.name) == ToolRegistry::Policy::Never) {
            // Nothing to approve: the model is told at once and may try again.
            r.state = QStringLiteral("failed");
            r.result = tools_->isAvailable(r.name) ? tr("the user does not allow '%1'").arg(r.name)
                                                   : tr("there is no tool named '%1'").arg(r.name);
        } else {
            r.state = tools_->needsApproval(r.name) ? QStringLiteral("pending") : QStringLiteral("approved");
        }
        r.id = storage_->addToolCall(r);
        if (!r.id) storageFailed(tr("Could not save a tool call"));
        wait.calls.append(r);
    }
    waits_.insert(conversationId, wait);
    if (conversationId == currentId_) showToolCalls(messageId);
    for (ToolCallRecord& r : waits_[conversationId].calls) {
        emit toolCallChanged(conversationId, r.id, r.state);
        if (r.state == u"approved") runToolCall(conversationId, r);
    }
    // Every call may have been refused at once (no such tool...).
    if (auto it = waits_.find(conversationId); it != waits_.end()) {
        bool all = true;
        for (const ToolCallRecord& r : it->calls) all = all && toolCallFinished(r.state);
        if (all) continueAgent(conversationId);
    }
}

void ChatController::setToolCallState(qint64 conversationId, ToolCallRecord& call) {
    if (call.id && !storage_->updateToolCall(call)) storageFailed(tr("Could not save a tool call"));
    if (conversationId == currentId_) showToolCalls(call.messageId);
    emit toolCallChanged(conversationId, call.id, call.state);
}

void ChatController::runToolCall(qint64 conversationId, ToolCallRecord& call) {
    call.state = QStringLiteral("running");
    AgentWait& wait = waits_[conversationId];
    wait.clocks[call.id].start();
    setToolCallState(conversationId, call);
    const qint64 id = call.id;
    tools_->call(call.name, call.arguments, this,
                 [this, conversationId, id](const ToolResult& r) { toolCallEnded(conversationId, id, r); });
}

ToolCallRecord* ChatController::waitingCall(qint64 callId, qint64* conversationId) {
    for (auto it = waits_.begin(); it != waits_.end(); ++it)
        for (ToolCallRecord& c : it->calls)
            if (c.id == callId) {
                *conversationId = it.key();
                return &c;
            }
    return nullptr;
}

void ChatController::approveToolCall(qint64 callId) {
    qint64 conv = 0;
    ToolCallRecord* call = waitingCall(callId, &conv);
    if (!call || call->state != u"pending") return;
    call->state = QStringLiteral("approved");
    setToolCallState(conv, *call);
    runToolCall(conv, *call);
}

void ChatController::denyToolCall(qint64 callId) {
    qint64 conv = 0;
    ToolCallRecord* call = waitingCall(callId, &conv);
    if (!call || call->state != u"pending") return;
    call->state = QStringLiteral("denied");
    call->result = tr("The user denied this call.");
    setToolCallState(conv, *call);
    bool all = true;
    for (const ToolCallRecord& r : waits_[conv].calls) all = all && toolCallFinished(r.state);
    if (all) continueAgent(conv);
}

void ChatController::toolCallEnded(qint64 conversationId, qint64 callId, const ToolResult& result) {
    auto it = waits_.find(conversationId);
    if (it == waits_.end()) return;  // the loop was stopped meanwhile
    for (ToolCallRecord& c : it->calls) {
        if (c.id != callId || c.state != u"running") continue;
        c.result = result.text;
        c.state = result.ok ? QStringLiteral("done") : QStringLiteral("failed");
        c.durationMs = double(it->clocks.value(callId).nsecsElapsed()) / 1e6;
        setToolCallState(conversationId, c);
    }
    bool all = true;
    for (const ToolCallRecord& r : it->calls) all = all && toolCallFinished(r.state);
    if (all) continueAgent(conversationId);
}

void ChatController::continueAgent(qint64 conversationId) {
    const AgentWait wait = waits_.take(conversationId);
    const int next = wait.step + 1;
    if (next >= maxAgentSteps_) {
        // No model reply after the last results: say so where the answer would be.
        MessageRecord m;
        m.conversationId = conversationId;
        m.role = QStringLiteral("assistant");
        m.state = MessageState::Failed;
        m.error = tr("The agent stopped after %n step(s) without an answer (the step limit). Send a message to go on.",
                     nullptr, maxAgentSteps_);
        m.parentId = wait.messageId;
        m.id = storage_->appendMessage(m);
        if (m.id) storage_->updateMessage(m);
        if (conversationId == currentId_) {
            if (auto stored = storage_->message(m.id)) messages_.append(*stored);
        }
        emit notice(m.error, true);
        emit generationsChanged();
        emit agentFinished(conversationId, QStringLiteral("step limit"));
        return;
    }
    if (!startReply(conversationId, 0, 0, next, {}, wait.messageId)) emit agentFinished(conversationId, QStringLiteral("failed"));
}

void ChatController::onStatus(const CacheStatus& status) {
    // The engine lists waiting requests in queue order.
    QHash<qint64, QPair<QString, int>> seen;
    int waiting = 0;
    for (const RequestStatus& r : status.requests) {
        const qint64 conv = conversationOf(r.tag);
        if (!conv) continue;
        const QString state = QString::fromUtf8(requestStateName(r.state));
        seen.insert(conv, {state, r.state == RequestState::Waiting ? ++waiting : 0});
    }
    bool currentChangedActivity = false;
    for (auto& g : generations_) {
        auto it = seen.find(g.conversationId);
        if (it == seen.end()) continue;
        if (g.activity == it->first && g.queuePosition == it->second) continue;
        g.activity = it->first;
        g.queuePosition = it->second;
        conversations_.setActivity(g.conversationId, g.activity, g.queuePosition);
        if (g.conversationId == currentId_) {
            messages_.setActivity(g.messageId, g.activity, g.queuePosition);
            currentChangedActivity = true;
        }
    }
    if (currentChangedActivity) emit generationsChanged();
}

void ChatController::stop() { stopConversation(currentId_); }

void ChatController::stopConversation(qint64 conversationId) {
    if (Generation* g = generationFor(conversationId)) engine_->cancel(g->ticket);
    if (!waits_.contains(conversationId)) return;
    // Calls not finished end here; a tool still running has its result dropped.
    AgentWait wait = waits_.take(conversationId);
    for (ToolCallRecord& c : wait.calls) {
        if (toolCallFinished(c.state)) continue;
        c.state = QStringLiteral("denied");
        c.result = tr("Stopped by the user.");
        if (c.id) storage_->updateToolCall(c);
        emit toolCallChanged(conversationId, c.id, c.state);
    }
    if (conversationId == currentId_) showToolCalls(wait.messageId);
    emit generationsChanged();
    emit agentFinished(conversationId, QStringLiteral("stopped"));
}

void ChatController::stopAll() {
    for (const auto& g : std::as_const(generations_)) engine_->cancel(g.ticket);
    for (const qint64 conversationId : waits_.keys()) stopConversation(conversationId);
}

bool ChatController::regenerate() {
    const qint64 id = currentId_;
    if (!id || busy(id)) return false;
    const QList<MessageRecord> branch = storage_->messages(id);
    if (branch.isEmpty()) return false;
    // A new version of the first reply after the last user message (in an
    // agent session, the whole loop of that turn is written again); with none
    // (it failed to start), simply a reply.
    qint64 first = 0;
    for (auto it = branch.crbegin(); it != branch.crend() && it->role != u"user"; ++it) first = it->id;
    if (first) return regenerateMessage(first);
    return startReply(id);
}

bool ChatController::regenerateMessage(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || m->role != u"assistant" || busy(m->conversationId)) return false;
    // The reply is written for the turns before it: its parent becomes the
    // end of the visible branch for the prompt.
    const QList<MessageRecord> branch = storage_->messages(m->conversationId);
    if (std::none_of(branch.begin(), branch.end(), [&](const MessageRecord& r) { return r.id == messageId; })) return false;
    // A reply that failed before writing anything is not worth a version: the new one replaces it.
    const bool emptyFailure = m->state == MessageState::Failed && m->content.isEmpty();
    if (!startReply(m->conversationId, messageId)) return false;
    if (emptyFailure && storage_->deleteMessage(messageId) && m->conversationId == currentId_) showMessages();
    return true;
}

bool ChatController::editAndResend(qint64 messageId, const QString& text) {
    auto m = storage_->message(messageId);
    const QString trimmed = text.trimmed();
    if (!m || m->role != u"user" || trimmed.isEmpty()) return false;
    const qint64 id = m->conversationId;
    if (waits_.contains(id)) stopConversation(id);  // its tool calls belong to what is replaced
    if (Generation* g = generationFor(id)) {
        // The reply being written answers the old text: end it now.
        const quint64 ticket = g->ticket;
        engine_->cancel(ticket);
        endReply(ticket, MessageState::Cancelled, {}, nullptr);
    }
    // The old text stays as the earlier version, with the turns that followed it.
    MessageRecord edited;
    edited.conversationId = id;
    edited.role = QStringLiteral("user");
    edited.content = trimmed;
    const qint64 versionId = storage_->addVersion(edited, messageId);
    if (!versionId) return storageFailed(tr("Could not edit")), false;
    if (id == currentId_) showMessages();
    return startReply(id);
}

bool ChatController::switchVersion(qint64 messageId, int step) {
    auto m = storage_->message(messageId);
    if (!m || busy(m->conversationId)) return false;
    const QList<MessageRecord> versions = versionsOf(storage_->allMessages(m->conversationId), messageId);
    int at = -1;
    for (int i = 0; i < versions.size(); ++i)
        if (versions[i].id == messageId) at = i;
    const int target = at + step;
    if (at < 0 || target < 0 || target >= versions.size() || target == at) return false;
    if (!storage_->selectVersion(versions[target].id)) return storageFailed(tr("Could not show that version")), false;
    if (m->conversationId == currentId_) showMessages();
    return true;
}

bool ChatController::deleteMessage(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || busy(m->conversationId)) return false;
    DeletedMessage undo;
    undo.conversationId = m->conversationId;
    undo.before = storage_->allMessages(m->conversationId);
    for (const MessageRecord& r : std::as_const(undo.before)) {
        QList<ToolCallRecord> calls = storage_->toolCalls(r.id);
        if (!calls.isEmpty()) undo.toolCalls.insert(r.id, calls);
    }
    const bool withBranch = versionsOf(undo.before, messageId).size() > 1;
    undo.text = withBranch ? tr("Deleted a version and the turns that followed it") : tr("Deleted a message");
    if (!storage_->deleteMessage(messageId)) return storageFailed(tr("Could not delete the message")), false;
    deletedMessage_ = std::move(undo);
    unsaved_.remove(messageId);
    if (m->conversationId == currentId_) showMessages();
    refreshConversationRow(m->conversationId);
    emit undoChanged();
    return true;
}

bool ChatController::continueReply(qint64 messageId) {
    auto m = storage_->message(messageId);
    if (!m || m->role != u"assistant" || m->content.isEmpty() || busy(m->conversationId)) return false;
    // A failed reply with text (cut by an unload or reload) writes on too.
    if (m->state == MessageState::Streaming) return false;
    // Only the latest reply: the model writes on where the conversation ends.
    const QList<MessageRecord> branch = storage_->messages(m->conversationId);
    if (branch.isEmpty() || branch.last().id != messageId) return false;
    if (tools_ && storage_->toolsEnabled(m->conversationId)) {
        // The continuation is rendered from plain turns, which have no tool calls or results.
        emit notice(tr("Continue is not available while the conversation offers tools; regenerate instead."), true);
        return false;
    }
    return startReply(m->conversationId, 0, messageId);
}

void ChatController::setSettings(const QVariantMap& map) { setSettingsOf(currentId_, map); }

void ChatController::setSettingsOf(qint64 conversationId, const QVariantMap& map) {
    if (!conversationId) return;
    auto c = storage_->conversation(conversationId);
    if (!c) return;
    ConversationSettings s = c->settings;
    s.systemPrompt = map.value("systemPrompt", s.systemPrompt).toString();
    s.temperature = std::clamp(map.value("temperature", s.temperature).toDouble(), 0.0, 2.0);
    s.topP = std::clamp(map.value("topP", s.topP).toDouble(), 0.0, 1.0);
    s.topK = std::max(0, map.value("topK", s.topK).toInt());
    s.maxTokens = std::clamp(map.value("maxTokens", s.maxTokens).toInt(), 1, 1 << 20);
    s.seed = map.value("seed", s.seed).toLongLong();
    s.minP = std::clamp(map.value("minP", s.minP).toDouble(), 0.0, 1.0);
    s.repeatPenalty = std::clamp(map.value("repeatPenalty", s.repeatPenalty).toDouble(), 0.5, 2.0);
    if (map.contains(QStringLiteral("contextPolicy"))) {
        // "" follows the default; anything else must be a policy's name.
        const QString policy = map.value(QStringLiteral("contextPolicy")).toString();
        const auto known = contextPolicyFromName(policy.toStdString(), ContextPolicy(-1));
        s.contextPolicy = policy.isEmpty() || known != ContextPolicy(-1) ? policy : s.contextPolicy;
    }
    if (!storage_->setConversationSettings(conversationId, s)) return storageFailed(tr("Could not save settings"));
    if (conversationId == currentId_) announceCurrentChanged();
}

QString ChatController::suggestedFileName(qint64 id, const QString& format) const {
    auto c = storage_->conversation(id);
    QString base = c && !c->title.isEmpty() ? c->title : QStringLiteral("conversation");
    base.replace(QRegularExpression(QStringLiteral("[^\\w\\- ]+")), QString());
    base = base.simplified().replace(u' ', u'-').left(60);
    if (base.isEmpty()) base = QStringLiteral("conversation");
    return base + (format == u"json" ? QStringLiteral(".json") : QStringLiteral(".md"));
}

bool ChatController::exportConversation(qint64 id, const QUrl& file, const QString& format) {
    auto c = storage_->conversation(id);
    if (!c) return false;
    ConversationDocument doc;
    doc.conversation = *c;
    // JSON keeps every version; Markdown is the conversation as it reads on screen.
    doc.messages = format == u"json" ? storage_->allMessages(id) : storage_->messages(id);
    for (const MessageRecord& m : doc.messages) doc.toolCalls.append(storage_->toolCalls(m.id));
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly)) {
        emit notice(tr("Could not write %1: %2").arg(path, out.errorString()), true);
        return false;
    }
    out.write(format == u"json" ? exportJson(doc) : exportMarkdown(doc).toUtf8());
    if (!out.commit()) {
        emit notice(tr("Could not write %1: %2").arg(path, out.errorString()), true);
        return false;
    }
    emit notice(tr("Exported to %1").arg(path), false);
    return true;
}

qint64 ChatController::importConversation(const QUrl& file) {
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly)) {
        emit notice(tr("Could not read %1: %2").arg(path, in.errorString()), true);
        return 0;
    }
    ConversationDocument doc;
    QString error;
    if (!importJson(in.readAll(), &doc, &error)) {
        emit notice(tr("Could not import %1: %2").arg(path, error), true);
        return 0;
    }
    const qint64 id = storage_->importConversation(doc.conversation, doc.messages, doc.toolCalls, doc.parentIndex);
    if (!id) {
        storageFailed(tr("Could not import"));
        return 0;
    }
    if (!searchText_.isEmpty()) setSearchText(QString());
    reload();
    select(id);
    emit notice(tr("Imported \u201c%1\u201d").arg(doc.conversation.title), false);
    return id;
}

QString ChatController::conversationTitle(qint64 id) const {
    const int row = conversations_.rowOf(id);
    if (row >= 0) return conversations_.data(conversations_.index(row), ConversationListModel::TitleRole).toString();
    auto c = storage_->conversation(id);
    return c ? (c->title.isEmpty() ? tr("New conversation") : c->title) : QStringLiteral("conv:%1").arg(id);
}

void ChatController::copyText(const QString& text) {
    if (auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance())) app->clipboard()->setText(text);
}

} // namespace weir::desktop
