#include "app/server/chat_prompt.h"

#include <algorithm>
#include <exception>

#include "weir/base/error.h"

namespace weir::server {

bool buildChatPrompt(const ChatRequest& request, const ChatTemplate& chat, const ToolFormat& tools, ChatPrompt& out,
                     ApiError& error) {
    out = ChatPrompt{};
    const bool haveTools = request.tools.isList() && !request.tools.asList().empty();
    out.toolsActive = haveTools && request.toolChoice.mode != ToolChoice::Mode::None;
    try {
        ChatRenderOptions options;
        options.addGenerationPrompt = true;
        out.text = tools.render(chat, request.messages, request.tools, request.toolChoice, options);
    } catch (const std::exception& e) {
        // The template's own complaint (roles out of order, a tool call
        // without a reply...) is the most useful message.
        error = ApiError::invalid(QStringLiteral("messages"),
                                  QStringLiteral("The model's chat template rejected the conversation: %1")
                                      .arg(QString::fromUtf8(e.what()).left(2000)),
                                  QStringLiteral("invalid_conversation"));
        return false;
    }
    out.stop = request.gen.stop;
    auto add = [&out](const std::string& s) {
        if (!s.empty() && std::find(out.stop.begin(), out.stop.end(), s) == out.stop.end()) out.stop.push_back(s);
    };
    for (const auto& s : chat.endOfTurnStrings()) add(s);
    if (out.toolsActive) {
        for (const auto& s : tools.stopStrings()) add(s);
        out.showSpecialTokens = tools.markersAreSpecialTokens();
        if (request.toolChoice.mode == ToolChoice::Mode::Function) out.toolNames = {request.toolChoice.function};
        else out.toolNames = ToolFormat::toolNames(request.tools);
        out.forcedPrefix = tools.forcedPrefix(request.toolChoice);
        out.text += out.forcedPrefix;
    }
    return true;
}

} // namespace weir::server
