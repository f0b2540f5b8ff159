// The request parser of the HTTP endpoint: every field read as OpenAI
// documents it, every wrong type or value a 400 naming the field, and a fuzz
// of tens of thousands of mutated bodies (byte-level and JSON-level) that only
// ever get a 4xx error in OpenAI's JSON shape or a request that renders.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <fstream>
#include <random>
#include <sstream>

#include "app/server/chat_prompt.h"
#include "app/server/request_parser.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/tool_format.h"

using namespace weir::server;

namespace {

const char* kChat = R"({
  "model": "gemma-3-270m-q4_k_m",
  "messages": [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\u0022city\u0022: \u0022Paris\u0022}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
    {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
  "tool_choice": "auto",
  "max_tokens": 32, "temperature": 0.7, "top_p": 0.9, "seed": 42, "stop": ["\n\n", "END"],
  "stream": true, "stream_options": {"include_usage": true}, "n": 1, "user": "ignored"
})";

const char* kCompletion = R"({"model": "m", "prompt": "Once upon a time", "max_tokens": 8, "temperature": 0,
  "stop": "\n", "seed": 1, "echo": false, "stream": false})";

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A 4xx in OpenAI's shape: {"error": {"message": str, "type": str, "param": str|null, "code": str|null}}.
bool wellFormed(const ApiError& e, QString* why) {
    if (e.status < 400 || e.status > 499) {
        *why = QStringLiteral("status %1").arg(e.status);
        return false;
    }
    const QJsonDocument d = QJsonDocument::fromJson(e.body());
    const QJsonObject err = d.object().value(QStringLiteral("error")).toObject();
    if (!d.isObject() || err.isEmpty()) {
        *why = QStringLiteral("body not an error object: ") + QString::fromUtf8(e.body());
        return false;
    }
    if (!err.value(QStringLiteral("message")).isString() || err.value(QStringLiteral("message")).toString().isEmpty() ||
        !err.value(QStringLiteral("type")).isString() ||
        !(err.value(QStringLiteral("param")).isString() || err.value(QStringLiteral("param")).isNull()) ||
        !(err.value(QStringLiteral("code")).isString() || err.value(QStringLiteral("code")).isNull())) {
        *why = QStringLiteral("fields missing: ") + QString::fromUtf8(e.body());
        return false;
    }
    // A type error always says which field.
    if (e.code == QLatin1String("invalid_type") && e.param.isEmpty()) {
        *why = QStringLiteral("invalid_type without param: ") + e.message;
        return false;
    }
    return true;
}

QJsonValue randomJson(std::mt19937& rng, int depth = 0) {
    switch (rng() % (depth > 2 ? 6 : 8)) {
    case 0: return QJsonValue(QJsonValue::Null);
    case 1: return bool(rng() % 2);
    case 2: return double(int(rng() % 2001) - 1000);
    case 3: return double(rng()) / 7.0 * ((rng() % 2) ? 1e30 : 1e-3);
    case 4: {
        static const char* strings[] = {"", "user", "assistant", "tool", "system", "function", "auto", "none",
                                        "required", "text", "get_weather", "{\"a\":1}", "\xc3\xa9\xf0\x9f\x98\x80",
                                        "call_1", "gemma-3-270m-q4_k_m", "a\nb"};
        return QString::fromUtf8(strings[rng() % 16]);
    }
    case 5: return QString(int(rng() % 40), QChar(u'x'));
    case 6: {
        QJsonArray a;
        for (int i = int(rng() % 4); i > 0; --i) a.append(randomJson(rng, depth + 1));
        return a;
    }
    default: {
        static const char* keys[] = {"role", "content", "type", "text", "name", "function", "arguments", "tool_calls",
                                     "tool_call_id", "parameters", "include_usage", "x"};
        QJsonObject o;
        for (int i = int(rng() % 4); i > 0; --i) o.insert(QString::fromLatin1(keys[rng() % 12]), randomJson(rng, depth + 1));
        return o;
    }
    }
}

// Replaces one randomly chosen value somewhere inside v (or v itself).
QJsonValue mutateValue(const QJsonValue& v, std::mt19937& rng, int depth = 0) {
    const bool here = depth > 6 || rng() % 4 == 0 || !(v.isObject() || v.isArray());
    if (here) {
        switch (rng() % 4) {
        case 0: return randomJson(rng);
        case 1: return QJsonValue(QJsonValue::Undefined);  // removes it
        default: return randomJson(rng, 2);
        }
    }
    if (v.isObject()) {
        QJsonObject o = v.toObject();
        if (o.isEmpty()) return randomJson(rng);
        auto it = o.begin() + qsizetype(rng() % uint32_t(o.size()));
        const QJsonValue m = mutateValue(it.value(), rng, depth + 1);
        if (m.isUndefined()) o.erase(it);
        else *it = m;
        if (rng() % 8 == 0) {
            static const char* extra[] = {"max_tokens", "temperature", "stop", "n", "seed", "tools", "tool_choice",
                                          "stream_options", "logprobs", "response_format", "top_k", "prompt"};
            o.insert(QString::fromLatin1(extra[rng() % 12]), randomJson(rng));
        }
        return o;
    }
    QJsonArray a = v.toArray();
    if (a.isEmpty()) return randomJson(rng);
    const qsizetype i = qsizetype(rng() % uint32_t(a.size()));
    const QJsonValue m = mutateValue(a[i], rng, depth + 1);
    if (m.isUndefined()) a.removeAt(i);
    else a[i] = m;
    return a;
}

QByteArray mutateBytes(QByteArray b, std::mt19937& rng) {
    static const char* tokens[] = {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "1e999", "-", "\\u0000",
                                   "\\", "\xff", "\xc3", "0", "\"\"", "[[[[[[[[", "}}}}"};
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !b.isEmpty(); ++e) {
        const qsizetype at = qsizetype(rng() % uint32_t(b.size()));
        switch (rng() % 5) {
        case 0: b[at] = char(rng() % 256); break;
        case 1: b.remove(at, qsizetype(1 + rng() % 8)); break;
        case 2: b.insert(at, tokens[rng() % 19]); break;
        case 3: b.truncate(at); break;
        default: b.insert(at, b.mid(at, qsizetype(rng() % 16))); break;
        }
    }
    return b;
}

}  // namespace

class RequestParserTest : public QObject {
    Q_OBJECT

    std::unique_ptr<weir::ChatTemplate> gemma_, qwen_;

private slots:
    void initTestCase() {
        const std::string dir = qEnvironmentVariable("WEIR_TEST_DATA").toStdString() + "/templates/";
        gemma_ = weir::ChatTemplate::create(readFile(dir + "gemma3.jinja"), "<bos>", "<eos>");
        qwen_ = weir::ChatTemplate::create(readFile(dir + "qwen2.5.jinja"), "", "<|im_end|>");
    }

    void readsAFullChatRequest() {
        ChatRequest r;
        ApiError e;
        QVERIFY2(parseChatRequest(kChat, r, e), qPrintable(e.message));
        QCOMPARE(r.model, QStringLiteral("gemma-3-270m-q4_k_m"));
        QCOMPARE(r.messages.asList().size(), size_t(5));
        const auto& m = r.messages.asList();
        QCOMPARE(QByteArray::fromStdString(m[2].get("role")->asString()), QByteArray("assistant"));
        QCOMPARE(QByteArray::fromStdString(m[2].get("content")->asString()), QByteArray(""));
        const auto& call = m[2].get("tool_calls")->asList()[0];
        QCOMPARE(QByteArray::fromStdString(call.get("function")->get("arguments")->asString()), QByteArray("{\"city\": \"Paris\"}"));
        QCOMPARE(QByteArray::fromStdString(m[3].get("tool_call_id")->asString()), QByteArray("call_1"));
        QCOMPARE(QByteArray::fromStdString(m[4].get("content")->asString()), QByteArray("And tomorrow?"));
        QVERIFY(r.tools.isList());
        QCOMPARE(r.toolChoice.mode, weir::ToolChoice::Mode::Auto);
        QCOMPARE(*r.gen.maxTokens, int64_t(32));
        QCOMPARE(r.gen.sampling.temperature, 0.7f);
        QCOMPARE(r.gen.sampling.topP, 0.9f);
        QCOMPARE(r.gen.sampling.seed, uint64_t(42));
        QVERIFY(r.gen.seedGiven);
        QCOMPARE(r.gen.stop, (std::vector<std::string>{"\n\n", "END"}));
        QVERIFY(r.gen.stream);
        QVERIFY(r.gen.includeUsage);
        QVERIFY(!r.gen.ignoreEos);  // off unless asked

        ChatPrompt p;
        QVERIFY2(buildChatPrompt(r, *gemma_, weir::ToolFormat::detect(*gemma_), p, e), qPrintable(e.message));
        QVERIFY(p.toolsActive);
        QVERIFY(std::find(p.stop.begin(), p.stop.end(), "<end_of_turn>") != p.stop.end());
        QVERIFY(std::find(p.stop.begin(), p.stop.end(), "END") != p.stop.end());
        QVERIFY(p.prompt.text.find("```tool_output\n18 C\n```") != std::string::npos);
        // The client's text is marked untrusted (no control tokens parsed in
        // it), the template's and Weir's markers are not.
        const size_t result = p.prompt.text.find("18 C");
        QVERIFY(p.prompt.untrusted.overlaps(result, result + 4));
        const size_t fence = p.prompt.text.find("```tool_output");
        QVERIFY(!p.prompt.untrusted.overlaps(fence, fence + 14));
        const size_t turn = p.prompt.text.find("<start_of_turn>");
        QVERIFY(turn != std::string::npos && !p.prompt.untrusted.overlaps(turn, turn + 15));
        const size_t later = p.prompt.text.find("And tomorrow?");
        QVERIFY(p.prompt.untrusted.overlaps(later, later + 13));
    }

    void ignoreEosIsABoolean() {
        ChatRequest r;
        ApiError e;
        QVERIFY(parseChatRequest(R"({"model":"m","messages":[{"role":"user","content":"x"}],"ignore_eos":true})", r, e));
        QVERIFY(r.gen.ignoreEos);
        QVERIFY(!parseChatRequest(R"({"model":"m","messages":[{"role":"user","content":"x"}],"ignore_eos":"yes"})", r, e));
        QCOMPARE(e.status, 400);
        QCOMPARE(e.param, QStringLiteral("ignore_eos"));
    }

    void readsCompletions() {
        CompletionRequest r;
        ApiError e;
        QVERIFY2(parseCompletionRequest(kCompletion, r, e), qPrintable(e.message));
        QCOMPARE(QByteArray::fromStdString(r.prompt), QByteArray("Once upon a time"));
        QCOMPARE(r.gen.stop, std::vector<std::string>{"\n"});
        QCOMPARE(r.gen.sampling.temperature, 0.0f);
        QVERIFY(parseCompletionRequest(R"({"model": "m", "prompt": [1, 2, 3]})", r = {}, e));
        QVERIFY(r.promptIsTokens);
        QCOMPARE(r.promptTokens, (std::vector<int32_t>{1, 2, 3}));
        QCOMPARE(*r.gen.maxTokens, int64_t(16));  // OpenAI's default
        QVERIFY(parseCompletionRequest(R"({"model": "m", "prompt": ["one"], "max_completion_tokens": 5})", r = {}, e));
        QCOMPARE(*r.gen.maxTokens, int64_t(5));
    }

    void maxCompletionTokensWins() {
        ChatRequest r;
        ApiError e;
        QVERIFY(parseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 9,
                                     "max_completion_tokens": 3})", r, e));
        QCOMPARE(*r.gen.maxTokens, int64_t(3));
        QVERIFY(parseChatRequest(R"({"model": "m", "messages": [{"role": "developer", "content": "x"}], "stop": "X"})", r = {}, e));
        QCOMPARE(QByteArray::fromStdString(r.messages.asList()[0].get("role")->asString()), QByteArray("system"));
        QCOMPARE(r.gen.stop, std::vector<std::string>{"X"});
        QVERIFY(!r.gen.seedGiven);
    }

    void errorsNameTheField_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("code");
        const QByteArray base = R"("model": "m", "messages": [{"role": "user", "content": "hi"}])";
        auto with = [&](const char* extra) { return "{" + base + ", " + QByteArray(extra) + "}"; };
        QTest::newRow("not json") << QByteArray("{\"model\": ") << QString() << QString();
        QTest::newRow("not an object") << QByteArray("[1, 2]") << QString() << QString();
        QTest::newRow("no model") << QByteArray(R"({"messages": []})") << "model" << "missing_required_parameter";
        QTest::newRow("model number") << QByteArray(R"({"model": 5, "messages": []})") << "model" << "invalid_type";
        QTest::newRow("no messages") << QByteArray(R"({"model": "m"})") << "messages" << "missing_required_parameter";
        QTest::newRow("messages object") << QByteArray(R"({"model": "m", "messages": {}})") << "messages" << "invalid_type";
        QTest::newRow("messages empty") << QByteArray(R"({"model": "m", "messages": []})") << "messages" << "invalid_value";
        QTest::newRow("message not object") << QByteArray(R"({"model": "m", "messages": ["hi"]})") << "messages[0]" << "invalid_type";
        QTest::newRow("bad role") << QByteArray(R"({"model": "m", "messages": [{"role": "wizard", "content": "x"}]})") << "messages[0].role" << "invalid_value";
        QTest::newRow("role number") << QByteArray(R"({"model": "m", "messages": [{"role": 1, "content": "x"}]})") << "messages[0].role" << "invalid_type";
        QTest::newRow("content number") << QByteArray(R"({"model": "m", "messages": [{"role": "user", "content": 3}]})") << "messages[0].content" << "invalid_type";
        QTest::newRow("user content missing") << QByteArray(R"({"model": "m", "messages": [{"role": "user"}]})") << "messages[0].content" << "missing_required_parameter";
        QTest::newRow("image part") << QByteArray(R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})") << "messages[0].content[0].type" << "invalid_value";
        QTest::newRow("tool without id") << QByteArray(R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})") << "messages[0].tool_call_id" << "missing_required_parameter";
        QTest::newRow("tool_calls not list") << QByteArray(R"({"model": "m", "messages": [{"role": "assistant", "tool_calls": 1}]})") << "messages[0].tool_calls" << "invalid_type";
        QTest::newRow("call without name") << QByteArray(R"({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]})") << "messages[0].tool_calls[0].function.name" << "missing_required_parameter";
        QTest::newRow("temperature string") << with(R"("temperature": "hot")") << "temperature" << "invalid_type";
        QTest::newRow("temperature high") << with(R"("temperature": 3)") << "temperature" << "invalid_value";
        QTest::newRow("top_p negative") << with(R"("top_p": -0.5)") << "top_p" << "invalid_value";
        QTest::newRow("max_tokens float") << with(R"("max_tokens": 2.5)") << "max_tokens" << "invalid_type";
        QTest::newRow("max_tokens zero") << with(R"("max_tokens": 0)") << "max_tokens" << "invalid_value";
        QTest::newRow("max_completion_tokens string") << with(R"("max_completion_tokens": "9")") << "max_completion_tokens" << "invalid_type";
        QTest::newRow("seed string") << with(R"("seed": "42")") << "seed" << "invalid_type";
        QTest::newRow("n two") << with(R"("n": 2)") << "n" << "invalid_value";
        QTest::newRow("stop number") << with(R"("stop": 5)") << "stop" << "invalid_type";
        QTest::newRow("stop list item") << with(R"("stop": ["a", 1])") << "stop[1]" << "invalid_type";
        QTest::newRow("too many stops") << with(R"("stop": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"])") << "stop" << "invalid_value";
        QTest::newRow("stream string") << with(R"("stream": "yes")") << "stream" << "invalid_type";
        QTest::newRow("stream_options") << with(R"("stream_options": {"include_usage": 1})") << "stream_options.include_usage" << "invalid_type";
        QTest::newRow("tools object") << with(R"("tools": {})") << "tools" << "invalid_type";
        QTest::newRow("tool type") << with(R"("tools": [{"type": "retrieval"}])") << "tools[0].type" << "invalid_value";
        QTest::newRow("tool name") << with(R"("tools": [{"type": "function", "function": {"name": "has space"}}])") << "tools[0].function.name" << "invalid_value";
        QTest::newRow("tool params") << with(R"("tools": [{"type": "function", "function": {"name": "f", "parameters": []}}])") << "tools[0].function.parameters" << "invalid_type";
        QTest::newRow("tool twice") << with(R"("tools": [{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f"}}])") << "tools[1].function.name" << "invalid_value";
        QTest::newRow("tool_choice word") << with(R"("tool_choice": "always")") << "tool_choice" << "invalid_value";
        QTest::newRow("tool_choice unknown function") << with(R"("tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}})") << "tool_choice.function.name" << "invalid_value";
        QTest::newRow("tool_choice without tools") << with(R"("tool_choice": "required")") << "tool_choice" << "invalid_value";
        QTest::newRow("logprobs") << with(R"("logprobs": true)") << "logprobs" << "invalid_value";
        QTest::newRow("response_format") << with(R"("response_format": {"type": "json_object"})") << "response_format.type" << "invalid_value";
    }
    void errorsNameTheField() {
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        QFETCH(QString, code);
        ChatRequest r;
        ApiError e;
        QVERIFY(!parseChatRequest(body, r, e));
        QCOMPARE(e.status, 400);
        QCOMPARE(e.param, param);
        QCOMPARE(e.code, code);
        QString why;
        QVERIFY2(wellFormed(e, &why), qPrintable(why));
        if (!param.isEmpty()) QVERIFY2(e.message.contains(param), qPrintable(e.message));
    }

    void completionErrors() {
        CompletionRequest r;
        ApiError e;
        QVERIFY(!parseCompletionRequest(R"({"model": "m"})", r, e));
        QCOMPARE(e.param, QStringLiteral("prompt"));
        QVERIFY(!parseCompletionRequest(R"({"model": "m", "prompt": {"a": 1}})", r = {}, e));
        QCOMPARE(e.code, QStringLiteral("invalid_type"));
        QVERIFY(!parseCompletionRequest(R"({"model": "m", "prompt": [1, -2]})", r = {}, e));
        QCOMPARE(e.param, QStringLiteral("prompt[1]"));
        QVERIFY(!parseCompletionRequest(R"({"model": "m", "prompt": ["a", "b"]})", r = {}, e));
        QCOMPARE(e.param, QStringLiteral("prompt"));
        QVERIFY(!parseCompletionRequest(R"({"model": "m", "prompt": "x", "suffix": "y"})", r = {}, e));
        QCOMPARE(e.param, QStringLiteral("suffix"));
    }

    void conversationTheTemplateRejects() {
        ChatRequest r;
        ApiError e;
        QVERIFY(parseChatRequest(R"({"model": "m", "messages": [{"role": "assistant", "content": "first"}]})", r, e));
        ChatPrompt p;
        QVERIFY(!buildChatPrompt(r, *gemma_, weir::ToolFormat::detect(*gemma_), p, e));
        QCOMPARE(e.status, 400);
        QCOMPARE(e.param, QStringLiteral("messages"));
    }

    // >= 10,000 mutated bodies: byte edits of valid requests and JSON-level
    // replacements of any value by any other. Each is a 4xx in OpenAI's shape
    // or a request that renders through a real template (or a clean 400 from it).
    void fuzz() {
        std::mt19937 rng(20240521);
        const QByteArray seeds[] = {
            kChat, kCompletion,
            R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}], "tool_choice": {"type": "function", "function": {"name": "f"}}})",
            R"({"model": "m", "prompt": [[1, 2, 3]], "max_tokens": 4, "stream": true})"};
        const QJsonObject seedObjects[] = {QJsonDocument::fromJson(seeds[0]).object(), QJsonDocument::fromJson(seeds[1]).object(),
                                           QJsonDocument::fromJson(seeds[2]).object(), QJsonDocument::fromJson(seeds[3]).object()};
        const weir::ToolFormat gemmaTools = weir::ToolFormat::detect(*gemma_);
        const weir::ToolFormat qwenTools = weir::ToolFormat::detect(*qwen_);
        int accepted = 0, rejected = 0, rendered = 0, templateRejected = 0;
        const int rounds = 12000;
        for (int i = 0; i < rounds; ++i) {
            const int s = int(rng() % 4);
            QByteArray body;
            if (rng() % 2) {
                body = mutateBytes(seeds[s], rng);
            } else {
                QJsonValue v = seedObjects[s];
                for (int k = 1 + int(rng() % 3); k > 0; --k) v = mutateValue(v, rng);
                body = v.isObject() ? QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact)
                                    : QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact);
            }
            ApiError e;
            QString why;
            ChatRequest chat;
            if (parseChatRequest(body, chat, e)) {
                ++accepted;
                ChatPrompt p;
                const weir::ChatTemplate& t = (i % 2) ? *gemma_ : *qwen_;
                if (buildChatPrompt(chat, t, (i % 2) ? gemmaTools : qwenTools, p, e)) {
                    ++rendered;
                    QVERIFY(!p.prompt.text.empty());
                } else {
                    ++templateRejected;
                    QVERIFY2(wellFormed(e, &why), qPrintable(why + " <- " + QString::fromUtf8(body)));
                }
            } else {
                ++rejected;
                QVERIFY2(wellFormed(e, &why), qPrintable(why + " <- " + QString::fromUtf8(body)));
            }
            CompletionRequest completion;
            e = ApiError{};
            if (!parseCompletionRequest(body, completion, e))
                QVERIFY2(wellFormed(e, &why), qPrintable(why + " <- " + QString::fromUtf8(body)));
        }
        qInfo("%d bodies: %d chat requests accepted (%d rendered, %d rejected by the template), %d rejected", rounds,
              accepted, rendered, templateRejected, rejected);
        QVERIFY(rejected > rounds / 4);
        QVERIFY(rendered > 100);
    }
};

QTEST_GUILESS_MAIN(RequestParserTest)
#include "request_parser_test.moc"
