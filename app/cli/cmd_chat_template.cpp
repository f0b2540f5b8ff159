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

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "weir/base/error.h"
#include "weir/model_file.h"

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

    ChatTemplateRender request;
    request.modelPath = model.empty() ? defaultModelPath() : model;
    request.builtinName = builtinName;
    if (!templateFile.empty()) request.templateSource = readText(templateFile);
    request.addGenerationPrompt = !noGenerationPrompt;
    if (now >= 0) request.now = now;  // strftime_now() then formats this instant (UTC)
    if (!toolsFile.empty()) request.toolsJson = readText(toolsFile);
    if (!messagesFile.empty()) {
        request.messagesJson = readText(messagesFile);
    } else {
        request.messagesJson = "[";
        if (!system.empty()) request.messagesJson += "{\"role\": \"system\", \"content\": " + jsonString(system) + "}, ";
        request.messagesJson += "{\"role\": \"user\", \"content\": " + jsonString(prompt) + "}]";
    }
    const RenderedChat rendered = renderChatTemplate(request);
    const std::string& text = rendered.text;

    std::string stops;
    for (const auto& s : rendered.endOfTurnStrings) stops += (stops.empty() ? "" : ", ") + s;
    std::fprintf(stderr, "template: %s\nend of turn: %s\ntemplate writes BOS: %s\n", rendered.templateDescription.c_str(),
                 stops.c_str(), rendered.templateWritesBos ? "yes (tokenize with addBos=false)" : "no");
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
    return 0;
}

static Command reg{"chat-template", "render a conversation with the model's chat template", &run,
                   "  weir-cli chat-template [-m MODEL] [--template FILE] [--builtin gemma|llama3|chatml]\n"
                   "      [--messages FILE.json | --system TEXT -p PROMPT] [--tools FILE.json]\n"
                   "      [--no-generation-prompt] [--now EPOCH_SECONDS]\n"
                   "  prints the prompt text; what was chosen, the stop strings and the BOS handling go to stderr"};

}  // namespace
}  // namespace weir::cli
