#pragma once
// What one reply asks the engine for, worked out from the stored records of
// its conversation: the prompt (plain turns, or OpenAI-shaped messages and
// tools for an agent reply), how the prompt is fitted to the context, the
// tool choice with its forced-call constraint, and the sampling settings.
// Plain data in, plain data out: no storage, no engine, no event loop, so
// ChatController reads the branch once, stores, and submits what this says.
#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine_host/ContextFit.h"
#include "storage/Records.h"
#include "weir/engine.h"

namespace weir::desktop {

struct ReplyInput {
    ConversationSettings settings;
    // The visible branch as read once for this reply (a new reply is already
    // in it, empty; a continued reply is in it with its text).
    QList<MessageRecord> branch;
    // Ended replies the database has not taken yet: they count as written.
    QHash<qint64, MessageRecord> unsaved;
    qint64 replyId = 0;      // the reply being written
    bool continuing = false; // Continue: the reply's text ends the prompt, left open
    // Agent replies: the tools offered (OpenAI JSON), the calls each stored
    // reply made (by message id), the tools a reply may be forced to call
    // (available and allowed), and what to force ("": nothing, "none": answer
    // now, "required": any tool, or a tool's name).
    bool agent = false;
    QJsonArray tools;
    QByteArray toolsText;  // the same list as text, in the schemas' own key order (may be empty)
    QHash<qint64, QList<ToolCallRecord>> toolCalls;
    QStringList forcibleTools;
    QString forceTool;
    QString modelName;  // the model that writes the reply (a continued reply's new label)
    QString defaultContextPolicy = QStringLiteral("dropOldest");
    quint64 randomSeed = 0;  // used when the settings ask for a random seed (seed < 0)
};

struct ReplyPlan {
    bool agent = false;
    // The reply as it is stored while it streams: the new (empty) one, or the
    // continued one marked streaming with its finish reason cleared. Its id is
    // 0 when the branch does not hold ReplyInput::replyId (nothing to write on).
    MessageRecord reply;
    std::vector<Message> turns;  // plain replies: the turns for EngineHost::submit
    ChatPromptInput chat;        // agent replies: for EngineHost::submitChat
    PromptPlan prompt;
    GenerateRequest request;     // sampling, length and (forced) the call's constraint
    // Each turn's (or JSON message's) stored message id, 0 for the system prompt:
    // where the context cut the engine reports is shown.
    std::vector<qint64> turnIds;
    bool forced = false;      // held to the forced-call JSON (read at the end)
    bool answerOnly = false;  // tool_choice none: answer from the results so far
    QStringList problems;     // what the user is told (a tool that cannot be forced)
};

ReplyPlan planReply(const ReplyInput& input);

// The branch as plain turns for the engine: the system prompt first (when
// set), failed and unfinished replies and empty messages left out, two turns
// of the same role in a row joined. `turnIds` gets each turn's first message.
std::vector<Message> plainTurns(const ReplyInput& input, std::vector<qint64>* turnIds);

} // namespace weir::desktop
