// ChatTemplate: choosing the model's template or a built-in one, exactly one
// BOS, end-of-turn stop strings, tool-call argument handling, and the
// built-in Gemma template against Google's (reference outputs from jinja2).
#include "tests/support/text_match.h"
#include "tests/support/weir_test.h"

#include <fstream>
#include <sstream>

#include "engine/chat/chat_template.h"
#include "engine/chat/jinja_template.h"

using weir::ChatMessage;
using weir::ChatTemplate;
using weir::jinja::Value;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string templatesDir() { return weirtest::environment("WEIR_TEST_DATA") + "/templates/"; }

std::string realTemplate(const std::string& name) { return readFile(templatesDir() + name); }

// Rendered text as a std::string, so both sides of a comparison print as text.
std::string q(std::string s) { return s; }

size_t count(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
    return n;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

WEIR_TEST(ChatTemplate, defaultModelGetsBuiltinGemma) {
    // The default model's GGUF has no tokenizer.chat_template.
    weir::ChatModelInfo info;
    info.architecture = "gemma3";
    info.bosText = "<bos>";
    info.eosText = "<eos>";
    info.specialTokens = {"<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"};
    auto t = ChatTemplate::forModel(info);
    REQUIRE_EQ(q(t->family()), q("gemma"));
    REQUIRE(t->isBuiltin());
    REQUIRE_MSG(weirtest::contains(t->description(), "built-in"), t->description().c_str());
    std::string text = t->render({{"system", "Be brief.", {}}, {"user", " Hi ", {}}}, true);
    REQUIRE_EQ(q(text), q("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"));
}

WEIR_TEST(ChatTemplate, builtinChoiceFollowsTokens) {
    weir::ChatModelInfo info;
    info.architecture = "llama";
    info.specialTokens = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
    REQUIRE_EQ(q(ChatTemplate::forModel(info)->family()), q("llama3"));
    info.architecture = "qwen2";
    info.specialTokens = {"<|im_start|>", "<|im_end|>"};
    REQUIRE_EQ(q(ChatTemplate::forModel(info)->family()), q("chatml"));
    info.architecture = "mystery";
    info.specialTokens = {};
    REQUIRE_EQ(q(ChatTemplate::forModel(info)->family()), q("chatml"));
    REQUIRE_THROWS(weir::Error, ChatTemplate::builtin("nope", "", ""));
}

WEIR_TEST(ChatTemplate, modelTemplateWinsAndFamilyIsDetected) {
    weir::ChatModelInfo info;
    info.architecture = "gemma3";
    info.bosText = "<|begin_of_text|>";
    info.chatTemplate = realTemplate("llama3.1.jinja");
    auto t = ChatTemplate::forModel(info);
    REQUIRE(!t->isBuiltin());
    REQUIRE_EQ(q(t->family()), q("llama3"));
    REQUIRE_EQ(q(ChatTemplate::create(realTemplate("gemma3.jinja"), "<bos>", "<eos>")->family()), q("gemma"));
    REQUIRE_EQ(q(ChatTemplate::create(realTemplate("qwen3.jinja"), "", "<|im_end|>")->family()), q("chatml"));
    REQUIRE_EQ(q(ChatTemplate::create("{{ messages[0].content }}", "", "")->family()), q("jinja"));
}

WEIR_TEST(ChatTemplate, unsupportedModelTemplateFallsBack) {
    weir::ChatModelInfo info;
    info.architecture = "gemma3";
    info.bosText = "<bos>";
    info.chatTemplate = "{% include 'x.jinja' %}";
    auto t = ChatTemplate::forModel(info);
    REQUIRE(t->isBuiltin());
    REQUIRE_EQ(q(t->family()), q("gemma"));
    REQUIRE_MSG(weirtest::contains(t->description(), "not supported"), t->description().c_str());
    REQUIRE_MSG(weirtest::contains(t->description(), "'include'"), t->description().c_str());
}

WEIR_TEST(ChatTemplate, badTemplateTextIsAnError) {
    try {
        ChatTemplate::create("{% for m in messages %}{{ m.content }", "<bos>", "<eos>");
        FAIL("accepted a broken template");
    } catch (const weir::Error& e) {
        REQUIRE_MSG(weirtest::startsWith(e.what(), "chat template: line 1"), e.what());
    }
}

WEIR_TEST(ChatTemplate, exactlyOneBos) {
    auto gemma = ChatTemplate::create(realTemplate("gemma3.jinja"), "<bos>", "<eos>");
    REQUIRE(gemma->rendersBos());
    std::string text = gemma->render({{"user", "hello", {}}}, true);
    REQUIRE_EQ(count(text, "<bos>"), size_t(1));
    // The template wrote BOS, so the tokenizer must not add another...
    REQUIRE(!gemma->addBosWhenTokenizing(text, true));
    // ...but text that lacks it still gets one, and a tokenizer that adds none adds none.
    REQUIRE(gemma->addBosWhenTokenizing("no bos here", true));
    REQUIRE(!gemma->addBosWhenTokenizing("no bos here", false));

    auto llama = ChatTemplate::create(realTemplate("llama3.2.jinja"), "<|begin_of_text|>", "<|eot_id|>");
    REQUIRE(llama->rendersBos());
    auto qwen = ChatTemplate::create(realTemplate("qwen2.5.jinja"), "", "<|im_end|>");
    REQUIRE(!qwen->rendersBos());
    REQUIRE(qwen->addBosWhenTokenizing(qwen->render({{"user", "x", {}}}, true), true));
    auto chatml = ChatTemplate::builtin("chatml", "<s>", "</s>");
    REQUIRE(!chatml->rendersBos());
}

WEIR_TEST(ChatTemplate, endOfTurnStrings) {
    auto gemma = ChatTemplate::builtin("gemma", "<bos>", "<eos>");
    REQUIRE(has(gemma->endOfTurnStrings(), "<end_of_turn>"));
    REQUIRE(has(gemma->endOfTurnStrings(), "<eos>"));
    auto llama = ChatTemplate::create(realTemplate("llama3.1.jinja"), "<|begin_of_text|>", "<|eot_id|>");
    REQUIRE(has(llama->endOfTurnStrings(), "<|eot_id|>"));
    REQUIRE(has(llama->endOfTurnStrings(), "<|eom_id|>"));
    auto qwen = ChatTemplate::create(realTemplate("qwen3.jinja"), "", "<|im_end|>");
    REQUIRE_EQ(qwen->endOfTurnStrings(), std::vector<std::string>{"<|im_end|>"});
    auto fg = ChatTemplate::create(realTemplate("functiongemma-litert.jinja"), "<bos>", "<eos>");
    REQUIRE(has(fg->endOfTurnStrings(), "<start_function_response>"));
    REQUIRE(has(fg->endOfTurnStrings(), "<end_of_turn>"));
}

WEIR_TEST(ChatTemplate, toolCallArgumentsAsJsonText) {
    // OpenAI clients send arguments as JSON text; rendering parses them into
    // the object the template formats, so both forms give the same prompt.
    auto qwen = ChatTemplate::create(realTemplate("qwen2.5.jinja"), "", "<|im_end|>");
    auto msgWith = [](Value arguments) {
        Value fn = Value::dict();
        fn.set("name", Value("get_weather")).set("arguments", std::move(arguments));
        Value call = Value::dict();
        call.set("type", Value("function")).set("function", fn);
        Value fields = Value::dict();
        fields.set("tool_calls", Value::list({call}));
        return std::vector<ChatMessage>{{"user", "Weather?", {}}, {"assistant", "", fields}};
    };
    weir::ChatRenderOptions o;
    o.addGenerationPrompt = false;
    std::string fromText = qwen->render(msgWith(Value("{\"city\": \"Paris\", \"days\": 2}")), o);
    std::string fromObject = qwen->render(msgWith(Value::parseJson("{\"city\": \"Paris\", \"days\": 2}")), o);
    REQUIRE_EQ(q(fromText), q(fromObject));
    REQUIRE(fromText.find("{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}") !=
            std::string::npos);
    // Text that is not a JSON object stays as it is (then tojson quotes it).
    std::string odd = qwen->render(msgWith(Value("not json")), o);
    REQUIRE(odd.find("\"arguments\": \"not json\"") != std::string::npos);
    o.parseToolCallArguments = false;
    REQUIRE(qwen->render(msgWith(Value("{\"a\": 1}")), o).find("\"arguments\": \"{\\\"a\\\": 1}\"") !=
            std::string::npos);
}

WEIR_TEST(ChatTemplate, toolsAndVariablesReachTheTemplate) {
    auto llama = ChatTemplate::create(realTemplate("llama3.2.jinja"), "<|begin_of_text|>", "<|eot_id|>");
    weir::ChatRenderOptions o;
    o.variables = Value::dict();
    o.variables.set("date_string", Value("05 May 2025"));
    std::string text = llama->render({{"user", "hi", {}}}, o);
    REQUIRE(text.find("Today Date: 05 May 2025\n") != std::string::npos);
    REQUIRE(text.find("Environment: ipython") == std::string::npos);
    o.tools = Value::parseJson(R"([{"type": "function", "function": {"name": "f", "parameters": {}}}])");
    text = llama->render({{"user", "hi", {}}}, o);
    REQUIRE(text.find("Environment: ipython") != std::string::npos);
    // Without date_string the template asks strftime_now for today's date.
    o.variables = Value();
    o.now = 86400 * 365;  // 1971-01-01 UTC
    text = llama->render({{"user", "hi", {}}}, o);
    REQUIRE_MSG(text.find("Today Date: 01 Jan 1971\n") != std::string::npos, text.c_str());
}

WEIR_TEST(ChatTemplate, builtinGemmaMatchesGoogleTemplate) {
    // Every conversation Google's template renders (reference outputs from
    // jinja2), the built-in one renders identically; what Google's rejects
    // for role order, the built-in rejects too.
    Value data = Value::parseJson(readFile(templatesDir() + "expected.json"));
    auto builtin = ChatTemplate::builtin("gemma", "<bos>", "<eos>");
    int compared = 0;
    for (const auto& fam : data.get("families")->asList()) {
        if (fam.get("family")->asString() != "gemma3") continue;
        for (const auto& c : fam.get("cases")->asList()) {
            const Value& ctx = *c.get("context");
            weir::ChatRenderOptions o;
            o.addGenerationPrompt = ctx.get("add_generation_prompt")->truthy();
            if (const Value* tools = ctx.get("tools")) o.tools = *tools;
            if (const Value* out = c.get("output")) {
                REQUIRE_EQ(q(builtin->renderValues(*ctx.get("messages"), o)), q(out->asString()));
                ++compared;
            } else if (c.get("raised")->truthy()) {
                REQUIRE_THROWS(weir::jinja::TemplateRaised, builtin->renderValues(*ctx.get("messages"), o));
            }
        }
    }
    REQUIRE(compared >= 10);
}

WEIR_TEST(ChatTemplate, messagesMustBeAList) {
    auto t = ChatTemplate::builtin("chatml", "", "");
    REQUIRE_THROWS(weir::Error, t->renderValues(Value("nope"), {}));
    ChatMessage bad{"user", "x", Value(3)};
    REQUIRE_THROWS(weir::Error, t->render(std::vector<ChatMessage>{bad}, true));
}
