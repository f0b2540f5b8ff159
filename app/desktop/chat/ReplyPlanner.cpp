#include "chat/ReplyPlanner.h"

#include <QCoreApplication>

#include "app/common/forced_tool_call.h"
#include "app/common/json_source_text.h"
#include "chat/AgentTurns.h"

namespace weir::desktop {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("ReplyPlanner", text); }

MessageRecord asWritten(const MessageRecord& m, const QHash<qint64, MessageRecord>& unsaved) {
    auto it = unsaved.constFind(m.id);
    return it != unsaved.cend() ? it.value() : m;
}

// Agent replies: the conversation as JSON messages with its calls and results,
// and the tools. Their stored ids stand in for the turns' when the context is fitted.
void planAgentPrompt(const ReplyInput& in, ReplyPlan& plan) {
    QList<AgentTurn> turns;
    for (const MessageRecord& stored : in.branch) {
        if (stored.id == in.replyId) continue;  // the reply being written
        const MessageRecord m = asWritten(stored, in.unsaved);
        turns.append({m, m.role == u"assistant" ? in.toolCalls.value(m.id) : QList<ToolCallRecord>{}});
    }
    plan.chat.messagesJson = agentMessagesJson(in.settings.systemPrompt, turns, &plan.turnIds);
    if (!in.tools.isEmpty()) plan.chat.toolsJson = common::orderedJson(in.tools, in.toolsText).toStdString();
}

// The tool choice, and for a forced call the constraint that holds the reply
// to {"name", "arguments"} valid for the tool's schema.
void planToolChoice(const ReplyInput& in, ReplyPlan& plan) {
    ChatPromptInput& chat = plan.chat;
    plan.answerOnly = in.forceTool == u"none";
    if (in.forceTool.isEmpty() || in.tools.isEmpty()) return;
    if (in.forceTool == u"none") {
        chat.toolChoice.mode = ToolChoice::Mode::None;
    } else if (in.forceTool == u"required") {
        chat.toolChoice.mode = ToolChoice::Mode::Required;
    } else if (in.forcibleTools.contains(in.forceTool)) {
        chat.toolChoice.mode = ToolChoice::Mode::Function;
        chat.toolChoice.function = in.forceTool.toStdString();
    } else {
        plan.problems << tr("There is no tool \u201c%1\u201d to force: the reply may call any tool.").arg(in.forceTool);
    }
    if (!common::forcesToolCall(chat.toolChoice)) return;
    const OutputConstraint forcedCall{OutputConstraint::Kind::JsonSchema,
                                      common::forcedCallSchema(in.tools, chat.toolChoice, false, in.toolsText)};
    if (const std::string problem = Engine::outputConstraintProblem(forcedCall); !problem.empty()) {
        plan.problems << tr("Cannot force a call of %1: its arguments cannot be constrained (%2).")
                             .arg(in.forceTool, QString::fromStdString(problem));
        chat.toolChoice = {};
        return;
    }
    chat.openForcedCall = false;
    plan.request.constraint = forcedCall;
    plan.forced = true;
}

// Drop oldest keeps the cut of the previous reply: the turn it was first sent.
int earliestTurn(const ReplyInput& in, const std::vector<qint64>& turnIds) {
    int earliest = 0;
    for (auto it = in.branch.crbegin(); it != in.branch.crend(); ++it) {
        if (it->role != u"assistant" || it->id == in.replyId) continue;
        for (size_t i = 0; i < turnIds.size(); ++i)
            if (it->contextFromId != 0 && turnIds[i] == it->contextFromId) earliest = int(i);
        break;
    }
    return earliest;
}

GenerateRequest sampling(const ConversationSettings& s, quint64 randomSeed) {
    GenerateRequest request;
    request.maxTokens = std::max(1, s.maxTokens);
    request.sampling.temperature = float(s.temperature);
    request.sampling.topP = float(s.topP);
    request.sampling.topK = s.topK;
    request.sampling.minP = float(s.minP);
    request.sampling.repeatPenalty = float(s.repeatPenalty);
    request.sampling.seed = s.seed >= 0 ? quint64(s.seed) : randomSeed;
    return request;
}

} // namespace

std::vector<Message> plainTurns(const ReplyInput& in, std::vector<qint64>* turnIds) {
    std::vector<Message> out;
    std::vector<qint64> ids;
    auto add = [&](std::string role, std::string content, qint64 id) {
        Message m;
        m.role = std::move(role);
        m.content = std::move(content);
        out.push_back(std::move(m));
        ids.push_back(id);
    };
    if (const QString system = in.settings.systemPrompt.trimmed(); !system.isEmpty()) add("system", system.toStdString(), 0);
    for (const MessageRecord& stored : in.branch) {
        const MessageRecord m = asWritten(stored, in.unsaved);
        // A failed reply is left out, unless it is the one Continue writes on (cut by a reload).
        const bool continued = in.continuing && m.id == in.replyId;
        const bool unfinished = m.state == MessageState::Failed || m.state == MessageState::Streaming;
        if (m.role == u"assistant" && unfinished && !continued) continue;
        if (m.content.isEmpty()) continue;
        const std::string role = m.role.toStdString();
        // Templates want roles to alternate; a reply that failed leaves two user
        // turns in a row, which are sent as one.
        if (!out.empty() && out.back().role == role && role != "system") {
            out.back().content += "\n\n" + m.content.toStdString();
            continue;
        }
        add(role, m.content.toStdString(), m.id);
    }
    if (turnIds) *turnIds = std::move(ids);
    return out;
}

ReplyPlan planReply(const ReplyInput& in) {
    ReplyPlan plan;
    for (const MessageRecord& m : in.branch)
        if (m.id == in.replyId) plan.reply = m;
    if (in.continuing) {
        plan.reply.state = MessageState::Streaming;
        plan.reply.finishReason.clear();
        plan.reply.model = in.modelName;
        plan.prompt.continueLast = true;
    }
    plan.request = sampling(in.settings, in.randomSeed);
    // Continue writes on in the plain chat format (ChatController refuses it in agent sessions).
    plan.agent = in.agent && !in.continuing;
    if (plan.agent) {
        planAgentPrompt(in, plan);
        planToolChoice(in, plan);
    } else {
        plan.turns = plainTurns(in, &plan.turnIds);
    }
    plan.prompt.systemTurns = plan.turnIds.empty() || plan.turnIds.front() != 0 ? 0 : 1;
    const QString policy = in.settings.contextPolicy.isEmpty() ? in.defaultContextPolicy : in.settings.contextPolicy;
    plan.prompt.policy = contextPolicyFromName(policy.toStdString(), ContextPolicy::DropOldest);
    plan.prompt.earliestTurn = earliestTurn(in, plan.turnIds);
    return plan;
}

} // namespace weir::desktop
