// Tool definitions and calls rendered into prompts per family:
//  - templates that take tools render exactly as python jinja2 renders them
//    (tests/data/templates/tools_expected.json, made by
//    tests/reference/make_tool_reference.py);
//  - FunctionGemma's declarations match Google's documented prompt;
//  - Gemma 3 (no tools in its template) gets the instruction and its calls and
//    results as text, still alternating user/model;
//  - what a template shows the model as a call is read back by the parser.
#include <QtTest>

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

std::string dataDir() { return qEnvironmentVariable("WEIR_TEST_DATA").toStdString() + "/templates/"; }

std::unique_ptr<ChatTemplate> load(const std::string& name, const std::string& bos = "<bos>",
                                   const std::string& eos = "<eos>") {
    const std::string prefix = "builtin-";
    if (name.rfind(prefix, 0) == 0) return ChatTemplate::builtin(name.substr(prefix.size()), bos, eos);
    return ChatTemplate::create(readFile(dataDir() + name), bos, eos);
}

QByteArray q(const std::string& s) { return QByteArray::fromStdString(s); }

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

class ToolFormatTest : public QObject {
    Q_OBJECT

private slots:
    void detectsFamilies_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<QString>("family");
        QTest::addColumn<bool>("takesTools");
        QTest::newRow("gemma3") << "gemma3.jinja" << "gemma3" << false;
        QTest::newRow("gemma3 pythonic") << "gemma3-tools-pythonic.jinja" << "gemma3" << true;
        QTest::newRow("functiongemma") << "functiongemma-litert.jinja" << "functiongemma" << true;
        QTest::newRow("gemma4") << "gemma4.jinja" << "gemma4" << true;
        QTest::newRow("llama3.1") << "llama3.1.jinja" << "llama3" << true;
        QTest::newRow("llama3.2") << "llama3.2.jinja" << "llama3" << true;
        QTest::newRow("qwen2.5") << "qwen2.5.jinja" << "qwen" << true;
        QTest::newRow("qwen3") << "qwen3.jinja" << "qwen" << true;
        QTest::newRow("builtin gemma") << "builtin-gemma" << "gemma3" << false;
        QTest::newRow("builtin llama3") << "builtin-llama3" << "llama3" << false;
        QTest::newRow("builtin chatml") << "builtin-chatml" << "qwen" << true;
    }
    void detectsFamilies() {
        QFETCH(QString, templateName);
        QFETCH(QString, family);
        QFETCH(bool, takesTools);
        auto t = load(templateName.toStdString());
        const ToolFormat f = ToolFormat::detect(*t);
        QCOMPARE(QString::fromLatin1(f.name()), family);
        QCOMPARE(f.templateTakesTools(), takesTools);
    }

    void gemmaWithFunctionGemmaTokensIsFunctionGemma() {
        auto t = load("builtin-gemma");
        const ToolFormat f = ToolFormat::detect(*t, [](std::string_view s) { return s == "<start_function_call>"; });
        QCOMPARE(f.family(), ToolFamily::FunctionGemma);
    }

    // Native tool templates: byte-identical to jinja2.
    void matchesJinja2_data() {
        QTest::addColumn<int>("index");
        static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
        const auto& cases = data.get("cases")->asList();
        QVERIFY(cases.size() >= 20);
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string name = cases[i].get("family")->asString() + "/" + cases[i].get("name")->asString();
            QTest::newRow(name.c_str()) << int(i);
        }
    }
    void matchesJinja2() {
        QFETCH(int, index);
        static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
        const Value& c = data.get("cases")->asList()[size_t(index)];
        auto t = load(c.get("template")->asString(), c.get("bos")->asString(), c.get("eos")->asString());
        const std::string got = render(*t, *c.get("messages"), *c.get("tools"));
        QCOMPARE(q(got), q(c.get("expected")->asString()));
    }

    // The calls the real templates write into the history are calls to our parser.
    void parserReadsTemplateCalls_data() {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::newRow("qwen2.5") << "qwen2.5" << "<|im_start|>assistant\n" << "<|im_end|>";
        QTest::newRow("qwen3") << "qwen3" << "<|im_start|>assistant\n" << "<|im_end|>";
        QTest::newRow("gemma4") << "gemma4" << "<|turn>model\n" << "<|tool_response>";
        QTest::newRow("llama3.1") << "llama3.1" << "<|start_header_id|>assistant<|end_header_id|>\n\n" << "<|eot_id|>";
        QTest::newRow("llama3.2") << "llama3.2" << "<|start_header_id|>assistant<|end_header_id|>\n\n" << "<|eot_id|>";
        QTest::newRow("chatml") << "builtin-chatml" << "<|im_start|>assistant\n" << "<|im_end|>";
    }
    void parserReadsTemplateCalls() {
        QFETCH(QString, family);
        QFETCH(QString, from);
        QFETCH(QString, to);
        static const Value data = Value::parseJson(readFile(dataDir() + "tools_expected.json"));
        for (const Value& c : data.get("cases")->asList()) {
            if (c.get("family")->asString() != family.toStdString() || c.get("name")->asString() != "roundtrip") continue;
            auto t = load(c.get("template")->asString(), c.get("bos")->asString(), c.get("eos")->asString());
            const std::string reply = between(c.get("expected")->asString(), from.toStdString(), to.toStdString());
            QVERIFY2(!reply.empty(), "no assistant turn found");
            const auto calls = parseAll(ToolFormat::detect(*t), reply, {"get_weather"});
            QCOMPARE(calls.size(), size_t(1));
            QCOMPARE(q(calls[0].name), QByteArray("get_weather"));
            QVERIFY(Value::parseJson(calls[0].arguments).equals(Value::parseJson(R"({"city": "Paris", "unit": "celsius"})")));
            return;
        }
        QFAIL("case not found");
    }

    // FunctionGemma through LiteRT's template: the declaration, call and
    // response in the form of Google's FunctionGemma formatting guide.
    void functionGemmaDocumentedPrompt() {
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
        QCOMPARE(q(got), q("<bos><start_of_turn>developer\n" + trigger + "\n\n" + declaration +
                           "<end_of_turn>\n<start_of_turn>user\nHey, what's the weather in Tokyo right now?"
                           "<end_of_turn>\n<start_of_turn>model\n"));

        // The round trip: the documented call and response.
        const Value messages = Value::list({user, callMsg("get_current_weather", R"({"location": "Tokyo, Japan"})"),
                                            toolMsg(R"({"temperature": 15, "weather": "sunny"})")});
        got = render(*t, messages, Value::list({tool}));
        QVERIFY2(got.find("<start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}"
                          "<end_function_call>") != std::string::npos, got.c_str());
        QVERIFY2(got.find("<start_function_response>response:get_current_weather{temperature:15,weather:<escape>sunny"
                          "<escape>}<end_function_response>") != std::string::npos, got.c_str());
        const ToolFormat f = ToolFormat::detect(*t);
        QVERIFY(f.markersAreSpecialTokens());
        QCOMPARE(f.stopStrings(), std::vector<std::string>{"<start_function_response>"});
    }

    // Gemma 3's template has no tools: Weir's instruction goes into the first
    // user turn, calls and results become text, turns still alternate.
    void gemma3Fallback_data() {
        QTest::addColumn<QString>("templateName");
        QTest::newRow("gemma3.jinja") << "gemma3.jinja";
        QTest::newRow("builtin gemma") << "builtin-gemma";
    }
    void gemma3Fallback() {
        QFETCH(QString, templateName);
        auto t = load(templateName.toStdString());
        const ToolFormat f = ToolFormat::detect(*t);
        const Value tools = Value::list({weatherTool(), clockTool()});

        const std::string offer = render(*t, Value::list({msg("system", "Be brief."), msg("user", "Weather in Paris?")}), tools);
        QVERIFY2(offer.rfind("<bos><start_of_turn>user\nBe brief.\n\n", 0) == 0, offer.c_str());
        QVERIFY(offer.find("\"name\": \"get_weather\"") != std::string::npos);
        QVERIFY(offer.find("\"name\": \"get_time\"") != std::string::npos);
        QVERIFY(offer.find("```tool_call") != std::string::npos);
        const std::string tail = "Weather in Paris?<end_of_turn>\n<start_of_turn>model\n";
        QVERIFY(offer.size() > tail.size() && offer.compare(offer.size() - tail.size(), tail.size(), tail) == 0);

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
        QCOMPARE(count(history, "<start_of_turn>user\n"), size_t(3));
        QCOMPARE(count(history, "<start_of_turn>model\n"), size_t(3));
        QVERIFY(history.find("```tool_output\n18 C\n```\n\n```tool_output\n09:00\n```") != std::string::npos);
        // The model sees its calls in the very form the parser reads.
        const std::string reply = between(history, "<start_of_turn>model\n", "<end_of_turn>");
        const auto parsed = parseAll(f, reply, {"get_weather", "get_time"});
        QCOMPARE(parsed.size(), size_t(2));
        QCOMPARE(q(parsed[0].name), QByteArray("get_weather"));
        QVERIFY(Value::parseJson(parsed[0].arguments).equals(Value::parseJson(R"({"city": "Paris"})")));
        QCOMPARE(q(parsed[1].name), QByteArray("get_time"));
        QVERIFY(Value::parseJson(parsed[1].arguments).equals(Value::parseJson(R"({"timezone": "Europe/Paris"})")));
        QCOMPARE(f.stopStrings(), std::vector<std::string>{"```tool_output"});
        QVERIFY(!f.markersAreSpecialTokens());
    }

    void llama3BuiltinFallback() {
        auto t = load("builtin-llama3", "<|begin_of_text|>", "<|eot_id|>");
        const ToolFormat f = ToolFormat::detect(*t);
        const std::string offer = render(*t, Value::list({msg("user", "Weather in Oslo?")}), Value::list({weatherTool()}));
        QVERIFY(offer.find("<|start_header_id|>system<|end_header_id|>\n\nYou can call") != std::string::npos);
        QVERIFY(offer.find("\"parameters\"") != std::string::npos);
        const std::string history = render(*t, Value::list({msg("user", "Weather in Oslo?"),
                                                            callMsg("get_weather", R"({"city": "Oslo"})"),
                                                            toolMsg("cold")}),
                                           Value::list({weatherTool()}));
        const std::string reply = between(history, "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>");
        const auto parsed = parseAll(f, reply, {"get_weather"});
        QCOMPARE(parsed.size(), size_t(1));
        QVERIFY(Value::parseJson(parsed[0].arguments).equals(Value::parseJson(R"({"city": "Oslo"})")));
    }

    void toolChoice() {
        auto t = load("gemma3.jinja");
        const Value tools = Value::list({weatherTool(), clockTool()});
        const Value messages = Value::list({msg("user", "What time is it?")});
        ToolChoice only;
        only.mode = ToolChoice::Mode::Function;
        only.function = "get_time";
        const std::string named = render(*t, messages, tools, only);
        QVERIFY(named.find("\"get_time\"") != std::string::npos);
        QVERIFY(named.find("get_weather") == std::string::npos);
        QVERIFY(named.find("You must call the function get_time.") != std::string::npos);

        ToolChoice none;
        none.mode = ToolChoice::Mode::None;
        QCOMPARE(q(render(*t, messages, tools, none)), q(t->render({{"user", "What time is it?", {}}}, true)));

        ToolChoice missing;
        missing.mode = ToolChoice::Mode::Function;
        missing.function = "nope";
        QVERIFY_THROWS_EXCEPTION(weir::Error, render(*t, messages, tools, missing));
    }

    // tool_choice required / named: the prompt ends with the start of a call,
    // and that start plus what a model writes next reads as the call.
    void forcedPrefix_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<QByteArray>("continuation");
        QTest::newRow("gemma3 fallback") << "gemma3.jinja" << QByteArray("{\"city\": \"Paris\"}}\n```\nmore text");
        QTest::newRow("gemma3 pythonic") << "gemma3-tools-pythonic.jinja" << QByteArray("city=\"Paris\")]");
        QTest::newRow("functiongemma") << "functiongemma-litert.jinja" << QByteArray("city:<escape>Paris<escape>}<end_function_call>");
        QTest::newRow("gemma4") << "gemma4.jinja" << QByteArray("city:<|\"|>Paris<|\"|>}<tool_call|>");
        QTest::newRow("qwen") << "qwen2.5.jinja" << QByteArray("{\"city\": \"Paris\"}}\n</tool_call>");
        QTest::newRow("llama3") << "llama3.1.jinja" << QByteArray("{\"city\": \"Paris\"}}");
    }
    void forcedPrefix() {
        QFETCH(QString, templateName);
        QFETCH(QByteArray, continuation);
        auto t = load(templateName.toStdString());
        const ToolFormat f = ToolFormat::detect(*t);
        ToolChoice named;
        named.mode = ToolChoice::Mode::Function;
        named.function = "get_weather";
        const std::string prefix = f.forcedPrefix(named);
        QVERIFY(!prefix.empty());
        QVERIFY(prefix.find("get_weather") != std::string::npos);
        auto parser = f.makeParser({"get_weather"});
        auto out = parser->push(prefix);
        QCOMPARE(q(out.text), QByteArray());
        auto more = parser->push(continuation.toStdString());
        auto last = parser->finish();
        more.calls.insert(more.calls.end(), last.calls.begin(), last.calls.end());
        QCOMPARE(more.calls.size(), size_t(1));
        QVERIFY(Value::parseJson(more.calls[0].arguments).equals(Value::parseJson(R"({"city": "Paris"})")));
        // "required" opens a call without naming the function.
        ToolChoice required;
        required.mode = ToolChoice::Mode::Required;
        QVERIFY(!f.forcedPrefix(required).empty());
        QVERIFY(f.forcedPrefix(ToolChoice{}).empty());
        // The prompt ends with the generation prompt; the server appends the prefix.
        const std::string prompt = render(*t, Value::list({msg("user", "Weather in Paris?")}), Value::list({weatherTool()}), named);
        QVERIFY(!prompt.empty());
    }

    void gemma3BlockEndsTheReply() {
        auto parser = ToolFormat(ToolFamily::Gemma3, false, false).makeParser({"get_time"});
        auto out = parser->push("```tool_call\n{\"name\": \"get_time\"}\n```");
        QCOMPARE(out.calls.size(), size_t(1));
        QVERIFY(parser->done());
        QCOMPARE(q(parser->push("garbage after the call").text), QByteArray());
        QVERIFY(parser->finish().calls.empty());
    }

    void gemma3RejectsBrokenOrder() {
        // A conversation the template cannot express stays an error (the API answers 400).
        auto t = load("gemma3.jinja");
        QVERIFY_THROWS_EXCEPTION(weir::Error, render(*t, Value::list({msg("assistant", "hi")}), Value::list({weatherTool()})));
    }
};

QTEST_APPLESS_MAIN(ToolFormatTest)
#include "tool_format_test.moc"
