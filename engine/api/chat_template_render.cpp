// renderChatTemplate: a conversation through a chat template (the model's,
// a given Jinja source or a built-in one) without loading the weights.
#include <memory>

#include "engine/chat/chat_model_info.h"
#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "weir/model_file.h"

namespace weir {

RenderedChat renderChatTemplate(const ChatTemplateRender& request) {
    // The model supplies the BOS/EOS texts, and the template unless one is given.
    const ChatModelInfo info = chatModelInfoFromGguf(*gguf::GgufFile::open(request.modelPath));
    std::unique_ptr<ChatTemplate> tmpl;
    if (!request.builtinName.empty()) tmpl = ChatTemplate::builtin(request.builtinName, info.bosText, info.eosText);
    else if (!request.templateSource.empty()) tmpl = ChatTemplate::create(request.templateSource, info.bosText, info.eosText);
    else tmpl = ChatTemplate::forModel(info);

    ChatRenderOptions options;
    options.addGenerationPrompt = request.addGenerationPrompt;
    options.now = request.now;
    if (!request.toolsJson.empty()) options.tools = jinja::Value::parseJson(request.toolsJson);
    const jinja::Value messages = jinja::Value::parseJson(request.messagesJson);

    RenderedChat out;
    out.text = tmpl->renderValues(messages, options);
    out.templateDescription = tmpl->description();
    out.endOfTurnStrings = tmpl->endOfTurnStrings();
    out.templateWritesBos = tmpl->rendersBos();
    return out;
}

} // namespace weir
