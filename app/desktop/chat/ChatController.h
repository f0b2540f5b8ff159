#pragma once
// ChatController is what the chat views call: it owns the sidebar and message
// models, turns "send" into an engine request, streams the reply into its
// conversation (on screen or not), and keeps Storage up to date: a reply in
// progress is saved every second, so a killed process loses at most that.
// A reply that cannot be written (disk full, file not writable) stays on
// screen marked "not saved" and is written again on every save tick until the
// database takes it; saveProblem says why meanwhile (a banner).
// A conversation with tools switched on is an agent session: the reply's tool
// calls become cards (stored in tool_calls), run when approved (ToolRegistry,
// off the GUI thread), and their results go back as tool turns until the
// model answers or maxAgentSteps replies were tool steps.
#include <QElapsedTimer>
#include <optional>
#include <QHash>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <memory>

#include "chat/ConversationListModel.h"
#include "chat/MessageListModel.h"
#include "tools/Tool.h"
#include "weir/engine.h"
#include "weir/tool_calls.h"
#include "storage/Records.h"

namespace weir::desktop {

class EngineHost;
class Storage;
class ToolCallHandoff;
class ToolRegistry;

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ChatController is created by the app")
    Q_PROPERTY(ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(qint64 currentId READ currentId NOTIFY currentChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
    Q_PROPERTY(QVariantMap currentSettings READ currentSettings NOTIFY currentChanged)
    Q_PROPERTY(bool currentGenerating READ currentGenerating NOTIFY generationsChanged)
    Q_PROPERTY(QString currentActivity READ currentActivity NOTIFY generationsChanged)
    Q_PROPERTY(int generatingCount READ generatingCount NOTIFY generationsChanged)
    Q_PROPERTY(QString searchText READ searchText WRITE setSearchText NOTIFY searchTextChanged)
    Q_PROPERTY(QString undoText READ undoText NOTIFY undoChanged)
    Q_PROPERTY(int saveIntervalMs READ saveIntervalMs CONSTANT)
    Q_PROPERTY(QString saveProblem READ saveProblem NOTIFY saveProblemChanged)
    Q_PROPERTY(int unsavedCount READ unsavedCount NOTIFY saveProblemChanged)
    // How much of the model's context the open conversation uses (its latest
    // reply's prompt and completion, or the prompt of the reply being written),
    // and the context (0 while no model is loaded).
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY contextUsageChanged)
    Q_PROPERTY(int contextTokens READ contextTokens NOTIFY contextUsageChanged)
    // The context policy of conversations that have none of their own
    // ("stop", "dropOldest", "rollingWindow"; ContextFit.h).
    Q_PROPERTY(QString defaultContextPolicy READ defaultContextPolicy WRITE setDefaultContextPolicy NOTIFY
                   defaultContextPolicyChanged)
    // Agent sessions: whether the open conversation offers the tools to the model.
    Q_PROPERTY(bool currentToolsEnabled READ currentToolsEnabled NOTIFY currentChanged)
    Q_PROPERTY(bool toolsAvailable READ toolsAvailable CONSTANT)
    Q_PROPERTY(int maxAgentSteps READ maxAgentSteps WRITE setMaxAgentSteps NOTIFY maxAgentStepsChanged)

public:
    ChatController(Storage* storage, EngineHost* engine, QObject* parent = nullptr);
    ~ChatController() override;

    ConversationListModel* conversations() { return &conversations_; }
    MessageListModel* messages() { return &messages_; }
    qint64 currentId() const { return currentId_; }
    QString currentTitle() const;
    QVariantMap currentSettings() const;
    bool currentGenerating() const { return busy(currentId_); }
    QString currentActivity() const;
    int generatingCount() const { return int(generations_.size()); }
    QString searchText() const { return searchText_; }
    void setSearchText(const QString& text);
    QString undoText() const;
    int saveIntervalMs() const { return saveTimer_.interval(); }
    // How often a reply in progress is written to the database (default 1000 ms).
    void setSaveInterval(int ms) { saveTimer_.setInterval(ms); }
    // "" while every reply reaches the database; otherwise why they do not.
    QString saveProblem() const { return saveProblem_; }
    // Replies whose latest text or final state is not in the database yet.
    int unsavedCount() const;
    // The database file was replaced (a backup restored): what waited to be
    // written belongs to the old one. Reloads the sidebar and the open conversation.
    void databaseReplaced();

    // The agent loop. Without a registry no conversation can use tools.
    void setToolRegistry(ToolRegistry* tools) { tools_ = tools; }
    bool toolsAvailable() const { return tools_ != nullptr; }
    bool currentToolsEnabled() const;
    Q_INVOKABLE void setToolsEnabled(qint64 conversationId, bool enabled);
    // Model replies in a row one user message may lead to (each tool turn is
    // one); the loop stops there with a message. Default 8.
    int maxAgentSteps() const { return maxAgentSteps_; }
    void setMaxAgentSteps(int steps);
    // Sends like sendTo, with the first reply forced to call a tool:
    // "required" (any tool) or a tool's name, through constrained decoding
    // (the reply can only be {"name", "arguments"} valid for the schema).
    // "none" offers no tool (answer from the results so far); "" is sendTo.
    // Turns tools on for the conversation.
    Q_INVOKABLE bool sendForcing(qint64 conversationId, const QString& text, const QString& forceTool);
    // The user's decision on a call waiting for approval (by its row id).
    Q_INVOKABLE void approveToolCall(qint64 callId);
    Q_INVOKABLE void denyToolCall(qint64 callId);

    Q_INVOKABLE void reload();  // sidebar from the database
    Q_INVOKABLE qint64 newConversation();
    // Conversations nothing was written in yet (no messages, no title),
    // most recent first: Ctrl+N opens one of these before making another.
    Q_INVOKABLE QList<qint64> emptyConversations() const;
    Q_INVOKABLE void select(qint64 id);
    Q_INVOKABLE void rename(qint64 id, const QString& title);
    Q_INVOKABLE void remove(qint64 id);
    // Undoes the latest deletion: a conversation, or a message (deleteMessage).
    Q_INVOKABLE void undoRemove();
    Q_INVOKABLE void purgeRemoved();

    // Sends `text` as a user message in the current conversation (creating one
    // if none is open) and starts a reply. False if there is nothing to send.
    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE bool sendTo(qint64 conversationId, const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void stopConversation(qint64 conversationId);
    Q_INVOKABLE void stopAll();
    // Versions: nothing is deleted. regenerate() writes a new version of the
    // latest reply, regenerateMessage() of any reply; editAndResend() adds a
    // version of a user message with the new text and answers it. The turns
    // after a message belong to the version they followed.
    Q_INVOKABLE bool regenerate();
    Q_INVOKABLE bool regenerateMessage(qint64 messageId);
    Q_INVOKABLE bool editAndResend(qint64 messageId, const QString& text);
    // Shows the version `step` away (-1 previous, +1 next) of the turn of
    // `messageId`, with the turns that followed it. Not while the conversation generates.
    Q_INVOKABLE bool switchVersion(qint64 messageId, int step);
    // Deletes one message (see Storage::deleteMessage). Not while the conversation generates.
    Q_INVOKABLE bool deleteMessage(qint64 messageId);
    // Writes more of a reply (the latest one, not generating, with text): the
    // model continues its text in the same message; usage adds up.
    Q_INVOKABLE bool continueReply(qint64 messageId);
    // A reply is generating or the agent loop waits for its tools.
    Q_INVOKABLE bool isGenerating(qint64 conversationId) const { return busy(conversationId); }

    Q_INVOKABLE void setSettings(const QVariantMap& settings);
    // The same for any conversation: a view saving what was typed for the
    // conversation it showed, after another one opened. Keys not in the map keep
    // their value.
    Q_INVOKABLE void setSettingsOf(qint64 conversationId, const QVariantMap& settings);
    Q_INVOKABLE QVariantMap defaultSettings() const;

    Q_INVOKABLE bool exportConversation(qint64 id, const QUrl& file, const QString& format);
    Q_INVOKABLE qint64 importConversation(const QUrl& file);
    Q_INVOKABLE QString suggestedFileName(qint64 id, const QString& format) const;

    Q_INVOKABLE void copyText(const QString& text);
    Q_INVOKABLE QString conversationTitle(qint64 id) const;

    int contextUsed() const;
    int contextTokens() const;
    QString defaultContextPolicy() const { return defaultContextPolicy_; }
    void setDefaultContextPolicy(const QString& policy);

signals:
    void currentChanged();
    void generationsChanged();
    void searchTextChanged();
    void undoChanged();
    void saveProblemChanged();
    // A short message for the user (toast); error = true for failures.
    void notice(const QString& text, bool error);
    // A reply in progress was written to the database (`length` characters).
    void replySaved(qint64 conversationId, qint64 messageId, int length);
    void replyStarted(qint64 conversationId, qint64 messageId);
    void replyTokens(qint64 conversationId, int totalTokens);
    void replyEnded(qint64 conversationId, qint64 messageId, const QString& state);
    void contextUsageChanged();
    void defaultContextPolicyChanged();
    void maxAgentStepsChanged();
    // A tool call was made or changed state (pending, approved, running, done, failed, denied).
    void toolCallChanged(qint64 conversationId, qint64 callId, const QString& state);
    // The agent loop of a conversation ended: "answered", "step limit", "stopped" or "failed".
    void agentFinished(qint64 conversationId, const QString& how);

private:
    // Re-reads the current conversation's settings, then emits currentChanged.
    void announceCurrentChanged();
    struct Generation {
        qint64 conversationId = 0, messageId = 0;
        quint64 ticket = 0;
        QString text;
        int tokens = 0;
        bool dirty = false;       // text not yet in the database
        bool viewDirty = false;   // text not yet in the message model
        bool saveFailed = false;  // the last attempt to save the text failed
        QElapsedTimer clock;
        double firstTokenMs = -1;
        QString activity = QStringLiteral("waiting");
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
    };

    // `versionOf`: the reply becomes a new version of that reply instead of a
    // new turn. `continueId`: write on that reply instead (Continue).
    // `step`: replies of this agent loop before this one; `forceTool`: a tool
    // the reply must call ("none": answer now, "required": any tool);
    // `after`: the message the new reply follows (0: the end of the visible branch).
    bool startReply(qint64 conversationId, qint64 versionOf = 0, qint64 continueId = 0, int step = 0,
                    const QString& forceTool = {}, qint64 after = 0);
    // The visible branch as turns for the engine; `turnIds` (if given) gets
    // each turn's first message id (0 for the system prompt).
    std::vector<Message> history(qint64 conversationId, const ConversationSettings& s,
                                 std::vector<qint64>* turnIds = nullptr) const;
    // Re-reads the open conversation's visible branch into the message model.
    void showMessages();
    void onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens);
    // A reply's tool calls being approved and run; the loop continues when all are finished.
    struct AgentWait {
        qint64 messageId = 0;
        int step = 0;
        QList<ToolCallRecord> calls;
        QHash<qint64, QElapsedTimer> clocks;  // running calls, by id
    };

    bool busy(qint64 conversationId) const { return generationFor(conversationId) || waits_.contains(conversationId); }
    void readAgentReply(Generation& g, QString* text) const;
    void startToolCalls(qint64 conversationId, qint64 messageId, int step, const std::vector<ToolCall>& calls);
    void runToolCall(qint64 conversationId, ToolCallRecord& call);
    void setToolCallState(qint64 conversationId, ToolCallRecord& call);
    void toolCallEnded(qint64 conversationId, qint64 callId, const ToolResult& result);
    void continueAgent(qint64 conversationId);
    void showToolCalls(qint64 messageId);
    ToolCallRecord* waitingCall(qint64 callId, qint64* conversationId);
    Generation* generationFor(qint64 conversationId);
    const Generation* generationFor(qint64 conversationId) const;
    void endReply(quint64 ticket, MessageState state, const QString& error, const Usage* usage,
                  const QString& finishReason = {});
    void onTokens(quint64 ticket, const QString& text, int count);
    void onStatus(const CacheStatus& status);
    void saveProgress();
    void flushView();
    void refreshConversationRow(qint64 id);
    void storageFailed(const QString& what);
    void replyWriteFailed();   // a reply could not be written: say why (storage_->lastProblem())
    void retryUnsaved();
    void updateSaveProblem();  // clears saveProblem once nothing waits

    Storage* storage_;
    EngineHost* engine_;
    ConversationListModel conversations_;
    MessageListModel messages_;
    qint64 currentId_ = 0;
    QVariantMap currentSettings_;   // of currentId_, refreshed by announceCurrentChanged()
    QString searchText_;
    QList<QPair<qint64, QString>> removed_;   // undo stack: id, title
    // The undo of the latest deleteMessage (offered while it is the latest
    // thing deleted): the conversation's messages and tool calls before it.
    struct DeletedMessage {
        qint64 conversationId = 0;
        QString text;  // what the undo offer says
        QList<MessageRecord> before;
        QHash<qint64, QList<ToolCallRecord>> toolCalls;
    };
    std::optional<DeletedMessage> deletedMessage_;
    QHash<quint64, Generation> generations_;  // by ticket
    QHash<qint64, MessageRecord> unsaved_;    // ended replies the database has not taken yet, by message id
    QString saveProblem_;
    QTimer saveTimer_, viewTimer_;
    QString defaultContextPolicy_ = QStringLiteral("dropOldest");
    int lastContextTokens_ = 0;  // from the engine's last promptPrepared
    ToolRegistry* tools_ = nullptr;
    int maxAgentSteps_ = 8;
    QHash<qint64, AgentWait> waits_;          // by conversation
};

} // namespace weir::desktop
