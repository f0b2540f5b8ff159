// An OpenAI chat request rendered for the model (what Engine::prepareChat
// tokenizes): the client's text marked untrusted, the template's and Weir's
// markers not; the stop strings of the template and the tool family; the
// forced call of a named tool_choice at the end of the prompt.

#include "tests/support/weir_test.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "engine/chat/chat_request_prompt.h"
#include "weir/base/error.h"

using weir::ChatTemplate;
using weir::ToolChoice;
using weir::ToolFormat;
using weir::jinja::Value;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::unique_ptr<ChatTemplate> gemma3() {
    const std::string dir = weirtest::environment("WEIR_TEST_DATA") + "/templates/";
    return ChatTemplate::create(readFile(dir + "gemma3.jinja"), "<bos>", "<eos>");
}

// (\u0022: moc misreads an escaped quote in a raw string.)
const char* kMessages = R"([
  {"role": "system", "content": "You are terse."},
  {"role": "user", "content": "What is the weather in Paris?"},
  {"content": "", "role": "assistant", "tool_calls": [
    {"function": {"arguments": "{\u0022city\u0022: \u0022Paris\u0022}", "name": "get_weather"}, "id": "call_1", "type": "function"}]},
  {"content": "18 C", "role": "tool", "tool_call_id": "call_1"},
  {"content": "And tomorrow?", "role": "user"}])";

const char* kTools = R"([{"function": {"description": "Weather", "name": "get_weather",
  "parameters": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"}},
  "type": "function"}])";

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

WEIR_TEST(ChatRequestPrompt, marksTheClientsTextUntrusted) {
    const auto chat = gemma3();
    const ToolFormat format = ToolFormat::detect(*chat);
    const weir::ChatRequestPrompt p =
        weir::renderChatRequest(*chat, format, Value::parseJson(kMessages), Value::parseJson(kTools), ToolChoice{});
    REQUIRE(p.toolsActive);
    REQUIRE_EQ(p.toolNames, std::vector<std::string>{"get_weather"});
    REQUIRE(contains(p.stop, "<end_of_turn>"));
    REQUIRE(p.forcedPrefix.empty());
    const std::string& text = p.prompt.text;
    REQUIRE(text.find("```tool_output\n18 C\n```") != std::string::npos);
    // The client's text is marked untrusted (no control tokens parsed in
    // it), the template's and Weir's markers are not.
    const size_t result = text.find("18 C");
    REQUIRE(p.prompt.untrusted.overlaps(result, result + 4));
    const size_t fence = text.find("```tool_output");
    REQUIRE(!p.prompt.untrusted.overlaps(fence, fence + 14));
    const size_t turn = text.find("<start_of_turn>");
    REQUIRE(turn != std::string::npos && !p.prompt.untrusted.overlaps(turn, turn + 15));
    const size_t later = text.find("And tomorrow?");
    REQUIRE(p.prompt.untrusted.overlaps(later, later + 13));
}

WEIR_TEST(ChatRequestPrompt, namedChoiceEndsThePromptWithTheCall) {
    const auto chat = gemma3();
    const ToolFormat format = ToolFormat::detect(*chat);
    ToolChoice choice;
    choice.mode = ToolChoice::Mode::Function;
    choice.function = "get_weather";
    const weir::ChatRequestPrompt p = weir::renderChatRequest(
        *chat, format, Value::parseJson(R"([{"role": "user", "content": "Paris?"}])"), Value::parseJson(kTools), choice);
    REQUIRE(!p.forcedPrefix.empty());
    REQUIRE_EQ(p.prompt.text.substr(p.prompt.text.size() - p.forcedPrefix.size()), p.forcedPrefix);
    // The function name in it is the client's: untrusted.
    const size_t name = p.prompt.text.rfind("get_weather");
    REQUIRE(p.prompt.untrusted.overlaps(name, name + 11));
    for (const std::string& s : format.stopStrings()) REQUIRE(contains(p.stop, s));
}

WEIR_TEST(ChatRequestPrompt, noToolsOrChoiceNoneIsPlainChat) {
    const auto chat = gemma3();
    const ToolFormat format = ToolFormat::detect(*chat);
    const Value messages = Value::parseJson(R"([{"role": "user", "content": "hi"}])");
    ToolChoice none;
    none.mode = ToolChoice::Mode::None;
    const weir::ChatRequestPrompt withNone =
        weir::renderChatRequest(*chat, format, messages, Value::parseJson(kTools), none);
    const weir::ChatRequestPrompt without = weir::renderChatRequest(*chat, format, messages, Value(), ToolChoice{});
    REQUIRE(!withNone.toolsActive && !without.toolsActive);
    REQUIRE(withNone.toolNames.empty());
    REQUIRE_EQ(withNone.prompt.text, without.prompt.text);
    REQUIRE_EQ(without.stop, chat->endOfTurnStrings());
}

WEIR_TEST(ChatRequestPrompt, conversationTheTemplateRejectsThrows) {
    const auto chat = gemma3();
    const ToolFormat format = ToolFormat::detect(*chat);
    REQUIRE_THROWS(weir::Error, weir::renderChatRequest(
        *chat, format, Value::parseJson(R"([{"role": "assistant", "content": "first"}])"), Value(), ToolChoice{}));
}

WEIR_TEST(ChatRequestPrompt, onlyAutoGetsTheCallMarkers) {
    const auto chat = gemma3();
    const ToolFormat format = ToolFormat::detect(*chat);
    const Value messages = Value::parseJson(R"([{"role": "user", "content": "Paris?"}])");
    const weir::ChatRequestPrompt autoChoice =
        weir::renderChatRequest(*chat, format, messages, Value::parseJson(kTools), ToolChoice{});
    REQUIRE_EQ(autoChoice.callMarkers.open, std::vector<std::string>{"```tool_call"});
    REQUIRE_EQ(autoChoice.callMarkers.close, std::string("```"));
    for (ToolChoice::Mode mode : {ToolChoice::Mode::None, ToolChoice::Mode::Required}) {
        ToolChoice choice;
        choice.mode = mode;
        CHECK(weir::renderChatRequest(*chat, format, messages, Value::parseJson(kTools), choice).callMarkers.open.empty());
    }
    CHECK(weir::renderChatRequest(*chat, format, messages, Value(), ToolChoice{}).callMarkers.open.empty());
}
