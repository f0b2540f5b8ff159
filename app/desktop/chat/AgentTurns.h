#pragma once
// The pieces of the agent loop that are plain data work, kept apart from
// ChatController's bookkeeping: the conversation as OpenAI-shaped JSON (each
// reply's tool calls, then one tool turn per call with its result), and a
// tool call as the map a card in the chat view shows.
#include <QList>
#include <QString>
#include <QVariantMap>
#include <string>

#include "storage/Records.h"

namespace weir::desktop {

class Storage;

// A message with the calls it made (empty for most).
struct AgentTurn {
    MessageRecord message;
    QList<ToolCallRecord> calls;
};

// Messages JSON for Engine::prepareChat: the system prompt first (when set),
// failed and unfinished replies left out, two user turns in a row joined (as
// the plain chat path does), calls that did not run answered with why.
// `entryIds`, when given, gets the stored message each JSON entry came from
// (0 for the system prompt; a tool result has its call's assistant message;
// joined user turns the first one's), for where the context cut is shown.
std::string agentMessagesJson(const QString& systemPrompt, const QList<AgentTurn>& turns,
                              std::vector<qint64>* entryIds = nullptr);

QVariantMap toolCallMap(const ToolCallRecord& call);

// True once a call can no longer change: done, failed or denied.
bool toolCallFinished(const QString& state);

} // namespace weir::desktop
