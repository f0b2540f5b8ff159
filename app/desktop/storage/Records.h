#pragma once
// Plain value types for what Storage keeps: conversations, messages and tool
// calls. No Qt object model here, so they copy freely between threads.
#include <QString>
#include <QtGlobal>

namespace weir::desktop {

// Per-conversation generation settings (the conversation settings panel).
struct ConversationSettings {
    QString systemPrompt;
    double temperature = 0.8;
    double topP = 0.95;
    int topK = 40;
    double minP = 0.05;           // <= 0: off (the engine's SamplingParams default)
    double repeatPenalty = 1.0;   // 1: off
    int maxTokens = 1024;
    qint64 seed = -1;  // -1: a fresh random seed for every reply
    // What to do when the next turn would not fit in the model's context
    // (engine_host/ContextFit.h names the values); "" follows the app's default.
    QString contextPolicy;
    // Where replies are written (schema 9): "" for the local engine, else the
    // name of a remote endpoint (RemoteEnginesController). Kept with the
    // settings so it is stored, exported and imported with them.
    QString engine;
};

struct ConversationRecord {
    qint64 id = 0;
    QString title;
    qint64 createdAt = 0;   // ms since the epoch (UTC)
    qint64 updatedAt = 0;
    qint64 deletedAt = 0;   // 0 = live; otherwise deleted, undoable until purged
    ConversationSettings settings;
};

// Lifecycle of a message. A reply is Streaming while it generates; a reply
// found Streaming when the database opens was cut off by a crash or kill and
// becomes Interrupted.
enum class MessageState { Complete, Streaming, Interrupted, Cancelled, Failed };
QString messageStateName(MessageState s);
MessageState messageStateFromName(const QString& name);

// Messages form a tree (schema 4): each follows its parent, and the messages
// that follow the same parent are the versions of one turn (an edit or a
// regeneration adds one; nothing is deleted). One version per turn is active;
// the conversation on screen, and what the model is sent, is the branch that
// starts at the active first turn and follows the active version at each step.
struct MessageRecord {
    qint64 id = 0;
    qint64 conversationId = 0;
    int position = 0;        // order of writing within the conversation (a parent comes before its children)
    qint64 parentId = 0;     // the message this one follows; 0: the first turn
    bool active = true;      // the version shown among the messages that follow the same parent
    QString role;            // "system", "user", "assistant", "tool"
    QString content;
    MessageState state = MessageState::Complete;
    QString error;           // engine error for Failed replies
    int promptTokens = 0, completionTokens = 0, cachedTokens = 0;
    double tokensPerSecond = 0, timeToFirstTokenMs = 0;
    // Replies: speculative decoding's draft tokens (guessed from earlier text)
    // verified, and how many of them the model kept. 0: none were verified.
    int draftTokens = 0, acceptedDraftTokens = 0;
    qint64 createdAt = 0, updatedAt = 0;
    QString finishReason;    // replies: "length" when it stopped at Max tokens, "stop" when the model ended it
    // Replies: the first message (after the system prompt) the model was sent;
    // the earlier ones did not fit in its context. 0: all were sent.
    qint64 contextFromId = 0;
    // Replies: the name of the model that wrote it (schema 8; "" for older replies).
    QString model;
    // Filled by Storage::messages() (the visible branch): which version of its
    // turn this is (from 0) and how many the turn has.
    int versionIndex = 0, versionCount = 1;
};

struct ToolCallRecord {
    qint64 id = 0;
    qint64 messageId = 0;
    QString callId;          // the model's id for the call
    QString name;
    QString arguments;       // JSON text
    QString result;          // tool output, empty until it ran
    qint64 createdAt = 0;
    // pending (waits for the user's approval), approved, running, done,
    // failed, denied. Calls of older versions are "done".
    QString state = QStringLiteral("done");
    double durationMs = 0;   // how long the tool ran
};

} // namespace weir::desktop
