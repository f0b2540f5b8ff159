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
    int maxTokens = 1024;
    qint64 seed = -1;  // -1: a fresh random seed for every reply
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

struct MessageRecord {
    qint64 id = 0;
    qint64 conversationId = 0;
    int position = 0;        // order within the conversation, from 0
    QString role;            // "system", "user", "assistant", "tool"
    QString content;
    MessageState state = MessageState::Complete;
    QString error;           // engine error for Failed replies
    int promptTokens = 0, completionTokens = 0, cachedTokens = 0;
    double tokensPerSecond = 0, timeToFirstTokenMs = 0;
    qint64 createdAt = 0, updatedAt = 0;
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
