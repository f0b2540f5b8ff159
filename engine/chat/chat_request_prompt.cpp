#include "engine/chat/chat_request_prompt.h"

#include <algorithm>

namespace weir {

ChatRequestPrompt renderChatRequest(const ChatTemplate& chat, const ToolFormat& format,
                                    const jinja::Value& messages, const jinja::Value& tools,
                                    const ToolChoice& choice, bool openForcedCall) {
    ChatRequestPrompt out;
    const bool haveTools = tools.isList() && !tools.asList().empty();
    out.toolsActive = haveTools && choice.mode != ToolChoice::Mode::None;
    ChatRenderOptions options;
    options.addGenerationPrompt = true;
    out.prompt = format.renderMarked(chat, messages, tools, choice, options);
    auto add = [&out](const std::string& s) {
        if (!s.empty() && std::find(out.stop.begin(), out.stop.end(), s) == out.stop.end()) out.stop.push_back(s);
    };
    for (const auto& s : chat.endOfTurnStrings()) add(s);
    if (out.toolsActive) {
        for (const auto& s : format.stopStrings()) add(s);
        out.showSpecialTokens = format.markersAreSpecialTokens();
        if (choice.mode == ToolChoice::Mode::Function) out.toolNames = {choice.function};
        else out.toolNames = ToolFormat::toolNames(tools);
        if (choice.mode == ToolChoice::Mode::Auto) out.callMarkers = format.jsonCallMarkers();
        if (openForcedCall) {
            out.forcedPrefix = format.forcedPrefix(choice);
            out.prompt.append(format.forcedPrefixMarked(choice));
        }
    }
    return out;
}

}  // namespace weir
