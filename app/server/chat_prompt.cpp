#include "app/server/chat_prompt.h"

#include <QJsonDocument>
#include <algorithm>
#include <exception>

#include "app/common/forced_tool_call.h"
#include "app/common/json_source_text.h"

namespace weir::server {

namespace {
std::string compactJson(const QJsonArray& a) {
    return QJsonDocument(a).toJson(QJsonDocument::Compact).toStdString();
}
} // namespace

bool buildChatPrompt(const ChatRequest& request, const Engine& engine, PreparedChat& out, ApiError& error) {
    ChatPromptInput input;
    // QJsonObject keeps its keys sorted, so the same request renders the same prompt.
    input.messagesJson = compactJson(request.messages);
    // The tools keep the body's key order: a schema's properties are listed to the model as the client wrote them.
    if (!request.tools.isEmpty()) input.toolsJson = common::orderedJson(request.tools, request.toolsText).toStdString();
    input.toolChoice = request.toolChoice;
    // A call that must come is constrained as JSON (forced_tool_call.h): the
    // family's call opening would not fit that form.
    input.openForcedCall = !common::forcesToolCall(request.toolChoice);
    try {
        out = engine.prepareChat(input);
    } catch (const std::exception& e) {
        // The template's own complaint (roles out of order, a tool call
        // without a reply...) is the most useful message.
        error = ApiError::invalid(QStringLiteral("messages"),
                                  QStringLiteral("The model's chat template rejected the conversation: %1")
                                      .arg(QString::fromUtf8(e.what()).left(2000)),
                                  QStringLiteral("invalid_conversation"));
        return false;
    }
    // The client's stop strings first, then the engine's not already there.
    std::vector<std::string> stop = request.gen.stop;
    for (const std::string& s : out.stop)
        if (!s.empty() && std::find(stop.begin(), stop.end(), s) == stop.end()) stop.push_back(s);
    out.stop = std::move(stop);
    return true;
}

} // namespace weir::server
