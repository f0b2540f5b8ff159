#include "chat/RemoteChatBody.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace weir::desktop {
namespace {

QJsonArray jsonArray(const std::string& text) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(text)).array();
}

QJsonArray plainMessages(const std::vector<Message>& turns) {
    QJsonArray out;
    for (const Message& m : turns)
        out.append(QJsonObject{{"role", QString::fromStdString(m.role)}, {"content", QString::fromStdString(m.content)}});
    return out;
}

// OpenAI's tool_choice; none for "auto" (the server's default). A forced
// function goes as "required" with that tool alone offered (toolsFor): the
// same constraint, in the form every server reads. llama.cpp's server takes
// tool_choice only as a string and answers a named one as "auto", silently.
QJsonValue toolChoiceOf(const ToolChoice& choice) {
    switch (choice.mode) {
    case ToolChoice::Mode::None: return QStringLiteral("none");
    case ToolChoice::Mode::Required:
    case ToolChoice::Mode::Function: return QStringLiteral("required");
    case ToolChoice::Mode::Auto: break;
    }
    return QJsonValue::Undefined;
}

QJsonArray toolsFor(const QJsonArray& tools, const ToolChoice& choice) {
    if (choice.mode != ToolChoice::Mode::Function) return tools;
    const QString forced = QString::fromStdString(choice.function);
    QJsonArray only;
    for (const QJsonValue& t : tools)
        if (t[QLatin1String("function")][QLatin1String("name")].toString() == forced) only.append(t);
    return only;
}

} // namespace

QJsonObject remoteChatBody(const ReplyPlan& plan, const ConversationSettings& settings) {
    QJsonObject body;
    if (plan.agent) {
        body.insert(QStringLiteral("messages"), jsonArray(plan.chat.messagesJson));
        if (const QJsonArray tools = toolsFor(jsonArray(plan.chat.toolsJson), plan.chat.toolChoice); !tools.isEmpty()) {
            body.insert(QStringLiteral("tools"), tools);
            // A forced call is the server's tool_choice here, not a local constraint.
            if (const QJsonValue choice = toolChoiceOf(plan.chat.toolChoice); !choice.isUndefined())
                body.insert(QStringLiteral("tool_choice"), choice);
        }
    } else {
        body.insert(QStringLiteral("messages"), plainMessages(plan.turns));
        if (plan.prompt.continueLast && !plan.turns.empty() && plan.turns.back().role == "assistant") {
            // Continue: the reply's text is the last message, left open. vLLM
            // and SGLang read these two fields; other servers answer it anew
            // (the new text still adds to the reply).
            body.insert(QStringLiteral("continue_final_message"), true);
            body.insert(QStringLiteral("add_generation_prompt"), false);
        }
    }
    const GenerateRequest& r = plan.request;
    body.insert(QStringLiteral("temperature"), double(r.sampling.temperature));
    body.insert(QStringLiteral("top_p"), double(r.sampling.topP));
    body.insert(QStringLiteral("max_tokens"), r.maxTokens);
    if (settings.seed >= 0) body.insert(QStringLiteral("seed"), settings.seed);
    if (!r.stop.empty()) {
        QJsonArray stop;
        for (const std::string& s : r.stop) stop.append(QString::fromStdString(s));
        body.insert(QStringLiteral("stop"), stop);
    }
    return body;
}

} // namespace weir::desktop
