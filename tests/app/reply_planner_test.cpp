// The reply planner alone, on records built here (no database, no engine, no
// event loop): which stored turns a reply is sent and how they are joined,
// replies the database has not taken yet, Continue, the sampling settings and
// seed, the context policy and the kept cut, and for agent replies the tools,
// the calls and results in the JSON, and what forcing a tool does.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "chat/ReplyPlanner.h"

using namespace weir;
using namespace weir::desktop;

namespace {

MessageRecord record(qint64 id, const QString& role, const QString& content,
                     MessageState state = MessageState::Complete) {
    MessageRecord m;
    m.id = id;
    m.conversationId = 1;
    m.role = role;
    m.content = content;
    m.state = state;
    return m;
}

// A new reply as ChatController stores it before planning: empty, streaming, last.
MessageRecord newReply(qint64 id) { return record(id, QStringLiteral("assistant"), {}, MessageState::Streaming); }

QJsonArray calculatorTool() {
    const QJsonObject parameters{{"type", "object"},
                                 {"properties", QJsonObject{{"expression", QJsonObject{{"type", "string"}}}}},
                                 {"required", QJsonArray{"expression"}}};
    return {QJsonObject{{"type", "function"},
                        {"function", QJsonObject{{"name", "calculator"},
                                                 {"description", "Evaluates arithmetic."},
                                                 {"parameters", parameters}}}}};
}

ReplyInput agentInput(const QString& forceTool) {
    ReplyInput in;
    in.agent = true;
    in.tools = calculatorTool();
    in.forcibleTools = {QStringLiteral("calculator")};
    in.forceTool = forceTool;
    in.branch = {record(1, "user", "What is 2+3?"), newReply(2)};
    in.replyId = 2;
    return in;
}

QJsonArray messagesOf(const ReplyPlan& plan) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(plan.chat.messagesJson)).array();
}

} // namespace

class ReplyPlannerTest : public QObject {
    Q_OBJECT

private slots:
    void plainTurnsLeaveOutWhatWasNotAnswered() {
        ReplyInput in;
        in.settings.systemPrompt = QStringLiteral("  Be brief.  ");
        in.branch = {record(1, "user", "one"),
                     record(2, "assistant", "", MessageState::Failed),
                     record(3, "user", "two"),
                     record(4, "assistant", "answer"),
                     record(5, "assistant", "half", MessageState::Failed),
                     record(6, "user", "three"),
                     newReply(7)};
        in.replyId = 7;
        const ReplyPlan plan = planReply(in);
        QVERIFY(!plan.agent);
        QCOMPARE(plan.reply.id, 7);
        QCOMPARE(plan.turns.size(), size_t(4));
        QCOMPARE(plan.turns[0].role, std::string("system"));
        QCOMPARE(plan.turns[0].content, std::string("Be brief."));
        // The failed reply leaves two user turns in a row: sent as one, under the first one's id.
        QCOMPARE(plan.turns[1].content, std::string("one\n\ntwo"));
        QCOMPARE(plan.turns[2].content, std::string("answer"));
        QCOMPARE(plan.turns[3].content, std::string("three"));
        QCOMPARE(plan.turnIds, (std::vector<qint64>{0, 1, 4, 6}));
        QCOMPARE(plan.prompt.systemTurns, 1);
        QVERIFY(!plan.prompt.continueLast);
    }

    void unsavedRepliesCountAsWritten() {
        ReplyInput in;
        in.branch = {record(1, "user", "hi"), record(2, "assistant", "stale"), record(3, "user", "again"), newReply(4)};
        in.unsaved.insert(2, record(2, "assistant", "as the user saw it"));
        in.replyId = 4;
        const ReplyPlan plan = planReply(in);
        QCOMPARE(plan.turns.size(), size_t(3));
        QCOMPARE(plan.turns[1].content, std::string("as the user saw it"));
        QCOMPARE(plan.prompt.systemTurns, 0);
    }

    void continueEndsThePromptWithTheReply() {
        ReplyInput in;
        MessageRecord reply = record(2, "assistant", "Once upon");
        reply.finishReason = QStringLiteral("length");
        reply.promptTokens = 7;
        in.branch = {record(1, "user", "A story"), reply};
        in.replyId = 2;
        in.continuing = true;
        in.agent = true;  // Continue is plain turns even where tools are on
        const ReplyPlan plan = planReply(in);
        QVERIFY(!plan.agent);
        QVERIFY(plan.prompt.continueLast);
        QCOMPARE(plan.turns.back().content, std::string("Once upon"));
        QCOMPARE(plan.reply.id, 2);
        QCOMPARE(plan.reply.state, MessageState::Streaming);
        QVERIFY(plan.reply.finishReason.isEmpty());
        QCOMPARE(plan.reply.content, QStringLiteral("Once upon"));
        QCOMPARE(plan.reply.promptTokens, 7);
    }

    // A reply cut by a reload is stored failed with its text: Continue writes
    // on from that text, while other failed replies stay out of the prompt.
    void continueWritesOnAFailedReply() {
        ReplyInput in;
        in.branch = {record(1, "user", "first"), record(2, "assistant", "lost", MessageState::Failed),
                     record(3, "user", "second"), record(4, "assistant", "cut sho", MessageState::Failed)};
        in.replyId = 4;
        in.continuing = true;
        const ReplyPlan plan = planReply(in);
        QCOMPARE(plan.turns.size(), size_t(2));
        QCOMPARE(plan.turns[0].content, std::string("first\n\nsecond"));
        QCOMPARE(plan.turns[1].role, std::string("assistant"));
        QCOMPARE(plan.turns[1].content, std::string("cut sho"));
        QCOMPARE(plan.reply.state, MessageState::Streaming);
    }

    void continueOfAReplyNotInTheBranchPlansNothingToWrite() {
        ReplyInput in;
        in.branch = {record(1, "user", "A story")};
        in.replyId = 9;
        in.continuing = true;
        QCOMPARE(planReply(in).reply.id, 0);
    }

    void samplingComesFromTheSettings() {
        ReplyInput in;
        in.settings.temperature = 0.3;
        in.settings.topP = 0.8;
        in.settings.topK = 12;
        in.settings.minP = 0.05;
        in.settings.repeatPenalty = 1.2;
        in.settings.maxTokens = 0;
        in.settings.seed = 42;
        in.randomSeed = 777;
        in.branch = {record(1, "user", "hi")};
        GenerateRequest r = planReply(in).request;
        QCOMPARE(r.sampling.temperature, 0.3f);
        QCOMPARE(r.sampling.topP, 0.8f);
        QCOMPARE(r.sampling.topK, 12);
        QCOMPARE(r.sampling.minP, 0.05f);
        QCOMPARE(r.sampling.repeatPenalty, 1.2f);
        QCOMPARE(r.maxTokens, 1);  // at least one token
        QCOMPARE(r.sampling.seed, quint64(42));
        QCOMPARE(r.constraint.kind, OutputConstraint::Kind::None);
        in.settings.seed = -1;  // a new seed for every reply: the caller's random one
        QCOMPARE(planReply(in).request.sampling.seed, quint64(777));
    }

    void contextPolicyAndTheKeptCut() {
        ReplyInput in;
        MessageRecord previous = record(4, "assistant", "b");
        previous.contextFromId = 3;  // the previous reply was sent from message 3 on
        in.branch = {record(1, "user", "x"), record(2, "assistant", "a"), record(3, "user", "y"), previous,
                     record(5, "user", "z"), newReply(6)};
        in.replyId = 6;
        in.defaultContextPolicy = QStringLiteral("rollingWindow");
        ReplyPlan plan = planReply(in);
        QCOMPARE(plan.prompt.policy, ContextPolicy::RollingWindow);
        QCOMPARE(plan.prompt.earliestTurn, 2);  // turn 2 is message 3
        in.settings.contextPolicy = QStringLiteral("stop");
        QCOMPARE(planReply(in).prompt.policy, ContextPolicy::Stop);
        in.settings.contextPolicy = QStringLiteral("no such policy");
        QCOMPARE(planReply(in).prompt.policy, ContextPolicy::DropOldest);
    }

    void agentRepliesSendCallsAndResultsAsJson() {
        ReplyInput in = agentInput({});
        ToolCallRecord call;
        call.id = 10;
        call.messageId = 2;
        call.callId = QStringLiteral("call_2_0");
        call.name = QStringLiteral("calculator");
        call.arguments = QStringLiteral(R"({"expression":"2+3"})");
        call.state = QStringLiteral("done");
        call.result = QStringLiteral("5");
        in.branch = {record(1, "user", "What is 2+3?"), record(2, "assistant", ""), newReply(3)};
        in.toolCalls.insert(2, {call});
        in.replyId = 3;
        const ReplyPlan plan = planReply(in);
        QVERIFY(plan.agent);
        QVERIFY(plan.turns.empty());
        const QJsonArray messages = messagesOf(plan);
        QCOMPARE(messages.size(), 3);  // user, the call, its result; the new reply is not sent
        QCOMPARE(messages[1].toObject().value("tool_calls").toArray().size(), 1);
        QCOMPARE(messages[2].toObject().value("role").toString(), QStringLiteral("tool"));
        QCOMPARE(messages[2].toObject().value("content").toString(), QStringLiteral("5"));
        QCOMPARE(plan.turnIds, (std::vector<qint64>{1, 2, 2}));
        QVERIFY(QByteArray::fromStdString(plan.chat.toolsJson).contains("calculator"));
        QCOMPARE(plan.chat.toolChoice.mode, ToolChoice::Mode::Auto);
        QVERIFY(!plan.forced);
        QVERIFY(plan.problems.isEmpty());
    }

    void forcingANamedToolHoldsTheReplyToItsCall() {
        const ReplyPlan plan = planReply(agentInput(QStringLiteral("calculator")));
        QCOMPARE(plan.chat.toolChoice.mode, ToolChoice::Mode::Function);
        QCOMPARE(plan.chat.toolChoice.function, std::string("calculator"));
        QVERIFY(plan.forced);
        QVERIFY(!plan.chat.openForcedCall);
        QCOMPARE(plan.request.constraint.kind, OutputConstraint::Kind::JsonSchema);
        QVERIFY(QByteArray::fromStdString(plan.request.constraint.schema).contains("expression"));
    }

    // A tool whose properties are not in alphabetical order keeps its own
    // order (the tools' text) in the prompt's tool list and in the forced
    // call's schema, so the call's arguments come as city, address, zip.
    void forcedArgumentsKeepTheToolsOrder() {
        ReplyInput in = agentInput(QStringLiteral("find_place"));
        in.toolsText = R"([{"type": "function", "function": {"name": "find_place", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "address": {"type": "string"}, "zip": {"type": "string"}}}}}])";
        in.tools = QJsonDocument::fromJson(in.toolsText).array();
        in.forcibleTools = {QStringLiteral("find_place")};
        const ReplyPlan plan = planReply(in);
        QVERIFY(plan.forced);
        for (const std::string& text : {plan.request.constraint.schema, plan.chat.toolsJson}) {
            const size_t city = text.find("\"city\""), address = text.find("\"address\""), zip = text.find("\"zip\"");
            QVERIFY2(city != std::string::npos && city < address && address < zip, text.c_str());
        }
    }

    void requiredForcesAnyTool() {
        const ReplyPlan plan = planReply(agentInput(QStringLiteral("required")));
        QCOMPARE(plan.chat.toolChoice.mode, ToolChoice::Mode::Required);
        QVERIFY(plan.forced);
        QCOMPARE(plan.request.constraint.kind, OutputConstraint::Kind::JsonSchema);
    }

    void noneAsksForAnAnswer() {
        const ReplyPlan plan = planReply(agentInput(QStringLiteral("none")));
        QCOMPARE(plan.chat.toolChoice.mode, ToolChoice::Mode::None);
        QVERIFY(plan.answerOnly);
        QVERIFY(!plan.forced);
        QCOMPARE(plan.request.constraint.kind, OutputConstraint::Kind::None);
    }

    void aToolThatCannotBeForcedIsSaidAndLeftFree() {
        ReplyInput in = agentInput(QStringLiteral("shell"));
        const ReplyPlan plan = planReply(in);
        QCOMPARE(plan.chat.toolChoice.mode, ToolChoice::Mode::Auto);
        QVERIFY(!plan.forced);
        QCOMPARE(plan.request.constraint.kind, OutputConstraint::Kind::None);
        QCOMPARE(plan.problems.size(), 1);
        QVERIFY(plan.problems[0].contains(QStringLiteral("shell")));
    }
};

QTEST_APPLESS_MAIN(ReplyPlannerTest)
#include "reply_planner_test.moc"
