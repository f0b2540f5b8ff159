// weir-cli chat-template [-m MODEL] [--template FILE] [--builtin gemma|llama3|chatml]
//     [--messages FILE.json | --system TEXT -p PROMPT] [--tools FILE.json] [--no-generation-prompt]
//     [--now EPOCH_SECONDS]
// Renders a conversation with the model's chat template (or the built-in one
// it falls back to) and prints the prompt text; what was chosen, the stop
// strings and the BOS handling go to stderr.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "engine/chat/chat_model_info.h"
#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/util/error.h"

namespace weir::cli {
namespace {

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const std::string model = args.value("-m", "");
    const std::string templateFile = args.value("--template", "");
    const std::string builtinName = args.value("--builtin", "");
    const std::string messagesFile = args.value("--messages", "");
    const std::string toolsFile = args.value("--tools", "");
    const std::string system = args.value("--system", "");
    const std::string prompt = args.value("-p", "Hello!");
    const bool noGenerationPrompt = args.flag("--no-generation-prompt");
    const long long now = args.intValue("--now", -1, -1, INT64_MAX);
    args.rejectUnknown();
    if (!args.rest().empty()) throw Error("unexpected argument '" + args.rest()[0] + "'");

    // The model supplies the BOS/EOS texts, and the template unless one is given.
    const ChatModelInfo info = chatModelInfoFromGguf(*gguf::GgufFile::open(model.empty() ? defaultModelPath() : model));
    std::unique_ptr<ChatTemplate> tmpl;
    if (!builtinName.empty()) tmpl = ChatTemplate::builtin(builtinName, info.bosText, info.eosText);
    else if (!templateFile.empty()) tmpl = ChatTemplate::create(readText(templateFile), info.bosText, info.eosText);
    else tmpl = ChatTemplate::forModel(info);

    ChatRenderOptions options;
    options.addGenerationPrompt = !noGenerationPrompt;
    if (now >= 0) options.now = now;  // strftime_now() then formats this instant (UTC)
    if (!toolsFile.empty()) options.tools = jinja::Value::parseJson(readText(toolsFile));
    jinja::Value messages;
    if (!messagesFile.empty()) {
        messages = jinja::Value::parseJson(readText(messagesFile));
    } else {
        messages = jinja::Value::list();
        auto add = [&](const char* role, const std::string& content) {
            jinja::Value m = jinja::Value::dict();
            m.set("role", jinja::Value(role)).set("content", jinja::Value(content));
            messages.append(m);
        };
        if (!system.empty()) add("system", system);
        add("user", prompt);
    }
    const std::string text = tmpl->renderValues(messages, options);

    std::string stops;
    for (const auto& s : tmpl->endOfTurnStrings()) stops += (stops.empty() ? "" : ", ") + s;
    std::fprintf(stderr, "template: %s\nend of turn: %s\ntemplate writes BOS: %s\n", tmpl->description().c_str(),
                 stops.c_str(), tmpl->rendersBos() ? "yes (tokenize with addBos=false)" : "no");
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
    return 0;
}

static Command reg{"chat-template", "render a conversation with the model's chat template", &run};

}  // namespace
}  // namespace weir::cli
