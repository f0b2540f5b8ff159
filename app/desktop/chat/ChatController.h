#pragma once
// ChatController is what the chat views call (the `chat` of AppContext): it
// turns "send" into a reply, shows the open conversation's messages, and runs
// the agent loop (a reply's tool calls, then the next reply with their
// results, until the model answers or maxAgentSteps replies were tool steps).
// The jobs live in their own classes, which this puts behind one QML face:
//   ConversationController  the sidebar, selection, settings, undo, export/import
//   ReplyPlanner            stored records -> the request a reply makes (pure)
//   GenerationTracker       the live replies and their engine events
//   ReplySaver              live and ended replies into the database
//   ToolCallRunner          a reply's tool calls: approval and running
// Versions and edits of what was written are in ChatControllerEdits.cpp.
// A reply reads its conversation's branch from Storage once (startReply): the
// prompt, the context cut it keeps and the view all come from that read.
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include "chat/ConversationController.h"
#include "chat/GenerationTracker.h"
#include "chat/MessageListModel.h"
#include "chat/ReplyPlanner.h"
#include "chat/ReplySaver.h"
#include "chat/ToolCallRunner.h"
#include "storage/Records.h"

namespace weir::desktop {

class EngineHost;
class RemoteEnginesController;
class Storage;
class ToolRegistry;

// What startReply writes: `versionOf`, a new version of that reply
// instead of a new turn; `continueId`, on that reply (Continue); `step`,
// replies of this agent loop before this one; `forceTool`, a tool the
// reply must call ("none": answer now, "required": any tool); `after`, the
// message the new reply follows (0: the end of the visible branch).
struct ReplyStart {
    qint64 versionOf = 0, continueId = 0;
    int step = 0;
    QString forceTool;
    qint64 after = 0;

    static ReplyStart newVersionOf(qint64 replyId) {
        ReplyStart s;
        s.versionOf = replyId;
        return s;
    }
    static ReplyStart continuing(qint64 replyId) {
        ReplyStart s;
        s.continueId = replyId;
        return s;
    }
    // A new reply after `messageId` (the end of the branch: the user's message
    // just written, or the reply whose calls ran).
    static ReplyStart following(qint64 messageId, int step = 0, const QString& forceTool = {}) {
        ReplyStart s;
        s.after = messageId;
        s.step = step;
        s.forceTool = forceTool;
        return s;
    }
};

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
    // and the context: the local model's (0 while none is loaded), or for a
    // conversation on a remote engine what its server lists for the model
    // (0 while it has not said). contextNote says why a remote context is
    // missing ("context not reported by NAME"); contextText is the header's line.
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY contextUsageChanged)
    Q_PROPERTY(int contextTokens READ contextTokens NOTIFY contextUsageChanged)
    Q_PROPERTY(QString contextNote READ contextNote NOTIFY contextUsageChanged)
    Q_PROPERTY(QString contextText READ contextText NOTIFY contextUsageChanged)
    // The context policy of conversations that have none of their own
    // ("stop", "dropOldest", "rollingWindow"; ContextFit.h).
    Q_PROPERTY(QString defaultContextPolicy READ defaultContextPolicy WRITE setDefaultContextPolicy NOTIFY
                   defaultContextPolicyChanged)
    // Agent sessions: whether the open conversation offers the tools to the model.
    Q_PROPERTY(bool currentToolsEnabled READ currentToolsEnabled NOTIFY currentChanged)
    Q_PROPERTY(bool toolsAvailable READ toolsAvailable CONSTANT)
    Q_PROPERTY(int maxAgentSteps READ maxAgentSteps WRITE setMaxAgentSteps NOTIFY maxAgentStepsChanged)
    // The engine the open conversation's replies go to: "" (the local
    // engine) or the name of a remote endpoint (setEngine), as it is called
    // now when it was renamed.
    Q_PROPERTY(QString currentEngine READ currentEngine NOTIFY currentChanged)

public:
    ChatController(Storage* storage, EngineHost* engine, QObject* parent = nullptr);
    ~ChatController() override;

    ConversationListModel* conversations() { return list_.model(); }
    MessageListModel* messages() { return &messages_; }
    qint64 currentId() const { return list_.currentId(); }
    QString currentTitle() const { return list_.currentTitle(); }
    // Read from the database once per change of the current conversation, not on every read.
    QVariantMap currentSettings() const { return list_.currentSettings(); }
    bool currentGenerating() const { return busy(currentId()); }
    QString currentActivity() const;
    int generatingCount() const { return replies_.count(); }
    QString searchText() const { return list_.searchText(); }
    void setSearchText(const QString& text) { list_.setSearchText(text); }
    QString undoText() const { return list_.undoText(); }
    int saveIntervalMs() const { return saver_.intervalMs(); }
    // How often a reply in progress is written to the database (default 1000 ms).
    void setSaveInterval(int ms) { saver_.setInterval(ms); }
    // "" while every reply reaches the database; otherwise why they do not.
    QString saveProblem() const { return saver_.problem(); }
    // Replies whose latest text or final state is not in the database yet.
    int unsavedCount() const { return saver_.unsavedCount(); }
    // The database file was replaced (a backup restored): what waited to be
    // written belongs to the old one. Reloads the sidebar and the open conversation.
    void databaseReplaced();

    // The agent loop. Without a registry no conversation can use tools.
    void setToolRegistry(ToolRegistry* tools) {
        tools_ = tools;
        toolCalls_.setTools(tools);
    }
    bool toolsAvailable() const { return tools_ != nullptr; }

    // The remote engines a conversation may use instead of the local one.
    // Without them, a conversation on a remote engine fails its replies.
    // Conversations follow a renamed endpoint (the database is told at once,
    // and again at start and after an import for names the endpoints
    // remember as former ones); a removed one stays named in them.
    void setRemoteEngines(RemoteEnginesController* remote);
    QString currentEngine() const;
    // "" for the local engine, else a remote endpoint's name.
    Q_INVOKABLE void setEngine(qint64 conversationId, const QString& engine);
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

    Q_INVOKABLE void reload() { list_.reload(); }  // sidebar from the database
    Q_INVOKABLE qint64 newConversation() { return list_.newConversation(); }
    // Conversations nothing was written in yet (no messages, no title),
    // most recent first: Ctrl+N opens one of these before making another.
    Q_INVOKABLE QList<qint64> emptyConversations() const { return list_.emptyConversations(); }
    Q_INVOKABLE void select(qint64 id) { list_.select(id); }
    Q_INVOKABLE void rename(qint64 id, const QString& title) { list_.rename(id, title); }
    Q_INVOKABLE void remove(qint64 id) { list_.remove(id); }
    // Undoes the latest deletion: a conversation, or a message (deleteMessage).
    Q_INVOKABLE void undoRemove() { list_.undoRemove(); }
    Q_INVOKABLE void purgeRemoved() { list_.purgeRemoved(); }

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

    Q_INVOKABLE void setSettings(const QVariantMap& settings) { list_.setSettingsOf(currentId(), settings); }
    // The same for any conversation: a view saving what was typed for the
    // conversation it showed, after another one opened. Keys not in the map keep
    // their value.
    Q_INVOKABLE void setSettingsOf(qint64 conversationId, const QVariantMap& settings) {
        list_.setSettingsOf(conversationId, settings);
    }
    Q_INVOKABLE QVariantMap defaultSettings() const { return list_.defaultSettings(); }

    Q_INVOKABLE bool exportConversation(qint64 id, const QUrl& file, const QString& format) {
        return list_.exportConversation(id, file, format);
    }
    Q_INVOKABLE qint64 importConversation(const QUrl& file);
    Q_INVOKABLE QString suggestedFileName(qint64 id, const QString& format) const {
        return list_.suggestedFileName(id, format);
    }

    Q_INVOKABLE void copyText(const QString& text);
    Q_INVOKABLE QString conversationTitle(qint64 id) const { return list_.conversationTitle(id); }

    int contextUsed() const;
    int contextTokens() const;
    QString contextNote() const;
    QString contextText() const;
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
    bool startReply(qint64 conversationId, const ReplyStart& how = {});
    // Writes a new reply (a new turn or version) by `model`, empty and streaming: its id, 0 if it could not be written.
    qint64 storeNewReply(qint64 conversationId, const ReplyStart& how, const QString& model);
    ReplyInput replyInput(qint64 conversationId, const ConversationSettings& settings, const ReplyStart& how) const;
    void showStartedReply(qint64 conversationId, const ReplyStart& how, QList<MessageRecord> branch,
                          const MessageRecord& reply, const LiveReply& live);
    // Appends the user's message (and names a new conversation after it); its id, 0 if it could not be written.
    qint64 appendUserMessage(qint64 conversationId, const QString& text);
    void onReplyEnded(const LiveReply& g, MessageState state, const QString& error, const weir::Usage* usage,
                      const QString& finishReason);
    void showEndedReply(MessageRecord m);
    void continueAgent(qint64 conversationId, qint64 messageId, int step);
    void stopAtStepLimit(qint64 conversationId, qint64 messageId);

    void connectReplies();
    void connectParts();
    // Re-reads the open conversation's visible branch into the message model.
    void showMessages();
    void showBranch(const QList<MessageRecord>& branch);
    void showToolCalls(qint64 messageId);
    void flushView();
    // What a reply stores as the model that wrote it: the loaded model's name, else its file name.
    QString loadedModelName() const;
    void storageFailed(const QString& what);
    // Conversations on `from` go to `to` (an endpoint renamed).
    void followRename(const QString& from, const QString& to);
    // Every former name the endpoints remember, to the name they have now.
    void followFormerNames();
    // The open conversation's remote engine is asked for its model's context.
    void askRemoteContext();
    bool busy(qint64 conversationId) const {
        return replies_.forConversation(conversationId) || toolCalls_.waiting(conversationId);
    }

    Storage* storage_;
    EngineHost* engine_;
    ToolRegistry* tools_ = nullptr;
    RemoteEnginesController* remote_ = nullptr;
    GenerationTracker replies_;
    ReplySaver saver_;
    ToolCallRunner toolCalls_;
    ConversationController list_;
    MessageListModel messages_;
    QTimer viewTimer_;
    QString defaultContextPolicy_ = QStringLiteral("dropOldest");
    int maxAgentSteps_ = 8;
};

} // namespace weir::desktop
