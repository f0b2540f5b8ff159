#include "engine_host/ContextFit.h"

#include <algorithm>

namespace weir::desktop {

const char* contextPolicyName(ContextPolicy policy) {
    switch (policy) {
    case ContextPolicy::Stop: return "stop";
    case ContextPolicy::DropOldest: return "dropOldest";
    case ContextPolicy::RollingWindow: return "rollingWindow";
    }
    return "stop";
}

ContextPolicy contextPolicyFromName(const std::string& name, ContextPolicy fallback) {
    if (name == "stop") return ContextPolicy::Stop;
    if (name == "dropOldest") return ContextPolicy::DropOldest;
    if (name == "rollingWindow") return ContextPolicy::RollingWindow;
    return fallback;
}

ContextFit fitToContext(const std::vector<Message>& turns, const PromptPlan& plan, size_t contextTokens,
                        size_t replyTokens, const std::function<size_t(const std::vector<Message>&)>& count) {
    const int n = int(turns.size());
    const int system = std::clamp(plan.systemTurns, 0, n);
    auto measure = [&](int first) {
        std::vector<Message> sent(turns.begin(), turns.begin() + system);
        sent.insert(sent.end(), turns.begin() + first, turns.end());
        return count(sent);
    };
    const size_t budget = contextTokens > replyTokens ? contextTokens - replyTokens : 0;
    auto fits = [&](size_t tokens) { return contextTokens == 0 || tokens <= budget; };

    // Where a kept history may begin: the first turn, or any user turn. The
    // last user turn (and a reply being continued after it) is always sent.
    std::vector<int> starts{system};
    int lastUser = n - 1;
    while (lastUser > system && turns[lastUser].role != "user") --lastUser;
    for (int i = system + 1; i <= lastUser; ++i)
        if (turns[i].role == "user") starts.push_back(i);

    ContextFit fit;
    const size_t all = measure(system);
    int from = 0;  // index into starts
    if (plan.policy == ContextPolicy::DropOldest)
        while (from + 1 < int(starts.size()) && starts[from] < plan.earliestTurn) ++from;
    const size_t atFrom = from == 0 ? all : measure(starts[from]);
    if (fits(atFrom)) {
        fit.ok = true;
        fit.firstTurn = starts[from];
        fit.promptTokens = atFrom;
        return fit;
    }
    const size_t needed = atFrom + replyTokens;
    if (plan.policy == ContextPolicy::Stop) {
        fit.error = "This conversation needs " + std::to_string(needed) + " tokens with room for the reply, more than "
                    "the model's context of " + std::to_string(contextTokens) + " tokens. Edit or delete earlier "
                    "messages, start a new conversation, or let Weir drop old turns (Context in the conversation "
                    "settings).";
        return fit;
    }
    // The first start that fits in `limit` (prompts shrink as the start moves on).
    auto firstFitting = [&](size_t limit, int lo) {
        int hi = int(starts.size()) - 1;
        if (measure(starts[hi]) > limit) return -1;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (measure(starts[mid]) <= limit) hi = mid;
            else lo = mid + 1;
        }
        return lo;
    };
    int chosen = firstFitting(budget, from + 1 < int(starts.size()) ? from + 1 : from);
    if (chosen < 0) {
        fit.error = "The last message alone needs " + std::to_string(measure(starts.back()) + replyTokens) +
                    " tokens with room for the reply, more than the model's context of " +
                    std::to_string(contextTokens) + " tokens. Shorten it, or lower Max tokens.";
        return fit;
    }
    if (plan.policy == ContextPolicy::DropOldest) {
        // Cut deeper, to half the budget, so the next turns fit without moving
        // the cut again (and the model's cached prefix stays usable).
        const int deeper = firstFitting(budget / 2, chosen);
        if (deeper >= 0) chosen = deeper;
    }
    fit.ok = true;
    fit.firstTurn = starts[chosen];
    fit.promptTokens = measure(fit.firstTurn);
    return fit;
}

} // namespace weir::desktop
