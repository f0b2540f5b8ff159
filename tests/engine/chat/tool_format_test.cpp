// Tool definitions and calls rendered into prompts per family:
//  - templates that take tools render exactly as python jinja2 renders them
//    (tests/data/templates/tools_expected.json, made by
//    tests/reference/make_tool_reference.py);
//  - FunctionGemma's declarations match Google's documented prompt;
//  - Gemma 3 (no tools in its template) gets the instruction and its calls and
//    results as text, still alternating user/model;
//  - what a template shows the model as a call is read back by the parser.
#include "tests/support/weir_test.h"

#include <fstream>
#include <sstream>

#include "engine/chat/chat_template.h"
#include "engine/chat/tool_call_parser.h"
#include "engine/chat/tool_format.h"
#include "weir/base/error.h"

using weir::ChatRenderOptions;
using weir::ChatTemplate;
using weir::ToolChoice;
using weir::ToolFamily;
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

std::string dataDir() { return weirtest::environment("WEIR_TEST_DATA") + "/templates/"; }

std::unique_ptr<ChatTemplate> load(const std::string& name, const std::string& bos = "<bos>",
                                   const std::string& eos = "<eos>") {
    const std::string prefix = "builtin-";
    if (name.rfind(prefix, 0) == 0) return ChatTemplate::builtin(name.substr(prefix.size()), bos, eos);
    return ChatTemplate::create(readFile(dataDir() + name), bos, eos);
}

// Text as a std::string, so both sides of a comparison print as text.
std::string q(std::string s) { return s; }

Value msg(const char* role, const std::string& content) {
    Value d = Value::dict();
    d.set("role", Value(role));
    d.set("content", Value(content));
    return d;
}

Value callMsg(const std::string& name, const std::string& args, const std::string& id = "call_1") {
    Value fn = Value::dict();
    fn.set("name", Value(name));
    fn.set("arguments", Value(args));
    Value c = Value::dict();
    c.set("id", Value(id));
    c.set("type", Value("function"));
    c.set("function", fn);
    Value m = msg("assistant", "");
    m.set("tool_calls", Value::list({c}));
    return m;
}

Value toolMsg(const std::string& content, const std::string& id = "call_1") {
    Value m = msg("tool", content);
    m.set("tool_call_id", Value(id));
    return m;
}

Value weatherTool() {
    return Value::parseJson(R"({"type": "function", "function": {"name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}})");
}

Value clockTool() {
    return Value::parseJson(R"({"type": "function", "function": {"name": "get_time",
        "description": "Current time in a time zone.", "parameters": {"type": "object",
        "properties": {"timezone": {"type": "string"}}}}})");
}

std::string render(const ChatTemplate& t, const Value& messages, const Value& tools, ToolChoice choice = {}) {
    ChatRenderOptions options;
    options.now = 1751370045;  // strftime_now() as in the reference script
    return ToolFormat::detect(t).render(t, messages, tools, choice, options);
}

size_t count(const std::string& s, const std::string& needle) {
    size_t n = 0;
    for (size_t i = s.find(needle); i != std::string::npos; i = s.find(needle, i + 1)) ++n;
    return n;
}

// Every call the family's parser finds in `text`.
std::vector<weir::ToolCall> parseAll(const ToolFormat& f, const std::string& text, const std::vector<std::string>& names) {
    auto p = f.makeParser(names);
    auto a = p->push(text);
    auto b = p->finish();
    a.calls.insert(a.calls.end(), b.calls.begin(), b.calls.end());
    return a.calls;
}

std::string between(const std::string& s, const std::string& from, const std::string& to, size_t start = 0) {
    const size_t a = s.find(from, start);
    if (a == std::string::npos) return {};
    const size_t b = s.find(to, a + from.size());
    if (b == std::string::npos) return {};
    return s.substr(a + from.size(), b - a - from.size());
}

}  // namespace

struct DetectsFamiliesRow {
    std::string name;
    std::string templateName;
    std::string family;
    bool takesTools;
};

static std::vector<DetectsFamiliesRow> detectsFamiliesRows() {
    std::vector<DetectsFamiliesRow> rows;
    rows.push_back({"gemma3", "gemma3.jinja", "gemma3", false});
    rows.push_back({"gemma3 pythonic", "gemma3-tools-pythonic.jinja", "gemma3", true});
    rows.push_back({"functiongemma", "functiongemma-litert.jinja", "functiongemma", true});
    rows.push_back({"gemma4", "gemma4.jinja", "gemma4", true});
    rows.push_back({"llama3.1", "llama3.1.jinja", "llama3", true});
    rows.push_back({"llama3.2", "llama3.2.jinja", "llama3", true});
    rows.push_back({"qwen2.5", "qwen2.5.jinja", "qwen", true});
    rows.push_back({"qwen3", "qwen3.jinja", "qwen", true});
    rows.push_back({"builtin gemma", "builtin-gemma", "gemma3", false});
    rows.push_back({"builtin llama3", "builtin-llama3", "llama3", false});
    rows.push_back({"builtin chatml", "builtin-chatml", "qwen", true});
    return rows;
}
WEIR_TEST(ToolFormat, detectsFamilies) {
    weirtest::eachRow(detectsFamiliesRows(), [&](const DetectsFamiliesRow& row) {
        const std::string& templateName = row.templateName;
        const std::string& family = row.family;
        const bool& takesTools = row.takesTools;
        auto t = load(templateName);
        const ToolFormat f = ToolFormat::detect(*t);
        REQUIRE_EQ(std::string(f.name()), family);
        REQUIRE_EQ(f.templateTakesTools(), takesTools);
    });
}

WEIR_TEST(ToolFormat, gemmaWithFunctionGemmaTokensIsFunctionGemma) {
    auto t = load("builtin-gemma");
    const ToolFormat f = ToolFormat::detect(*t, [](std::string_view s) { return s == "<start_function_call>"; });
    REQUIRE_EQ(f.family(), ToolFamily::FunctionGemma);
}

// Native tool templates: byte-identical to jinja2.
struct MatchesJinja2Row {
    std::string name;
    int index;
};

static std::vector<MatchesJinja2Row> matchesJinja2Rows() {
    std::vector<MatchesJinja2Row> rows;
    static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
    const auto& cases = data.get("cases")->asList();
    REQUIRE(cases.size() >= 20);
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::string name = cases[i].get("family")->asString() + "/" + cases[i].get("name")->asString();
        rows.push_back({name.c_str(), int(i)});
    }
    return rows;
}
WEIR_TEST(ToolFormat, matchesJinja2) {
    weirtest::eachRow(matchesJinja2Rows(), [&](const MatchesJinja2Row& row) {
        const int& index = row.index;
        static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
        const Value& c = data.get("cases")->asList()[size_t(index)];
        auto t = load(c.get("template")->asString(), c.get("bos")->asString(), c.get("eos")->asString());
        const std::string got = render(*t, *c.get("messages"), *c.get("tools"));
        REQUIRE_EQ(q(got), q(c.get("expected")->asString()));
    });
}

// The calls the real templates write into the history are calls to our parser.
struct ParserReadsTemplateCallsRow {
    std::string name;
    std::string family;
    std::string from;
    std::string to;
};

static std::vector<ParserReadsTemplateCallsRow> parserReadsTemplateCallsRows() {
    std::vector<ParserReadsTemplateCallsRow> rows;
    rows.push_back({"qwen2.5", "qwen2.5", "<|im_start|>assistant\n", "<|im_end|>"});
    rows.push_back({"qwen3", "qwen3", "<|im_start|>assistant\n", "<|im_end|>"});
    rows.push_back({"gemma4", "gemma4", "<|turn>model\n", "<|tool_response>"});
    rows.push_back({"llama3.1", "llama3.1", "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>"});
    rows.push_back({"llama3.2", "llama3.2", "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>"});
    rows.push_back({"chatml", "builtin-chatml", "<|im_start|>assistant\n", "<|im_end|>"});
    return rows;
}
WEIR_TEST(ToolFormat, parserReadsTemplateCalls) {
    weirtest::eachRow(parserReadsTemplateCallsRows(), [&](const ParserReadsTemplateCallsRow& row) {
        const std::string& family = row.family;
        const std::string& from = row.from;
        const std::string& to = row.to;
        static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
        for (const Value& c : data.get("cases")->asList()) {
            if (c.get("family")->asString() != family || c.get("name")->asString() != "roundtrip") continue;
            auto t = load(c.get("template")->asString(), c.get("bos")->asString(), c.get("eos")->asString());
            const std::string reply = between(c.get("expected")->asString(), from, to);
            REQUIRE_MSG(!reply.empty(), "no assistant turn found");
            const auto calls = parseAll(ToolFormat::detect(*t), reply, {"get_weather"});
            REQUIRE_EQ(calls.size(), size_t(1));
            REQUIRE_EQ(q(calls[0].name), std::string("get_weather"));
            REQUIRE(Value::parseJson(calls[0].arguments).equals(Value::parseJson(R"({"city": "Paris", "unit": "celsius"})")));
            return;
        }
        FAIL("case not found");
    });
}

// FunctionGemma through LiteRT's template: the declaration, call and
// response in the form of Google's FunctionGemma formatting guide.
WEIR_TEST(ToolFormat, functionGemmaDocumentedPrompt) {
    auto t = load("functiongemma-litert.jinja");
    const Value tool = Value::parseJson(R"({"type": "function", "function": {"name": "get_current_weather",
        "description": "Gets the current weather in a given location.",
        "parameters": {"type": "object", "properties": {
          "location": {"type": "string", "description": "The city and state, e.g. 'San Francisco, CA' or 'Tokyo, JP'"},
          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in."}},
          "required": ["location"]}}})");
    const std::string trigger = "You are a model that can do function calling with the following functions";
    const std::string declaration =
        "<start_function_declaration>declaration:get_current_weather{description:<escape>Gets the current weather in "
        "a given location.<escape>,parameters:{properties:{location:{description:<escape>The city and state, e.g. "
        "'San Francisco, CA' or 'Tokyo, JP'<escape>,type:<escape>STRING<escape>},unit:{description:<escape>The "
        "unit to return the temperature in.<escape>,enum:[<escape>celsius<escape>,<escape>fahrenheit<escape>],type:"
        "<escape>STRING<escape>}},required:[<escape>location<escape>],type:<escape>OBJECT<escape>}}"
        "<end_function_declaration>";
    const Value user = msg("user", "Hey, what's the weather in Tokyo right now?");

    // Without a system message the trigger sentence is added.
    std::string got = render(*t, Value::list({user}), Value::list({tool}));
    REQUIRE_EQ(q(got), q("<bos><start_of_turn>developer\n" + trigger + "\n\n" + declaration +
                       "<end_of_turn>\n<start_of_turn>user\nHey, what's the weather in Tokyo right now?"
                       "<end_of_turn>\n<start_of_turn>model\n"));

    // The round trip: the documented call and response.
    const Value messages = Value::list({user, callMsg("get_current_weather", R"({"location": "Tokyo, Japan"})"),
                                        toolMsg(R"({"temperature": 15, "weather": "sunny"})")});
    got = render(*t, messages, Value::list({tool}));
    REQUIRE_MSG(got.find("<start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}"
                      "<end_function_call>") != std::string::npos, got.c_str());
    REQUIRE_MSG(got.find("<start_function_response>response:get_current_weather{temperature:15,weather:<escape>sunny"
                      "<escape>}<end_function_response>") != std::string::npos, got.c_str());
    const ToolFormat f = ToolFormat::detect(*t);
    REQUIRE(f.markersAreSpecialTokens());
    REQUIRE_EQ(f.stopStrings(), std::vector<std::string>{"<start_function_response>"});
}

// Gemma 3's template has no tools: Weir's instruction goes into the first
// user turn, calls and results become text, turns still alternate.
struct Gemma3FallbackRow {
    std::string name;
    std::string templateName;
};

static std::vector<Gemma3FallbackRow> gemma3FallbackRows() {
    std::vector<Gemma3FallbackRow> rows;
    rows.push_back({"gemma3.jinja", "gemma3.jinja"});
    rows.push_back({"builtin gemma", "builtin-gemma"});
    return rows;
}
WEIR_TEST(ToolFormat, gemma3Fallback) {
    weirtest::eachRow(gemma3FallbackRows(), [&](const Gemma3FallbackRow& row) {
        const std::string& templateName = row.templateName;
        auto t = load(templateName);
        const ToolFormat f = ToolFormat::detect(*t);
        const Value tools = Value::list({weatherTool(), clockTool()});

        const std::string offer = render(*t, Value::list({msg("system", "Be brief."), msg("user", "Weather in Paris?")}), tools);
        REQUIRE_MSG(offer.rfind("<bos><start_of_turn>user\nBe brief.\n\n", 0) == 0, offer.c_str());
        REQUIRE(offer.find("\"name\": \"get_weather\"") != std::string::npos);
        REQUIRE(offer.find("\"name\": \"get_time\"") != std::string::npos);
        REQUIRE(offer.find("```tool_call") != std::string::npos);
        const std::string tail = "Weather in Paris?<end_of_turn>\n<start_of_turn>model\n";
        REQUIRE(offer.size() > tail.size() && offer.compare(offer.size() - tail.size(), tail.size(), tail) == 0);

        // Parallel calls, two results, an answer and a new question.
        Value calls = callMsg("get_weather", R"({"city": "Paris"})");
        const Value secondCalls = *callMsg("get_time", R"({"timezone": "Europe/Paris"})", "call_2").get("tool_calls");
        const Value second = secondCalls.asList()[0];
        Value callList = *calls.get("tool_calls");
        callList.append(second);
        calls.set("tool_calls", callList);
        const Value messages = Value::list({msg("user", "Weather and time in Paris?"), calls, toolMsg("18 C", "call_1"),
                                            toolMsg("09:00", "call_2"), msg("assistant", "18 C at 09:00."),
                                            msg("user", "Thanks!")});
        const std::string history = render(*t, messages, tools);
        REQUIRE_EQ(count(history, "<start_of_turn>user\n"), size_t(3));
        REQUIRE_EQ(count(history, "<start_of_turn>model\n"), size_t(3));
        REQUIRE(history.find("```tool_output\n18 C\n```\n\n```tool_output\n09:00\n```") != std::string::npos);
        // The model sees its calls in the very form the parser reads.
        const std::string reply = between(history, "<start_of_turn>model\n", "<end_of_turn>");
        const auto parsed = parseAll(f, reply, {"get_weather", "get_time"});
        REQUIRE_EQ(parsed.size(), size_t(2));
        REQUIRE_EQ(q(parsed[0].name), std::string("get_weather"));
        REQUIRE(Value::parseJson(parsed[0].arguments).equals(Value::parseJson(R"({"city": "Paris"})")));
        REQUIRE_EQ(q(parsed[1].name), std::string("get_time"));
        REQUIRE(Value::parseJson(parsed[1].arguments).equals(Value::parseJson(R"({"timezone": "Europe/Paris"})")));
        REQUIRE_EQ(f.stopStrings(), std::vector<std::string>{"```tool_output"});
        REQUIRE(!f.markersAreSpecialTokens());
    });
}

WEIR_TEST(ToolFormat, llama3BuiltinFallback) {
    auto t = load("builtin-llama3", "<|begin_of_text|>", "<|eot_id|>");
    const ToolFormat f = ToolFormat::detect(*t);
    const std::string offer = render(*t, Value::list({msg("user", "Weather in Oslo?")}), Value::list({weatherTool()}));
    REQUIRE(offer.find("<|start_header_id|>system<|end_header_id|>\n\nYou can call") != std::string::npos);
    REQUIRE(offer.find("\"parameters\"") != std::string::npos);
    const std::string history = render(*t, Value::list({msg("user", "Weather in Oslo?"),
                                                        callMsg("get_weather", R"({"city": "Oslo"})"),
                                                        toolMsg("cold")}),
                                       Value::list({weatherTool()}));
    const std::string reply = between(history, "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>");
    const auto parsed = parseAll(f, reply, {"get_weather"});
    REQUIRE_EQ(parsed.size(), size_t(1));
    REQUIRE(Value::parseJson(parsed[0].arguments).equals(Value::parseJson(R"({"city": "Oslo"})")));
}

WEIR_TEST(ToolFormat, toolChoice) {
    auto t = load("gemma3.jinja");
    const Value tools = Value::list({weatherTool(), clockTool()});
    const Value messages = Value::list({msg("user", "What time is it?")});
    ToolChoice only;
    only.mode = ToolChoice::Mode::Function;
    only.function = "get_time";
    const std::string named = render(*t, messages, tools, only);
    REQUIRE(named.find("\"get_time\"") != std::string::npos);
    REQUIRE(named.find("get_weather") == std::string::npos);
    REQUIRE(named.find("You must call the function get_time.") != std::string::npos);

    ToolChoice none;
    none.mode = ToolChoice::Mode::None;
    REQUIRE_EQ(q(render(*t, messages, tools, none)), q(t->render({{"user", "What time is it?", {}}}, true)));

    ToolChoice missing;
    missing.mode = ToolChoice::Mode::Function;
    missing.function = "nope";
    REQUIRE_THROWS(weir::Error, render(*t, messages, tools, missing));
}

// tool_choice required / named: the prompt ends with the start of a call,
// and that start plus what a model writes next reads as the call.
struct ForcedPrefixRow {
    std::string name;
    std::string templateName;
    std::string continuation;
};

static std::vector<ForcedPrefixRow> forcedPrefixRows() {
    std::vector<ForcedPrefixRow> rows;
    rows.push_back({"gemma3 fallback", "gemma3.jinja", std::string("{\"city\": \"Paris\"}}\n```\nmore text")});
    rows.push_back({"gemma3 pythonic", "gemma3-tools-pythonic.jinja", std::string("city=\"Paris\")]")});
    rows.push_back({"functiongemma", "functiongemma-litert.jinja", std::string("city:<escape>Paris<escape>}<end_function_call>")});
    rows.push_back({"gemma4", "gemma4.jinja", std::string("city:<|\"|>Paris<|\"|>}<tool_call|>")});
    rows.push_back({"qwen", "qwen2.5.jinja", std::string("{\"city\": \"Paris\"}}\n</tool_call>")});
    rows.push_back({"llama3", "llama3.1.jinja", std::string("{\"city\": \"Paris\"}}")});
    return rows;
}
WEIR_TEST(ToolFormat, forcedPrefix) {
    weirtest::eachRow(forcedPrefixRows(), [&](const ForcedPrefixRow& row) {
        const std::string& templateName = row.templateName;
        const std::string& continuation = row.continuation;
        auto t = load(templateName);
        const ToolFormat f = ToolFormat::detect(*t);
        ToolChoice named;
        named.mode = ToolChoice::Mode::Function;
        named.function = "get_weather";
        const std::string prefix = f.forcedPrefix(named);
        REQUIRE(!prefix.empty());
        REQUIRE(prefix.find("get_weather") != std::string::npos);
        auto parser = f.makeParser({"get_weather"});
        auto out = parser->push(prefix);
        REQUIRE_EQ(q(out.text), std::string());
        auto more = parser->push(continuation);
        auto last = parser->finish();
        more.calls.insert(more.calls.end(), last.calls.begin(), last.calls.end());
        REQUIRE_EQ(more.calls.size(), size_t(1));
        REQUIRE(Value::parseJson(more.calls[0].arguments).equals(Value::parseJson(R"({"city": "Paris"})")));
        // "required" opens a call without naming the function.
        ToolChoice required;
        required.mode = ToolChoice::Mode::Required;
        REQUIRE(!f.forcedPrefix(required).empty());
        REQUIRE(f.forcedPrefix(ToolChoice{}).empty());
        // The prompt ends with the generation prompt; the server appends the prefix.
        const std::string prompt = render(*t, Value::list({msg("user", "Weather in Paris?")}), Value::list({weatherTool()}), named);
        REQUIRE(!prompt.empty());
    });
}

WEIR_TEST(ToolFormat, gemma3BlockEndsTheReply) {
    auto parser = ToolFormat(ToolFamily::Gemma3, false, false).makeParser({"get_time"});
    auto out = parser->push("```tool_call\n{\"name\": \"get_time\"}\n```");
    REQUIRE_EQ(out.calls.size(), size_t(1));
    REQUIRE(parser->done());
    REQUIRE_EQ(q(parser->push("garbage after the call").text), std::string());
    REQUIRE(parser->finish().calls.empty());
}

WEIR_TEST(ToolFormat, gemma3RejectsBrokenOrder) {
    // A conversation the template cannot express stays an error (the API answers 400).
    auto t = load("gemma3.jinja");
    REQUIRE_THROWS(weir::Error, render(*t, Value::list({msg("assistant", "hi")}), Value::list({weatherTool()})));
}

WEIR_TEST(ToolFormat, jsonCallMarkersWrapCallsTheParserReads) {
    // What the lazy constraint of tool_choice "auto" holds a call to (the
    // opening marker, a JSON call, the closing marker) reads as that call.
    const std::string call = R"({"name": "get_weather", "arguments": {"city": "Paris"}})";
    for (const ToolFormat& f : {ToolFormat(ToolFamily::Qwen, true, true), ToolFormat(ToolFamily::Gemma3, false, false),
                                ToolFormat(ToolFamily::Generic, false, false)}) {
        const ToolFormat::CallMarkers m = f.jsonCallMarkers();
        REQUIRE_MSG(!m.open.empty() && !m.close.empty(), f.name());
        for (const std::string& open : m.open) {
            for (const char* space : {"", "\n", " "}) {
                auto parser = f.makeParser({"get_weather"});
                auto out = parser->push("Let me check. " + open + space + call + space + m.close);
                auto last = parser->finish();
                out.calls.insert(out.calls.end(), last.calls.begin(), last.calls.end());
                REQUIRE_MSG(out.calls.size() == size_t(1), std::string(f.name()) + ": " + open);
                CHECK_EQ(out.calls[0].name, std::string("get_weather"));
                CHECK(Value::parseJson(out.calls[0].arguments).equals(Value::parseJson(R"({"city": "Paris"})")));
            }
        }
    }
    // Calls that are not that JSON get no markers: nothing is held.
    for (const ToolFormat& f : {ToolFormat(ToolFamily::FunctionGemma, true, true), ToolFormat(ToolFamily::Gemma4, true, true),
                                ToolFormat(ToolFamily::Llama3, true, true), ToolFormat(ToolFamily::Gemma3, true, true)})
        CHECK_MSG(f.jsonCallMarkers().open.empty(), f.name());
}
