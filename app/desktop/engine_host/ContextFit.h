#pragma once
// Fitting a conversation into the model's context. When the next turn would
// not fit, the conversation's policy decides: stop with a message that says
// so, drop the oldest turns after the system prompt, or keep a rolling window
// of the latest turns. Runs on the engine host thread (it tokenizes), and is
// a plain function over a token counter so its rules are tested alone.
#include <functional>
#include <string>
#include <vector>

#include "weir/types/message.h"

namespace weir::desktop {

enum class ContextPolicy {
    Stop,           // refuse the turn, saying how far over the context it is
    DropOldest,     // drop the oldest turns, enough to free half the context, and keep that cut while it fits
    RollingWindow,  // send the latest turns that fit (the cut moves with every turn)
};
// "stop", "dropOldest", "rollingWindow"; unknown names give `fallback`.
const char* contextPolicyName(ContextPolicy policy);
ContextPolicy contextPolicyFromName(const std::string& name, ContextPolicy fallback);

// How to build one request's prompt (ChatController -> EngineWorker).
struct PromptPlan {
    bool continueLast = false;  // the last message is an unfinished reply to write on (Continue)
    ContextPolicy policy = ContextPolicy::Stop;
    int systemTurns = 0;        // turns at the start that are always sent (the system prompt)
    int earliestTurn = 0;       // DropOldest: the first turn the previous reply was sent; never send earlier ones
};

struct ContextFit {
    bool ok = false;
    int firstTurn = 0;       // the first turn after the system turns that is sent
    size_t promptTokens = 0; // of the prompt that is sent
    std::string error;       // when !ok: why, for the user
};

// `count` tokenizes turns (the system turns followed by turns[firstTurn..]) and
// returns the prompt length. `contextTokens` 0 means no limit. `replyTokens`
// is the room kept for the reply. A kept history starts with a user turn.
ContextFit fitToContext(const std::vector<Message>& turns, const PromptPlan& plan, size_t contextTokens,
                        size_t replyTokens, const std::function<size_t(const std::vector<Message>&)>& count);

} // namespace weir::desktop
