// Tool-call parsing per family on hand-written model outputs (the documented
// examples of each format, plus the ways small models get them wrong): calls
// come out with their name and JSON arguments, everything else comes back as
// the exact text it was, whatever the chunking of the stream.
#include <QtTest>

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

QByteArray q(const std::string& s) { return QByteArray::fromStdString(s); }

#define CHECK_CALL(call, expectedName, expectedArgs)                                                        \
    do {                                                                                                    \
        QCOMPARE(q((call).name), QByteArray(expectedName));                                                 \
        QVERIFY2(sameJson((call).arguments, expectedArgs), ((call).arguments + " vs " + expectedArgs).c_str()); \
    } while (0)

const std::vector<std::string> kWeather = {"get_weather", "get_time", "get_current_temperature", "set_alarm"};

}  // namespace

class ToolCallParserTest : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ FunctionGemma

    void functionGemmaDocumentedCall() {
        // The example of Google's FunctionGemma formatting guide.
        const Result r = runAll(ToolFamily::FunctionGemma, kWeather,
                                "<start_function_call>call:get_current_temperature{location:<escape>Paris<escape>,"
                                "unit:<escape>celsius<escape>}<end_function_call>");
        QCOMPARE(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], "get_current_temperature", std::string(R"({"location": "Paris", "unit": "celsius"})"));
        QCOMPARE(q(r.text), QByteArray());
    }

    void functionGemmaParallelAndTypes() {
        const Result r = runAll(
            ToolFamily::FunctionGemma, kWeather,
            "Sure.<start_function_call>call:get_weather{city:<escape>Tokyo, {JP}: x<escape>}<end_function_call>"
            "<start_function_call>call:set_alarm{time:{hour:7,minute:30},days:[<escape>mon<escape>,<escape>tue<escape>],"
            "loud:true,volume:0.5,label:null}<end_function_call>");
        QCOMPARE(q(r.text), QByteArray("Sure."));
        QCOMPARE(r.calls.size(), size_t(2));
        CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Tokyo, {JP}: x"})"));
        CHECK_CALL(r.calls[1], "set_alarm",
                   std::string(R"({"time": {"hour": 7, "minute": 30}, "days": ["mon", "tue"], "loud": true, "volume": 0.5, "label": null})"));
    }

    void functionGemmaEndsWithoutEndMarker() {
        // Generation stopped (EOS) right after the arguments: still a call.
        const Result r = runAll(ToolFamily::FunctionGemma, kWeather, "<start_function_call>call:get_time{}");
        QCOMPARE(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], "get_time", std::string("{}"));
    }

    void functionGemmaMalformed_data() {
        QTest::addColumn<QByteArray>("output");
        QTest::newRow("unknown name") << QByteArray("<start_function_call>call:rm_rf{path:<escape>/<escape>}<end_function_call>");
        QTest::newRow("unterminated string") << QByteArray("<start_function_call>call:get_weather{city:<escape>Paris}<end_function_call>");
        QTest::newRow("no call prefix") << QByteArray("<start_function_call>get_weather{city:<escape>Paris<escape>}<end_function_call>");
        QTest::newRow("missing brace") << QByteArray("<start_function_call>call:get_weather{city:<escape>Paris<escape><end_function_call>");
        QTest::newRow("truncated") << QByteArray("<start_function_call>call:get_weather{city:<esc");
        QTest::newRow("arguments not an object") << QByteArray("<start_function_call>call:get_weather[1]<end_function_call>");
        QTest::newRow("trailing junk") << QByteArray("<start_function_call>call:get_time{} and more<end_function_call>");
        QTest::newRow("plain text") << QByteArray("The weather is fine, no call needed.");
    }
    void functionGemmaMalformed() {
        QFETCH(QByteArray, output);
        const Result r = runAll(ToolFamily::FunctionGemma, kWeather, output.toStdString());
        QCOMPARE(r.calls.size(), size_t(0));
        QCOMPARE(q(r.text), output);
    }

    // ------------------------------------------------------------ Gemma 4

    void gemma4Call() {
        const Result r = runAll(ToolFamily::Gemma4, kWeather,
                                "<|channel>thought\nThe user wants weather.<channel|>"
                                "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>");
        QCOMPARE(q(r.text), QByteArray());
        QCOMPARE(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Paris", "unit": "celsius"})"));
    }

    void gemma4MalformedIsText() {
        const std::string out = "Let me see <|tool_call>call:get_weather{city:Paris<tool_call|> done";
        const Result r = runAll(ToolFamily::Gemma4, kWeather, out);
        QCOMPARE(r.calls.size(), size_t(0));
        QCOMPARE(q(r.text), q(out));
    }

    // ------------------------------------------------------------ Qwen

    void qwenCalls() {
        const Result r = runAll(ToolFamily::Qwen, kWeather,
                                "I'll check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                                "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                                "\"{\\\"city\\\": \\\"Rome\\\"}\"}\n</tool_call>");
        QCOMPARE(q(r.text), QByteArray("I'll check both."));
        QCOMPARE(r.calls.size(), size_t(2));
        CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Paris"})"));
        CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Rome"})"));
    }

    void qwenMalformed_data() {
        QTest::addColumn<QByteArray>("output");
        QTest::newRow("bad json") << QByteArray("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>");
        QTest::newRow("no name") << QByteArray("<tool_call>{\"arguments\": {}}</tool_call>");
        QTest::newRow("name not a string") << QByteArray("<tool_call>{\"name\": 5}</tool_call>");
        QTest::newRow("arguments a list") << QByteArray("<tool_call>{\"name\": \"get_time\", \"arguments\": [1]}</tool_call>");
        QTest::newRow("unterminated") << QByteArray("Checking <tool_call>{\"name\": \"get_time\", \"argu");
        QTest::newRow("marker alone") << QByteArray("a <tool_call");
    }
    void qwenMalformed() {
        QFETCH(QByteArray, output);
        const Result r = runAll(ToolFamily::Qwen, kWeather, output.toStdString());
        QCOMPARE(r.calls.size(), size_t(0));
        QCOMPARE(q(r.text), output);
    }

    // ------------------------------------------------------------ Llama 3

    void llamaBareJson() {
        Result r = runAll(ToolFamily::Llama3, kWeather, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
        QCOMPARE(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], "get_weather", std::string(R"({"city": "Oslo"})"));
        QCOMPARE(q(r.text), QByteArray());

        r = runAll(ToolFamily::Llama3, kWeather,
                   "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}; "
                   "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}");
        QCOMPARE(r.calls.size(), size_t(2));
        CHECK_CALL(r.calls[0], "get_time", std::string(R"({"timezone": "UTC"})"));
        CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Lima"})"));
    }

    void llamaCallThenProse() {
        const Result r = runAll(ToolFamily::Llama3, kWeather,
                                "{\"name\": \"get_time\", \"parameters\": {}}\nI have asked for the time.");
        QCOMPARE(r.calls.size(), size_t(1));
        QCOMPARE(q(r.text), QByteArray("I have asked for the time."));
    }

    void llamaJsonAnswerIsReleasedEarly() {
        // A JSON reply that is not a call goes out as soon as its object closes.
        auto parser = formatOf(ToolFamily::Llama3).makeParser(kWeather);
        auto out = parser->push("{\"answer\": 42");
        QCOMPARE(q(out.text), QByteArray());
        out = parser->push("} is the answer");
        QCOMPARE(q(out.text), QByteArray("{\"answer\": 42} is the answer"));
        QVERIFY(parser->finish().calls.empty());
    }

    void plainTextStreamsAtOnce() {
        auto parser = formatOf(ToolFamily::Llama3).makeParser(kWeather);
        QCOMPARE(q(parser->push("The weather").text), QByteArray("The weather"));
        QCOMPARE(q(parser->push(" is nice.").text), QByteArray(" is nice."));
    }

    // ------------------------------------------------------------ Gemma 3 (JSON in prompt)

    void gemma3Forms_data() {
        QTest::addColumn<QByteArray>("output");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QByteArray>("args");
        QTest::newRow("tool_call block") << QByteArray("```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```")
                                         << QByteArray() << QByteArray("get_weather") << QByteArray(R"({"city": "Paris"})");
        QTest::newRow("tool_code python") << QByteArray("```tool_code\nget_weather(city=\"Paris\", unit='celsius')\n```")
                                          << QByteArray() << QByteArray("get_weather")
                                          << QByteArray(R"({"city": "Paris", "unit": "celsius"})");
        QTest::newRow("bare python list") << QByteArray("[get_weather(city=\"Paris\", unit=\"celsius\")]") << QByteArray()
                                          << QByteArray("get_weather") << QByteArray(R"({"city": "Paris", "unit": "celsius"})");
        QTest::newRow("bare python call") << QByteArray("  get_time(timezone='Asia/Tokyo', precise=True)") << QByteArray()
                                          << QByteArray("get_time") << QByteArray(R"({"timezone": "Asia/Tokyo", "precise": true})");
        QTest::newRow("bare json") << QByteArray("{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}")
                                   << QByteArray() << QByteArray("get_time") << QByteArray(R"({"timezone": "UTC"})");
        QTest::newRow("openai shaped") << QByteArray("```json\n[{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"arguments\": \"{}\"}}]\n```")
                                       << QByteArray() << QByteArray("get_time") << QByteArray("{}");
        QTest::newRow("text then block") << QByteArray("Let me check.\n```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\n")
                                         << QByteArray("Let me check.") << QByteArray("get_weather") << QByteArray(R"({"city": "Rome"})");
        QTest::newRow("python escapes") << QByteArray("[get_weather(city=\"Qu\\u00e9bec \\\"QC\\\"\", unit=None)]") << QByteArray()
                                        << QByteArray("get_weather") << QByteArray("{\"city\": \"Qu\u00e9bec \\\"QC\\\"\", \"unit\": null}");
    }
    void gemma3Forms() {
        QFETCH(QByteArray, output);
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, name);
        QFETCH(QByteArray, args);
        const Result r = runAll(ToolFamily::Gemma3, kWeather, output.toStdString());
        QCOMPARE(q(r.text), text);
        QCOMPARE(r.calls.size(), size_t(1));
        CHECK_CALL(r.calls[0], name.constData(), args.toStdString());
    }

    void gemma3SeveralCalls() {
        const Result r = runAll(ToolFamily::Gemma3, kWeather,
                                "```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                                "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```");
        QCOMPARE(r.calls.size(), size_t(2));
        CHECK_CALL(r.calls[1], "get_weather", std::string(R"({"city": "Rome"})"));
    }

    void gemma3Malformed_data() {
        QTest::addColumn<QByteArray>("output");
        QTest::newRow("json answer in a block") << QByteArray("Here is JSON:\n```json\n{\"a\": 1}\n```\nDone.");
        QTest::newRow("code block") << QByteArray("```python\nprint(get_weather(city='x'))\n```");
        QTest::newRow("positional argument") << QByteArray("[get_weather(\"Paris\")]");
        QTest::newRow("variable argument") << QByteArray("get_weather(city=paris)");
        QTest::newRow("unknown function") << QByteArray("```tool_call\n{\"name\": \"delete_all\", \"arguments\": {}}\n```");
        QTest::newRow("markdown link") << QByteArray("[a link](http://example.com) and text");
        QTest::newRow("unclosed block") << QByteArray("```tool_call\n{\"name\": \"get_time\"");
        QTest::newRow("unclosed bare") << QByteArray("{\"name\": \"get_time\", \"arguments\": {");
        QTest::newRow("braces in prose") << QByteArray("Sets look like {1, 2} in maths.");
        QTest::newRow("name prefix only") << QByteArray("get_weathery is not a function");
        QTest::newRow("deep nesting") << QByteArray(std::string(5000, '[') .c_str());
    }
    void gemma3Malformed() {
        QFETCH(QByteArray, output);
        const Result r = runAll(ToolFamily::Gemma3, kWeather, output.toStdString());
        QCOMPARE(r.calls.size(), size_t(0));
        QCOMPARE(q(r.text), output);
    }

    void anyNameWhenNoListGiven() {
        const Result r = runAll(ToolFamily::Qwen, {}, "<tool_call>{\"name\": \"whatever\", \"arguments\": {}}</tool_call>");
        QCOMPARE(r.calls.size(), size_t(1));
    }

    // ------------------------------------------------------------ robustness

    // Random outputs built from pieces of every family's syntax: never a
    // crash, the same result for every chunking, and without calls the text
    // comes back unchanged.
    void randomOutputs() {
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
            QVERIFY2(r.text != "<chunking mismatch>", s.c_str());
            if (r.calls.empty()) QVERIFY2(r.text == s, s.c_str());
            else ++withCalls;
            for (const ToolCall& c : r.calls) QVERIFY(Value::parseJson(c.arguments).isMapping());
        }
        std::printf("  %d of 3000 random outputs held calls\n", withCalls);
    }
};

QTEST_APPLESS_MAIN(ToolCallParserTest)
#include "tool_call_parser_test.moc"
