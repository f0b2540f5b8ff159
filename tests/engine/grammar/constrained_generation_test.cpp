// Structured output end to end, through the Engine and its scheduler, on both
// real models: every reply that ends with finish reason Stop parses and
// validates against its schema (22 schemas, greedy and temperature 0.8 with
// two seeds); a reply cut by maxTokens says Length and has exactly maxTokens
// tokens; a schema the compiler refuses ends the request with BadRequest
// naming the keyword.
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/engine/grammar/json_schema_validator.h"
#include "tests/engine/grammar/real_models.h"
#include "tests/support/json_reading.h"
#include "tests/support/weir_test.h"
#include "weir/engine.h"

using namespace weir;

namespace {

struct SchemaCase {
    const char* task;
    const char* schema;
};

// Small schemas of the kinds OpenAI's strict mode and tool parameters use.
const std::vector<SchemaCase>& schemaCases() {
    static const std::vector<SchemaCase> cases = {
        {"a person", R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false})"},
        {"the weather tool's arguments for Paris", R"({"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"],"additionalProperties":false})"},
        {"a yes or no answer", R"({"type":"boolean"})"},
        {"a colour", R"({"enum":["red","green","blue"]})"},
        {"a temperature", R"({"type":"number"})"},
        {"a count", R"({"type":"integer"})"},
        {"three fruits", R"({"type":"array","items":{"type":"string"},"minItems":3,"maxItems":3})"},
        {"a point", R"({"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false})"},
        {"a task with an optional due date", R"({"type":"object","properties":{"title":{"type":"string"},"due":{"type":["string","null"]}},"required":["title","due"],"additionalProperties":false})"},
        {"a calculator call", R"({"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]})"},
        {"a search call with an optional limit", R"({"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]})"},
        {"a rating", R"({"type":"object","properties":{"stars":{"enum":[1,2,3,4,5]},"ok":{"type":"boolean"}},"required":["stars","ok"],"additionalProperties":false})"},
        {"nothing", R"({"type":"null"})"},
        {"an id", R"({"anyOf":[{"type":"integer"},{"type":"string"}]})"},
        {"a line segment", R"({"type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"$ref":"#/$defs/p"}},"required":["a","b"],"additionalProperties":false,"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}}})"},
        {"a version", R"({"const":"v1"})"},
        {"up to two tags", R"({"type":"array","items":{"enum":["a","b","c"]},"maxItems":2})"},
        {"a file operation", R"({"type":"object","properties":{"op":{"type":"string","enum":["read","list"]},"path":{"type":"string"}},"required":["op","path"],"additionalProperties":false})"},
        {"word counts", R"({"type":"object","additionalProperties":{"type":"integer"}})"},
        {"a matrix", R"({"type":"array","items":{"type":"array","items":{"type":"integer"},"maxItems":2},"minItems":1,"maxItems":2})"},
        {"a tree", R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":1}},"required":["v","kids"],"additionalProperties":false}},"$ref":"#/$defs/n"})"},
        {"a status", R"({"type":"object","properties":{"ok":{"type":"boolean"},"error":{"anyOf":[{"type":"null"},{"type":"string"}]}},"required":["ok","error"],"additionalProperties":false})"},
    };
    return cases;
}

struct Outcome {
    std::string text;
    int terminals = 0;
    Event terminal;
};

// Submits every request at once and waits for each one's terminal event.
class Batch {
public:
    explicit Batch(Engine& e) : engine_(e) {}
    Outcome& submit(GenerateRequest r) {
        outcomes_.push_back(std::make_unique<Outcome>());
        Outcome* o = outcomes_.back().get();
        engine_.submit(std::move(r), [this, o](const Event& ev) {
            std::lock_guard<std::mutex> lock(m_);
            if (ev.kind == Event::Kind::Token) {
                o->text += ev.text;
                return;
            }
            ++o->terminals;
            o->terminal = ev;
            ++ended_;
            cv_.notify_all();
        });
        return *o;
    }
    void wait() {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return ended_ >= outcomes_.size(); });
    }

private:
    Engine& engine_;
    std::mutex m_;
    std::condition_variable cv_;
    size_t ended_ = 0;
    std::vector<std::unique_ptr<Outcome>> outcomes_;
};

std::unique_ptr<Engine> openEngine(const std::string& path) {
    EngineOptions o;
    o.modelPath = path;
    o.threads = 2;
    o.maxRunningRequests = 8;
    o.maxContext = 2048;
    o.maxWaiting = 256;
    return std::make_unique<Engine>(o);
}

GenerateRequest request(const Engine& e, const SchemaCase& c, float temperature, uint64_t seed, int32_t maxTokens) {
    GenerateRequest r;
    r.prompt = e.tokenizeChat({{"user", std::string("Reply with JSON only, for ") + c.task +
                                            ", that matches this JSON Schema: " + c.schema}});
    r.sampling.temperature = temperature;
    r.sampling.seed = seed;
    r.maxTokens = maxTokens;
    r.constraint.kind = OutputConstraint::Kind::JsonSchema;
    r.constraint.schema = c.schema;
    return r;
}

} // namespace

WEIR_TEST(ConstrainedGeneration, everyFinishedReplyValidatesOnBothModels) {
    constexpr int32_t kMaxTokens = 64;
    int ran = 0;
    for (const auto& model : weir::test::realModels()) {
        if (!std::filesystem::exists(model.path)) continue;
        ++ran;
        weirtest::Context ctx(model.name);
        auto engine = openEngine(model.path);
        struct Sent {
            const SchemaCase* c;
            std::string how;
            Outcome* o;
        };
        std::vector<Sent> sent;
        Batch batch(*engine);
        for (const SchemaCase& c : schemaCases()) {
            sent.push_back({&c, "greedy", &batch.submit(request(*engine, c, 0.0f, 0, kMaxTokens))});
            for (uint64_t seed : {1, 2})
                sent.push_back({&c, "t0.8 seed " + std::to_string(seed),
                                &batch.submit(request(*engine, c, 0.8f, seed, kMaxTokens))});
        }
        batch.wait();
        int stopped = 0, cut = 0;
        for (const Sent& s : sent) {
            const std::string label = std::string(s.c->task) + " (" + s.how + "): " + s.o->text;
            REQUIRE_EQ(s.o->terminals, 1);
            REQUIRE_MSG(s.o->terminal.kind == Event::Kind::Done, label + " ended with: " + s.o->terminal.text);
            if (s.o->terminal.finish == FinishReason::Length) {
                // Honestly cut: exactly the budget, and not a whole document.
                ++cut;
                std::printf("%s: cut at the budget: %s\n", model.name.c_str(), label.c_str());
                CHECK_EQ(s.o->terminal.usage.completionTokens, kMaxTokens);
                continue;
            }
            REQUIRE_MSG(s.o->terminal.finish == FinishReason::Stop, label);
            ++stopped;
            const weirtest::Json value = weirtest::parseJsonOrUndefined(s.o->text);
            REQUIRE_MSG(!value.isUndefined(), label + " does not parse: " + value.undefinedMessage());
            const weirtest::Json schema = weirtest::Json::parseJson(s.c->schema);
            const std::string why = weir::test::SchemaValidator(schema).validate(value);
            CHECK_MSG(why.empty(), label + " does not validate: " + why);
        }
        std::printf("%s: %d of %zu replies complete and valid, %d cut at %d tokens\n", model.name.c_str(), stopped,
                    sent.size(), cut, kMaxTokens);
        // Most replies must finish: a constraint that only ever ran out of
        // tokens would pass the checks above without proving anything.
        CHECK_MSG(stopped * 10 >= int(sent.size()) * 8,
                  std::to_string(stopped) + " of " + std::to_string(sent.size()) + " finished");
    }
    if (ran == 0) SKIP("no real model in models/");
}

WEIR_TEST(ConstrainedGeneration, runawayIsCutWithLength) {
    const auto models = weir::test::realModels();
    if (!std::filesystem::exists(models[0].path)) SKIP("no model");
    auto engine = openEngine(models[0].path);
    Batch batch(*engine);
    // A string the model is asked to make long, and a budget far too small for it.
    const SchemaCase c{"a very long essay", R"({"type":"object","properties":{"essay":{"type":"string"}},"required":["essay"]})"};
    Outcome& o = batch.submit(request(*engine, c, 0.8f, 3, 6));
    batch.wait();
    REQUIRE_EQ(o.terminals, 1);
    CHECK(o.terminal.kind == Event::Kind::Done);
    CHECK(o.terminal.finish == FinishReason::Length);
    CHECK_EQ(o.terminal.usage.completionTokens, 6);
    CHECK(o.text.rfind("{", 0) == 0);
}

WEIR_TEST(ConstrainedGeneration, jsonObjectAndRefusals) {
    const auto models = weir::test::realModels();
    if (!std::filesystem::exists(models[0].path)) SKIP("no model");
    auto engine = openEngine(models[0].path);
    Batch batch(*engine);
    GenerateRequest any;
    any.prompt = engine->tokenizeChat({{"user", "Describe a cat as a JSON object."}});
    any.sampling.temperature = 0.0f;
    any.maxTokens = 96;
    any.constraint.kind = OutputConstraint::Kind::JsonObject;
    Outcome& object = batch.submit(any);

    GenerateRequest bad = any;
    bad.constraint.kind = OutputConstraint::Kind::JsonSchema;
    bad.constraint.schema = R"({"type":"string","pattern":"^a+$"})";
    Outcome& refused = batch.submit(bad);
    GenerateRequest notJson = bad;
    notJson.constraint.schema = "{type: string}";
    Outcome& unparsable = batch.submit(notJson);
    batch.wait();

    REQUIRE_EQ(object.terminals, 1);
    REQUIRE(object.terminal.kind == Event::Kind::Done);
    if (object.terminal.finish == FinishReason::Stop) {
        const weirtest::Json v = weirtest::parseJsonOrUndefined(object.text);
        CHECK_MSG(v.isMapping(), "not an object: " + object.text);
    } else {
        CHECK(object.terminal.finish == FinishReason::Length);
        CHECK(object.text.rfind("{", 0) == 0);
    }
    for (Outcome* o : {&refused, &unparsable}) {
        REQUIRE_EQ(o->terminals, 1);
        CHECK(o->terminal.kind == Event::Kind::Error);
        CHECK(o->terminal.error == ErrorCode::BadRequest);
        CHECK(o->text.empty());
    }
    CHECK_MSG(refused.terminal.text.find("'pattern'") != std::string::npos, refused.terminal.text);
    CHECK_MSG(unparsable.terminal.text.find("not valid JSON") != std::string::npos, unparsable.terminal.text);
}
