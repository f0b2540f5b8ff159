// The Anthropic Messages and OpenAI Responses requests read into chat
// completions' shape (anthropic_request.h, responses_request.h), their
// answers and streams in each API's own shape (anthropic_answer.h,
// responses_answer.h), their preparation on an Engine (count_tokens equals
// the prompt the request would run), and completions' suffix (fill in the
// middle) refused or laid out by the model's vocabulary. Engines on tiny
// synthetic Gemma 3 models, through the public API only.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "app/server/anthropic_answer.h"
#include "app/server/anthropic_request.h"
#include "app/server/fill_in_middle.h"
#include "app/server/request_parser.h"
#include "app/server/request_preparation.h"
#include "app/server/responses_answer.h"
#include "app/server/responses_request.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "weir/engine.h"

using namespace weir::server;

namespace {

QJsonObject obj(const char* json) { return QJsonDocument::fromJson(QByteArray(json)).object(); }

// The events of a server-sent stream: (name, data object) in order.
std::vector<std::pair<QString, QJsonObject>> events(const QByteArray& stream) {
    std::vector<std::pair<QString, QJsonObject>> out;
    for (const QByteArray& block : stream.split('\n')) {
        if (block.startsWith("event: ")) out.emplace_back(QString::fromUtf8(block.mid(7)), QJsonObject());
        else if (block.startsWith("data: ") && !out.empty())
            out.back().second = QJsonDocument::fromJson(block.mid(6)).object();
    }
    return out;
}

QStringList names(const std::vector<std::pair<QString, QJsonObject>>& evs) {
    QStringList n;
    for (const auto& e : evs) n << e.first;
    return n;
}

const char* kAnthropicToolRound = R"({
  "model": "claude-ish", "max_tokens": 64,
  "system": [{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Use tools."}],
  "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18 C"}]},
      {"type": "text", "text": "And tomorrow?"}]}
  ],
  "tools": [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object",
    "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
  "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
  "stop_sequences": ["END"], "temperature": 0.5, "top_p": 0.9, "top_k": 20, "stream": true
})";

} // namespace

// The bodies are hidden from moc (Q_MOC_RUN): its lexer loses its way in some of
// the JSON literals (raw strings with escaped quotes) and then finds no class.
class ApiDialectsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<weir::Engine> gemma_, fim_;

    std::unique_ptr<weir::Engine> tinyEngine(const std::string& file, std::vector<std::string> extra) {
#ifndef Q_MOC_RUN
        weir::test::TinyGemma3Spec spec;
        spec.extraControlTokens = std::move(extra);
        const std::string path = dir_.filePath(QString::fromStdString(file)).toStdString();
        weir::test::writeTinyGemma3(path, spec);
        weir::EngineOptions o;
        o.modelPath = path;
        o.threads = 1;
        o.maxContext = 2048;
        return std::make_unique<weir::Engine>(o);
#endif
    }

    PreparationContext context(const weir::Engine& e) {
#ifndef Q_MOC_RUN
        PreparationContext c;
        c.engine = &e;
        c.model = ServedModel{QStringLiteral("tiny")};
        c.contextLimit = 2048;
        return c;
#endif
    }

private slots:
    void initTestCase() {
#ifndef Q_MOC_RUN
        QVERIFY(dir_.isValid());
        gemma_ = tinyEngine("tiny.gguf", {});
        fim_ = tinyEngine("tiny-fim.gguf", {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"});
#endif
    }

    void anthropicRequestBecomesAChatRequest() {
#ifndef Q_MOC_RUN
        QJsonObject chat;
        ApiError e;
        QVERIFY(anthropicToChatBody(kAnthropicToolRound, chat, e));
        ChatRequest r;
        QVERIFY2(parseChatObject(chat, r, e), qPrintable(e.message));
        QCOMPARE(r.model, QStringLiteral("claude-ish"));
        // system, user, assistant (text + call), tool result, user text.
        QCOMPARE(r.messages.size(), 5);
        QCOMPARE(r.messages[0].toObject().value("role").toString(), QStringLiteral("system"));
        QCOMPARE(r.messages[0].toObject().value("content").toString(), QStringLiteral("You are terse.\nUse tools."));
        const QJsonObject assistant = r.messages[2].toObject();
        QCOMPARE(assistant.value("content").toString(), QStringLiteral("Checking."));
        const QJsonObject call = assistant.value("tool_calls").toArray()[0].toObject();
        QCOMPARE(call.value("id").toString(), QStringLiteral("toolu_1"));
        QCOMPARE(call.value("function").toObject().value("name").toString(), QStringLiteral("get_weather"));
        QCOMPARE(QJsonDocument::fromJson(call.value("function").toObject().value("arguments").toString().toUtf8()).object(),
                 obj(R"({"city": "Paris"})"));
        const QJsonObject tool = r.messages[3].toObject();
        QCOMPARE(tool.value("role").toString(), QStringLiteral("tool"));
        QCOMPARE(tool.value("tool_call_id").toString(), QStringLiteral("toolu_1"));
        QCOMPARE(tool.value("content").toString(), QStringLiteral("18 C"));
        QCOMPARE(r.messages[4].toObject().value("content").toString(), QStringLiteral("And tomorrow?"));
        QCOMPARE(r.tools.size(), 1);
        QCOMPARE(r.tools[0].toObject().value("function").toObject().value("parameters").toObject().value("required"),
                 QJsonValue(QJsonArray{"city"}));
        QCOMPARE(int(r.toolChoice.mode), int(weir::ToolChoice::Mode::Function));
        QCOMPARE(r.toolChoice.function, std::string("get_weather"));
        QVERIFY(!r.parallelToolCalls);
        QCOMPARE(r.gen.stop, std::vector<std::string>{"END"});
        QCOMPARE(*r.gen.maxTokens, int64_t(64));
        QCOMPARE(r.gen.sampling.topK, 20);
        QVERIFY(r.gen.stream);
#endif
    }

    void anthropicDefaultsAndChoices() {
#ifndef Q_MOC_RUN
        QJsonObject chat;
        ApiError e;
        ChatRequest r;
        // max_tokens is required by the Messages API, not by count_tokens.
        const char* noMax = R"({"messages": [{"role": "user", "content": "hi"}], "system": "Be kind."})";
        QVERIFY(!anthropicToChatBody(noMax, chat, e));
        QCOMPARE(e.param, QStringLiteral("max_tokens"));
        QCOMPARE(e.message, QStringLiteral("max_tokens: Field required"));
        QVERIFY(anthropicToChatBody(noMax, chat, e, true));
        QVERIFY(parseChatObject(chat, r, e));
        QVERIFY(!r.gen.maxTokens);
        QCOMPARE(r.messages[0].toObject().value("content").toString(), QStringLiteral("Be kind."));
        const char* any = R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9, "tool_choice": {"type": "any"},
            "tools": [{"name": "f", "input_schema": {"type": "object"}}]})";
        QVERIFY(anthropicToChatBody(any, chat, e));
        QVERIFY(parseChatObject(chat, r = {}, e));
        QCOMPARE(int(r.toolChoice.mode), int(weir::ToolChoice::Mode::Required));
        QVERIFY(r.parallelToolCalls);
        const char* none = R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9, "tool_choice": {"type": "none"},
            "tools": [{"name": "f", "input_schema": {"type": "object"}}]})";
        QVERIFY(anthropicToChatBody(none, chat, e));
        QVERIFY(parseChatObject(chat, r = {}, e));
        QCOMPARE(int(r.toolChoice.mode), int(weir::ToolChoice::Mode::None));
#endif
    }

    void anthropicRefusalsNameTheField_data() {
#ifndef Q_MOC_RUN
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::newRow("no messages") << QByteArray(R"({"max_tokens": 5})") << "messages";
        QTest::newRow("no max_tokens") << QByteArray(R"({"messages": [{"role": "user", "content": "x"}]})")
                                       << "max_tokens";
        QTest::newRow("image block") << QByteArray(R"({"messages": [{"role": "user", "content": [{"type": "image",
            "source": {}}]}]})") << "messages[0].content[0].type";
        QTest::newRow("bad role") << QByteArray(R"({"messages": [{"role": "system", "content": "x"}]})")
                                  << "messages[0].role";
        QTest::newRow("server tool") << QByteArray(R"({"messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "web_search_20250305", "name": "web_search"}]})") << "tools[0].type";
        QTest::newRow("no schema") << QByteArray(R"({"messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "f"}]})") << "tools[0].input_schema";
        QTest::newRow("bad choice") << QByteArray(R"({"messages": [{"role": "user", "content": "x"}],
            "tool_choice": {"type": "sometimes"}})") << "tool_choice.type";
        QTest::newRow("tool_use from user") << QByteArray(R"({"messages": [{"role": "user", "content": [
            {"type": "tool_use", "id": "a", "name": "f", "input": {}}]}]})") << "messages[0].content[0].type";
#endif
    }
    void anthropicRefusalsNameTheField() {
#ifndef Q_MOC_RUN
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        QJsonObject chat;
        ApiError e;
        QVERIFY(!anthropicToChatBody(body, chat, e));
        QCOMPARE(e.status, 400);
        QCOMPARE(e.param, param);
        QVERIFY2(e.message.contains(param), qPrintable(e.message));
        const QJsonObject shaped = anthropicErrorJson(e);
        QCOMPARE(shaped.value("type").toString(), QStringLiteral("error"));
        QCOMPARE(shaped.value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
        QCOMPARE(shaped.value("error").toObject().value("message").toString(), e.message);
#endif
    }

    void anthropicStreamIsAnthropicsEventSequence() {
#ifndef Q_MOC_RUN
        AnthropicAnswer a(QStringLiteral("msg_1"), QStringLiteral("tiny"), 12);
        QByteArray stream = a.begin();
        stream += a.text("Hel");
        stream += a.text("lo");
        stream += a.call(weir::ToolCall{"call_abc", "get_weather", "{\"city\":\"Paris\"}"});
        AnswerEnding end;
        end.toolCalls = true;
        end.usage.promptTokens = 12;
        end.usage.completionTokens = 7;
        stream += a.end(end);
        const auto evs = events(stream);
        QCOMPARE(names(evs), (QStringList{"message_start", "ping", "content_block_start", "content_block_delta",
                                          "content_block_delta", "content_block_stop", "content_block_start",
                                          "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
        for (const auto& [name, data] : evs) QCOMPARE(data.value("type").toString(), name);
        QCOMPARE(evs[0].second.value("message").toObject().value("usage").toObject().value("input_tokens").toInt(), 12);
        QCOMPARE(evs[3].second.value("delta").toObject().value("type").toString(), QStringLiteral("text_delta"));
        QCOMPARE(evs[6].second.value("index").toInt(), 1);
        QCOMPARE(evs[6].second.value("content_block").toObject().value("id").toString(), QStringLiteral("toolu_abc"));
        QCOMPARE(evs[7].second.value("delta").toObject().value("type").toString(), QStringLiteral("input_json_delta"));
        QCOMPARE(QJsonDocument::fromJson(evs[7].second.value("delta").toObject().value("partial_json").toString().toUtf8())
                     .object(),
                 obj(R"({"city": "Paris"})"));
        QCOMPARE(evs[9].second.value("delta").toObject().value("stop_reason").toString(), QStringLiteral("tool_use"));
        QCOMPARE(evs[9].second.value("usage").toObject().value("output_tokens").toInt(), 7);
        const QJsonObject whole = a.whole(end);
        QCOMPARE(whole.value("content").toArray().size(), 2);
        QCOMPARE(whole.value("content").toArray()[0].toObject().value("text").toString(), QStringLiteral("Hello"));
        QCOMPARE(whole.value("content").toArray()[1].toObject().value("input").toObject(), obj(R"({"city": "Paris"})"));
#endif
    }

    void anthropicStopReasons() {
#ifndef Q_MOC_RUN
        AnthropicAnswer a(QStringLiteral("msg_1"), QStringLiteral("tiny"), 3);
        a.text("x");
        AnswerEnding e;
        QCOMPARE(a.whole(e).value("stop_reason").toString(), QStringLiteral("end_turn"));
        QVERIFY(a.whole(e).value("stop_sequence").isNull());
        e.reason = weir::FinishReason::Length;
        QCOMPARE(a.whole(e).value("stop_reason").toString(), QStringLiteral("max_tokens"));
        e.reason = weir::FinishReason::StopString;
        QCOMPARE(a.whole(e).value("stop_reason").toString(), QStringLiteral("end_turn"));  // the template's marker
        e.stopSequence = "END";
        QCOMPARE(a.whole(e).value("stop_reason").toString(), QStringLiteral("stop_sequence"));
        QCOMPARE(a.whole(e).value("stop_sequence").toString(), QStringLiteral("END"));
#endif
    }

    void responsesRequestBecomesAChatRequest() {
#ifndef Q_MOC_RUN
        const char* body = R"({"model": "tiny", "instructions": "Be brief.", "max_output_tokens": 20, "store": true,
          "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "cold"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is cold."}]},
            {"role": "user", "content": "Thanks"}],
          "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}],
          "tool_choice": {"type": "function", "name": "get_weather"},
          "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": true}}})";
        QJsonObject chat, echo;
        ApiError e;
        QVERIFY2(responsesToChatBody(body, chat, echo, e), qPrintable(e.message));
        ChatRequest r;
        QVERIFY2(parseChatObject(chat, r, e), qPrintable(e.message));
        QCOMPARE(r.messages.size(), 6);
        QCOMPARE(r.messages[0].toObject().value("role").toString(), QStringLiteral("system"));
        QCOMPARE(r.messages[2].toObject().value("tool_calls").toArray()[0].toObject().value("id").toString(),
                 QStringLiteral("call_1"));
        QCOMPARE(r.messages[3].toObject().value("role").toString(), QStringLiteral("tool"));
        QCOMPARE(r.messages[4].toObject().value("content").toString(), QStringLiteral("It is cold."));
        QCOMPARE(int(r.toolChoice.mode), int(weir::ToolChoice::Mode::Function));
        QCOMPARE(int(r.responseFormat.kind), int(weir::OutputConstraint::Kind::JsonSchema));
        QCOMPARE(*r.gen.maxTokens, int64_t(20));
        QCOMPARE(echo.value("instructions").toString(), QStringLiteral("Be brief."));
        QVERIFY(!responsesToChatBody(R"({"input": "x", "previous_response_id": "resp_1"})", chat, echo, e));
        QCOMPARE(e.param, QStringLiteral("previous_response_id"));
        QVERIFY(!responsesToChatBody(R"({"input": [{"type": "reasoning"}]})", chat, echo, e));
        QCOMPARE(e.param, QStringLiteral("input[0].type"));
        QVERIFY(!responsesToChatBody(R"({"input": "x", "tools": [{"type": "web_search"}]})", chat, echo, e));
        QCOMPARE(e.param, QStringLiteral("tools[0].type"));
        QVERIFY(!responsesToChatBody(R"({"model": "tiny"})", chat, echo, e));
        QCOMPARE(e.param, QStringLiteral("input"));
#endif
    }

    void responsesStreamNumbersEveryEvent() {
#ifndef Q_MOC_RUN
        ResponsesAnswer a(QStringLiteral("resp_1"), QStringLiteral("tiny"), 100, QJsonObject());
        QByteArray stream = a.begin();
        stream += a.text("Hi");
        stream += a.text(" there");
        stream += a.call(weir::ToolCall{"call_9", "f", "{\"a\":1}"});
        AnswerEnding end;
        end.toolCalls = true;
        end.usage.promptTokens = 5;
        end.usage.completionTokens = 4;
        stream += a.end(end);
        const auto evs = events(stream);
        QCOMPARE(names(evs),
                 (QStringList{"response.created", "response.in_progress", "response.output_item.added",
                              "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
                              "response.output_text.done", "response.content_part.done", "response.output_item.done",
                              "response.output_item.added", "response.function_call_arguments.delta",
                              "response.function_call_arguments.done", "response.output_item.done",
                              "response.completed"}));
        for (size_t i = 0; i < evs.size(); ++i) {
            QCOMPARE(evs[i].second.value("sequence_number").toInt(-1), int(i));
            QCOMPARE(evs[i].second.value("type").toString(), evs[i].first);
        }
        QCOMPARE(evs[6].second.value("text").toString(), QStringLiteral("Hi there"));
        const QJsonObject done = evs.back().second.value("response").toObject();
        QCOMPARE(done.value("status").toString(), QStringLiteral("completed"));
        QCOMPARE(done.value("object").toString(), QStringLiteral("response"));
        const QJsonArray output = done.value("output").toArray();
        QCOMPARE(output.size(), 2);
        QCOMPARE(output[0].toObject().value("content").toArray()[0].toObject().value("text").toString(),
                 QStringLiteral("Hi there"));
        QCOMPARE(output[1].toObject().value("call_id").toString(), QStringLiteral("call_9"));
        QCOMPARE(output[1].toObject().value("arguments").toString(), QStringLiteral(R"({"a":1})"));
        QCOMPARE(done.value("usage").toObject().value("total_tokens").toInt(), 9);
        // Cut by max_output_tokens: incomplete, said so.
        ResponsesAnswer b(QStringLiteral("resp_2"), QStringLiteral("tiny"), 100, QJsonObject());
        b.text("abc");
        AnswerEnding cut;
        cut.reason = weir::FinishReason::Length;
        const QJsonObject whole = b.whole(cut);
        QCOMPARE(whole.value("status").toString(), QStringLiteral("incomplete"));
        QCOMPARE(whole.value("incomplete_details").toObject().value("reason").toString(), QStringLiteral("max_output_tokens"));
        QCOMPARE(whole.value("output").toArray()[0].toObject().value("status").toString(), QStringLiteral("completed"));
        // Nothing said at all: still one message, with empty text.
        ResponsesAnswer empty(QStringLiteral("resp_3"), QStringLiteral("tiny"), 100, QJsonObject());
        const auto emptyEvents = events(empty.begin() + empty.end(AnswerEnding{}));
        QCOMPARE(emptyEvents.back().first, QStringLiteral("response.completed"));
        const QJsonArray emptyOutput = emptyEvents.back().second.value("response").toObject().value("output").toArray();
        QCOMPARE(emptyOutput.size(), 1);
        QCOMPARE(emptyOutput[0].toObject().value("content").toArray().size(), 1);
        QCOMPARE(emptyOutput[0].toObject().value("content").toArray()[0].toObject().value("text").toString(), QString());
        QCOMPARE(empty.whole(AnswerEnding{}).value("output").toArray().size(), 1);
#endif
    }

    void countTokensIsThePromptThatWouldRun() {
#ifndef Q_MOC_RUN
        const QByteArray body = R"({"system": "Be terse.", "max_tokens": 8,
            "messages": [{"role": "user", "content": "the operator shall record every change"}]})";
        const PreparationContext c = context(*gemma_);
        const PreparedRequest count = prepareAnthropicMessages(body, c, true);
        QVERIFY(!count.error);
        QVERIFY(count.countOnly);
        const PreparedRequest run = prepareAnthropicMessages(body, c, false);
        QVERIFY(!run.error);
        QCOMPARE(int(run.dialect), int(ApiDialect::Anthropic));
        QCOMPARE(run.choices.size(), size_t(1));
        QCOMPARE(count.promptTokens, int(run.choices[0].generate.prompt.size()));
        QVERIFY(count.promptTokens > 5);
        QCOMPARE(run.choices[0].generate.maxTokens, 8);
        // A request the model cannot hold: Anthropic's dialect, the context named.
        QByteArray huge = R"({"messages": [{"role": "user", "content": ")";
        for (int i = 0; i < 3000; ++i) huge += "the ";
        const PreparedRequest tooLong = prepareAnthropicMessages(huge + "\"}], \"max_tokens\": 8}", c, false);
        QVERIFY(tooLong.error);
        QCOMPARE(int(tooLong.dialect), int(ApiDialect::Anthropic));
        QCOMPARE(tooLong.error->code, QStringLiteral("context_length_exceeded"));
#endif
    }

    // A schema beside json_object (llama.cpp's extension) is compiled like
    // json_schema's: one the compiler refuses is a 400 naming the problem.
    // A Responses text.format schema keeps its property order.
    void schemasAreAppliedInTheirOwnOrder() {
#ifndef Q_MOC_RUN
        const PreparationContext c = context(*gemma_);
        const PreparedRequest bad = prepareChatCompletion(R"({"messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_object", "schema": {"type": "hiccup"}}})", c);
        QVERIFY(bad.error);
        QCOMPARE(bad.error->status, 400);
        QCOMPARE(bad.error->param, QStringLiteral("response_format"));
        QVERIFY2(bad.error->message.contains("unknown type 'hiccup'"), qPrintable(bad.error->message));
        const PreparedRequest good = prepareChatCompletion(R"({"messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_object", "schema": {"type": "object", "properties": {"b": {"type": "null"}}}}})", c);
        QVERIFY(!good.error);
        QCOMPARE(int(good.choices[0].generate.constraint.kind), int(weir::OutputConstraint::Kind::JsonSchema));
        const PreparedRequest responses = prepareResponses(R"({"input": "x", "text": {"format": {"type": "json_schema",
            "name": "o", "schema": {"type": "object", "properties": {"zeta": {"type": "null"}, "alpha": {"type": "null"}}}}}})", c);
        QVERIFY(!responses.error);
        const std::string& schema = responses.choices[0].generate.constraint.schema;
        QVERIFY2(schema.find("zeta") < schema.find("alpha"), schema.c_str());
#endif
    }

    void responsesPreparationKeepsTheClientsStops() {
#ifndef Q_MOC_RUN
        const PreparedRequest p = prepareResponses(R"({"input": "hello", "max_output_tokens": 4})", context(*gemma_));
        QVERIFY(!p.error);
        QCOMPARE(int(p.dialect), int(ApiDialect::Responses));
        QVERIFY(p.clientStops.empty());
        QCOMPARE(p.choices[0].generate.maxTokens, 4);
        const PreparedRequest a = prepareAnthropicMessages(
            R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 4, "stop_sequences": ["ZZ"]})",
            context(*gemma_), false);
        QCOMPARE(a.clientStops, std::vector<std::string>{"ZZ"});
        QCOMPARE(a.choices[0].generate.stop.front(), std::string("ZZ"));  // its index is the client's
#endif
    }

    void suffixNeedsFimTokens() {
#ifndef Q_MOC_RUN
        QVERIFY(!fillInMiddlePrompt(*gemma_, "a", "b"));
        const PreparedRequest refused =
            prepareCompletion(R"({"prompt": "def f(", "suffix": "return x", "max_tokens": 4})", context(*gemma_));
        QVERIFY(refused.error);
        QCOMPARE(refused.error->param, QStringLiteral("suffix"));
        QVERIFY(refused.error->message.contains(QStringLiteral("fill-in-the-middle")));
        const std::optional<std::string> fim = fillInMiddlePrompt(*fim_, "the ", " change");
        QVERIFY(fim);
        QCOMPARE(*fim, std::string("<|fim_prefix|>the <|fim_suffix|> change<|fim_middle|>"));
        const PreparedRequest p =
            prepareCompletion(R"({"prompt": "the ", "suffix": " change", "max_tokens": 4})", context(*fim_));
        QVERIFY(!p.error);
        const std::vector<int32_t>& ids = p.choices[0].generate.prompt;
        // BOS, then the FIM prefix marker as one control token; the middle marker last.
        QCOMPARE(ids.size() >= 4, true);
        QCOMPARE(ids[1], fim_->tokenizePrompt("<|fim_prefix|>").back());
        QCOMPARE(ids.back(), fim_->tokenizePrompt("<|fim_middle|>").back());
        CompletionRequest r;
        ApiError e;
        QVERIFY(!parseCompletionRequest(R"({"prompt": [1, 2], "suffix": "x"})", r, e));
        QCOMPARE(e.param, QStringLiteral("suffix"));
        QVERIFY(!parseCompletionRequest(R"({"prompt": "x", "suffix": 3})", r = {}, e));
        QCOMPARE(e.param, QStringLiteral("suffix"));
#endif
    }
};

QTEST_GUILESS_MAIN(ApiDialectsTest)
#include "api_dialects_test.moc"
