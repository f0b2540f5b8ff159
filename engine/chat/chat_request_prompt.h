#pragma once
// An OpenAI chat request (messages, tools, tool_choice) rendered for the
// model: the prompt with the client's text marked untrusted, the stop strings
// of the template and the tool family, and how to read the reply. The part of
// Engine::prepareChat that needs no tokenizer, so it is testable on templates.
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/chat/jinja_value.h"
#include "engine/chat/tool_format.h"
#include "engine/util/untrusted_ranges.h"
#include "weir/types/tool_calls.h"

namespace weir {

struct ChatRequestPrompt {
    // Tokenize with the marks kept, so no message can write a control token.
    // Ends with the forced prefix when there is one.
    MarkedText prompt;
    std::vector<std::string> stop;    // end-of-turn markers, then the tool family's
    bool toolsActive = false;         // tools given and tool_choice is not "none"
    bool showSpecialTokens = false;
    std::vector<std::string> toolNames;
    std::string forcedPrefix;
    // tool_choice "auto" with tools: where a JSON call opens and closes
    // (ToolFormat::jsonCallMarkers), empty otherwise.
    ToolFormat::CallMarkers callMarkers;
};

// `tools`: a non-empty list, or undefined for none. Throws weir::Error with
// the template's complaint when it rejects the conversation. openForcedCall
// false: no forced prefix (the caller constrains the reply to a call).
ChatRequestPrompt renderChatRequest(const ChatTemplate& chat, const ToolFormat& format,
                                    const jinja::Value& messages, const jinja::Value& tools,
                                    const ToolChoice& choice, bool openForcedCall = true);

}  // namespace weir
