// Tool-call parsing per family on hand-written model outputs (the documented
// examples of each format, plus the ways small models get them wrong): calls
// come out with their name and JSON arguments, everything else comes back as
// the exact text it was, whatever the chunking of the stream.
#include "tests/support/weir_test.h"

#include <random>

#include "engine/chat/jinja_value.h"
#include "engine/chat/tool_call_parser.h"
#include "engine/chat/tool_format.h"

using weir::ToolCall;
using weir::ToolCallParser;
using weir::ToolFamily;
using weir::ToolFormat;
using weir::jinja::Value;

namespace {

struct Result {
    std::string text;
    std::vector<ToolCall> calls;
};

ToolFormat formatOf(ToolFamily f) { return ToolFormat(f, true, true); }

// Feeds `output` in pieces of the given sizes (cycled); 0 = all at once.
Result run(ToolFamily family, const std::vector<std::string>& names, const std::string& output,
           std::vector<size_t> pieces = {0}) {
    auto parser = formatOf(family).makeParser(names);
    Result r;
    size_t pos = 0, k = 0;
    while (pos < output.size()) {
        size_t n = pieces[k++ % pieces.size()];
        if (n == 0) n = output.size();
        n = std::min(n, output.size() - pos);
        auto out = parser->push(std::string_view(output).substr(pos, n));
        r.text += out.text;
        r.calls.insert(r.calls.end(), out.calls.begin(), out.calls.end());
        pos += n;
    }
    auto out = parser->finish();
    r.text += out.text;
    r.calls.insert(r.calls.end(), out.calls.begin(), out.calls.end());
    return r;
}

// The same result for every chunking: whole, byte by byte, and random pieces.
Result runAll(ToolFamily family, const std::vector<std::string>& names, const std::string& output) {
    const Result whole = run(family, names, output);
    std::vector<std::vector<size_t>> chunkings = {{1}, {2}, {3, 1, 7}, {5, 11}};
    std::mt19937 rng(uint32_t(output.size()) * 31u + uint32_t(family));
    std::vector<size_t> random;
    for (int i = 0; i < 64; ++i) random.push_back(1 + rng() % 9);
    chunkings.push_back(random);
    for (const auto& c : chunkings) {
        const Result r = run(family, names, output, c);
        if (r.text != whole.text || r.calls.size() != whole.calls.size()) {
            std::printf("  chunking changed the result of %s\n", output.c_str());
            return Result{"<chunking mismatch>", {}};
        }
        for (size_t i = 0; i < r.calls.size(); ++i)
            if (r.calls[i].name != whole.calls[i].name || r.calls[i].arguments != whole.calls[i].arguments)
                return Result{"<chunking mismatch>", {}};
    }
    return whole;
}

bool sameJson(const std::string& a, const std::string& b) {
    try {
        return Value::parseJson(a).equals(Value::parseJson(b));
    } catch (...) {
        return false;
    }
}

// Text as a std::string, so both sides of a comparison print as text.
std::string q(std::string s) { return s; }

#define CHECK_CALL(call, expectedName, expectedArgs)                                                        \
    do {                                                                                                    \
        REQUIRE_EQ(q((call).name), std::string(expectedName));                                                 \
        REQUIRE_MSG(sameJson((call).arguments, expectedArgs), ((call).arguments + " vs " + expectedArgs).c_str()); \
    } while (0)

const std::vector<std::string> kWeather = {"get_weather", "get_time", "get_current_temperature", "set_alarm"};

}  // namespace

// ------------------------------------------------------------ FunctionGemma

WEIR_TEST(ToolCallParser, functionGemmaDocumentedCall) {
    // The example of Google's FunctionGemma formatting guide.
    const Result r = runAll(ToolFamily::FunctionGemma, kWeather,
                            "<start_function_call>call:get_current_temperature{location:<escape>Paris<escape>,"
                            "unit:<escape>celsius<escape>}<end_function_call>");
    REQUIRE_EQ(r.calls.size(), size_t(1));
    CHECK_CALL(r.calls[0], "get_current_temperature", std::string(R"({"location": "Paris", "unit": "celsius"})"));
    REQUIRE_EQ(q(r.text), std::string());
}

WEIR_TEST(ToolCallParser, functionGemmaParallelAndTypes) {
    const Result r = runAll(
        ToolFamily::FunctionGemma, kWeather,
        "Sure.<start_function_call>call:get_weather{city:<escape>Tokyo, {JP}: x<escape>}<end_function_call>"
        "<start_function_call>call:set_alarm{time:{hour:7,minute:30},days:[<escape>mon<escape>,<escape>tue<escape>],"
        "loud:true,volume:0.5,label:null}<end_function_call>");
    REQUIRE_EQ(q(r.text), std::string("Sure."));
    REQUIRE_EQ(r.calls.size(), size_t(2));
    CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Tokyo, {JP}: x"})"));
    CHECK_CALL(r.calls[1], "set_alarm",
               std::string(R"({"time": {"hour": 7, "minute": 30}, "days": ["mon", "tue"], "loud": true, "volume": 0.5, "label": null})"));
}

WEIR_TEST(ToolCallParser, functionGemmaEndsWithoutEndMarker) {
    // Generation stopped (EOS) right after the arguments: still a call.
    const Result r = runAll(ToolFamily::FunctionGemma, kWeather, "<start_function_call>call:get_time{}");
    REQUIRE_EQ(r.calls.size(), size_t(1));
    CHECK_CALL(r.calls[0], "get_time", std::string("{}"));
}

struct FunctionGemmaMalformedRow {
    std::string name;
    std::string output;
};

static std::vector<FunctionGemmaMalformedRow> functionGemmaMalformedRows() {
    std::vector<FunctionGemmaMalformedRow> rows;
    rows.push_back({"unknown name", std::string("<start_function_call>call:rm_rf{path:<escape>/<escape>}<end_function_call>")});
    rows.push_back({"unterminated string", std::string("<start_function_call>call:get_weather{city:<escape>Paris}<end_function_call>")});
    rows.push_back({"no call prefix", std::string("<start_function_call>get_weather{city:<escape>Paris<escape>}<end_function_call>")});
    rows.push_back({"missing brace", std::string("<start_function_call>call:get_weather{city:<escape>Paris<escape><end_function_call>")});
    rows.push_back({"truncated", std::string("<start_function_call>call:get_weather{city:<esc")});
    rows.push_back({"arguments not an object", std::string("<start_function_call>call:get_weather[1]<end_function_call>")});
    rows.push_back({"trailing junk", std::string("<start_function_call>call:get_time{} and more<end_function_call>")});
    rows.push_back({"plain text", std::string("The weather is fine, no call needed.")});
    return rows;
}
WEIR_TEST(ToolCallParser, functionGemmaMalformed) {
    weirtest::eachRow(functionGemmaMalformedRows(), [&](const FunctionGemmaMalformedRow& row) {
        const std::string& output = row.output;
        const Result r = runAll(ToolFamily::FunctionGemma, kWeather, output);
        REQUIRE_EQ(r.calls.size(), size_t(0));
        REQUIRE_EQ(q(r.text), output);
    });
}

// ------------------------------------------------------------ Gemma 4

WEIR_TEST(ToolCallParser, gemma4Call) {
    const Result r = runAll(ToolFamily::Gemma4, kWeather,
                            "<|channel>thought\nThe user wants weather.<channel|>"
                            "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>");
    REQUIRE_EQ(q(r.text), std::string());
    REQUIRE_EQ(r.calls.size(), size_t(1));
    CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Paris", "unit": "celsius"})"));
}

WEIR_TEST(ToolCallParser, gemma4MalformedIsText) {
    const std::string out = "Let me see <|tool_call>call:get_weather{city:Paris<tool_call|> done";
    const Result r = runAll(ToolFamily::Gemma4, kWeather, out);
    REQUIRE_EQ(r.calls.size(), size_t(0));
    REQUIRE_EQ(q(r.text), q(out));
}

// ------------------------------------------------------------ Qwen

WEIR_TEST(ToolCallParser, qwenCalls) {
    const Result r = runAll(ToolFamily::Qwen, kWeather,
                            "I'll check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                            "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                            "\"{\\\"city\\\": \\\"Rome\\\"}\"}\n</tool_call>");
    REQUIRE_EQ(q(r.text), std::string("I'll check both."));
    REQUIRE_EQ(r.calls.size(), size_t(2));
    CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Paris"})"));
    CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Rome"})"));
}

struct QwenMalformedRow {
    std::string name;
    std::string output;
};

static std::vector<QwenMalformedRow> qwenMalformedRows() {
    std::vector<QwenMalformedRow> rows;
    rows.push_back({"bad json", std::string("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>")});
    rows.push_back({"no name", std::string("<tool_call>{\"arguments\": {}}</tool_call>")});
    rows.push_back({"name not a string", std::string("<tool_call>{\"name\": 5}</tool_call>")});
    rows.push_back({"arguments a list", std::string("<tool_call>{\"name\": \"get_time\", \"arguments\": [1]}</tool_call>")});
    rows.push_back({"unterminated", std::string("Checking <tool_call>{\"name\": \"get_time\", \"argu")});
    rows.push_back({"marker alone", std::string("a <tool_call")});
    return rows;
}
WEIR_TEST(ToolCallParser, qwenMalformed) {
    weirtest::eachRow(qwenMalformedRows(), [&](const QwenMalformedRow& row) {
        const std::string& output = row.output;
        const Result r = runAll(ToolFamily::Qwen, kWeather, output);
        REQUIRE_EQ(r.calls.size(), size_t(0));
        REQUIRE_EQ(q(r.text), output);
    });
}

// ------------------------------------------------------------ Llama 3

WEIR_TEST(ToolCallParser, llamaBareJson) {
    Result r = runAll(ToolFamily::Llama3, kWeather, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
    REQUIRE_EQ(r.calls.size(), size_t(1));
    CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Oslo"})"));
    REQUIRE_EQ(q(r.text), std::string());

    r = runAll(ToolFamily::Llama3, kWeather,
               "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}; "
               "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}");
    REQUIRE_EQ(r.calls.size(), size_t(2));
    CHECK_CALL(r.calls[0], "get_time", std::string(R"({"timezone": "UTC"})"));
    CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Lima"})"));
}

WEIR_TEST(ToolCallParser, llamaCallThenProse) {
    const Result r = runAll(ToolFamily::Llama3, kWeather,
                            "{\"name\": \"get_time\", \"parameters\": {}}\nI have asked for the time.");
    REQUIRE_EQ(r.calls.size(), size_t(1));
    REQUIRE_EQ(q(r.text), std::string("I have asked for the time."));
}

WEIR_TEST(ToolCallParser, llamaJsonAnswerIsReleasedEarly) {
    // A JSON reply that is not a call goes out as soon as its object closes.
    auto parser = formatOf(ToolFamily::Llama3).makeParser(kWeather);
    auto out = parser->push("{\"answer\": 42");
    REQUIRE_EQ(q(out.text), std::string());
    out = parser->push("} is the answer");
    REQUIRE_EQ(q(out.text), std::string("{\"answer\": 42} is the answer"));
    REQUIRE(parser->finish().calls.empty());
}

WEIR_TEST(ToolCallParser, plainTextStreamsAtOnce) {
    auto parser = formatOf(ToolFamily::Llama3).makeParser(kWeather);
    REQUIRE_EQ(q(parser->push("The weather").text), std::string("The weather"));
    REQUIRE_EQ(q(parser->push(" is nice.").text), std::string(" is nice."));
}

// ------------------------------------------------------------ Gemma 3 (JSON in prompt)

struct Gemma3FormsRow {
    std::string name;
    std::string output;
    std::string text;
    std::string callName;
    std::string args;
};

static std::vector<Gemma3FormsRow> gemma3FormsRows() {
    std::vector<Gemma3FormsRow> rows;
    rows.push_back({"tool_call block", std::string("```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```"), std::string(), std::string("get_weather"), std::string(R"({"city": "Paris"})")});
    rows.push_back({"tool_code python", std::string("```tool_code\nget_weather(city=\"Paris\", unit='celsius')\n```"), std::string(), std::string("get_weather"), std::string(R"({"city": "Paris", "unit": "celsius"})")});
    rows.push_back({"bare python list", std::string("[get_weather(city=\"Paris\", unit=\"celsius\")]"), std::string(), std::string("get_weather"), std::string(R"({"city": "Paris", "unit": "celsius"})")});
    rows.push_back({"bare python call", std::string("  get_time(timezone='Asia/Tokyo', precise=True)"), std::string(), std::string("get_time"), std::string(R"({"timezone": "Asia/Tokyo", "precise": true})")});
    rows.push_back({"bare json", std::string("{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}"), std::string(), std::string("get_time"), std::string(R"({"timezone": "UTC"})")});
    rows.push_back({"openai shaped", std::string("```json\n[{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"arguments\": \"{}\"}}]\n```"), std::string(), std::string("get_time"), std::string("{}")});
    rows.push_back({"text then block", std::string("Let me check.\n```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\n"), std::string("Let me check."), std::string("get_weather"), std::string(R"({"city": "Rome"})")});
    rows.push_back({"python escapes", std::string("[get_weather(city=\"Qu\\u00e9bec \\\"QC\\\"\", unit=None)]"), std::string(), std::string("get_weather"), std::string("{\"city\": \"Qu\u00e9bec \\\"QC\\\"\", \"unit\": null}")});
    return rows;
}
WEIR_TEST(ToolCallParser, gemma3Forms) {
    weirtest::eachRow(gemma3FormsRows(), [&](const Gemma3FormsRow& row) {
        const std::string& output = row.output;
        const std::string& text = row.text;
        const std::string& name = row.callName;
        const std::string& args = row.args;
        const Result r = runAll(ToolFamily::Gemma3, kWeather, output);
        REQUIRE_EQ(q(r.text), text);
        REQUIRE_EQ(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], name.c_str(), args);
    });
}

WEIR_TEST(ToolCallParser, gemma3SeveralCalls) {
    const Result r = runAll(ToolFamily::Gemma3, kWeather,
                            "```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```");
    REQUIRE_EQ(r.calls.size(), size_t(2));
    CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Rome"})"));
}

struct Gemma3MalformedRow {
    std::string name;
    std::string output;
};

static std::vector<Gemma3MalformedRow> gemma3MalformedRows() {
    std::vector<Gemma3MalformedRow> rows;
    rows.push_back({"json answer in a block", std::string("Here is JSON:\n```json\n{\"a\": 1}\n```\nDone.")});
    rows.push_back({"code block", std::string("```python\nprint(get_weather(city='x'))\n```")});
    rows.push_back({"positional argument", std::string("[get_weather(\"Paris\")]")});
    rows.push_back({"variable argument", std::string("get_weather(city=paris)")});
    rows.push_back({"unknown function", std::string("```tool_call\n{\"name\": \"delete_all\", \"arguments\": {}}\n```")});
    rows.push_back({"markdown link", std::string("[a link](http://example.com) and text")});
    rows.push_back({"unclosed block", std::string("```tool_call\n{\"name\": \"get_time\"")});
    rows.push_back({"unclosed bare", std::string("{\"name\": \"get_time\", \"arguments\": {")});
    rows.push_back({"braces in prose", std::string("Sets look like {1, 2} in maths.")});
    rows.push_back({"name prefix only", std::string("get_weathery is not a function")});
    rows.push_back({"deep nesting", std::string(5000, '[')});
    return rows;
}
WEIR_TEST(ToolCallParser, gemma3Malformed) {
    weirtest::eachRow(gemma3MalformedRows(), [&](const Gemma3MalformedRow& row) {
        const std::string& output = row.output;
        const Result r = runAll(ToolFamily::Gemma3, kWeather, output);
        REQUIRE_EQ(r.calls.size(), size_t(0));
        REQUIRE_EQ(q(r.text), output);
    });
}

WEIR_TEST(ToolCallParser, anyNameWhenNoListGiven) {
    const Result r = runAll(ToolFamily::Qwen, {}, "<tool_call>{\"name\": \"whatever\", \"arguments\": {}}</tool_call>");
    REQUIRE_EQ(r.calls.size(), size_t(1));
}

// ------------------------------------------------------------ robustness

// Random outputs built from pieces of every family's syntax: never a
// crash, the same result for every chunking, and without calls the text
// comes back unchanged.
WEIR_TEST(ToolCallParser, randomOutputs) {
    const std::vector<std::string> pieces = {
        "<start_function_call>", "<end_function_call>", "call:", "get_weather", "get_time", "{", "}", "[", "]",
        "<escape>", "<|\"|>", "<|tool_call>", "<tool_call|>", "<tool_call>", "</tool_call>", "```tool_call\n",
        "```json", "```", "\"name\"", ": ", "\"get_weather\"", "\"arguments\"", ",", "city", "=", "\"Paris\"",
        "(", ")", " ", "\n", "<|python_tag|>", "hello", "42", "true", "'", "\\", "é",
        // whole calls of each family, so that some outputs hold calls
        "<start_function_call>call:get_time{}<end_function_call>", "<|tool_call>call:get_time{}<tool_call|>",
        "<tool_call>{\"name\": \"get_time\"}</tool_call>", "```tool_call\n{\"name\": \"get_time\"}\n```",
        "get_time()", "{\"name\": \"get_time\", \"parameters\": {}}"};
    const ToolFamily families[] = {ToolFamily::Gemma3, ToolFamily::FunctionGemma, ToolFamily::Gemma4,
                                   ToolFamily::Llama3, ToolFamily::Qwen, ToolFamily::Generic};
    std::mt19937 rng(1234);
    int withCalls = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string s;
        const int n = 1 + int(rng() % 24);
        for (int k = 0; k < n; ++k) s += pieces[rng() % pieces.size()];
        const ToolFamily f = families[i % 6];
        const Result r = runAll(f, kWeather, s);
        REQUIRE_MSG(r.text != "<chunking mismatch>", s.c_str());
        if (r.calls.empty()) REQUIRE_MSG(r.text == s, s.c_str());
        else ++withCalls;
        for (const ToolCall& c : r.calls) REQUIRE(Value::parseJson(c.arguments).isMapping());
    }
    std::printf("  %d of 3000 random outputs held calls\n", withCalls);
}
