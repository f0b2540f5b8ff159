#pragma once
// The body of an OpenAI chat request (POST /chat/completions) for a reply
// written by a remote engine, from what the planner worked out for it: the
// messages (plain turns, or the agent's JSON messages with their calls and
// results), the tools and the tool choice, and the sampling settings an
// OpenAI-compatible server reads. RemoteChatClient adds model and stream.
#include <QJsonObject>

#include "chat/ReplyPlanner.h"
#include "storage/Records.h"

namespace weir::desktop {

// `settings`: the conversation's own, for what the plan resolved already (a
// seed is sent only when the user set one, never the random one).
QJsonObject remoteChatBody(const ReplyPlan& plan, const ConversationSettings& settings);

} // namespace weir::desktop
