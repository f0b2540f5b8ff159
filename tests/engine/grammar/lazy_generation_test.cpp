// A lazy constraint end to end, through the Engine and its scheduler, on
// SmolLM2: a few-shot prompt makes the model open ```tool_call blocks in
// free text; every block it closes holds a call that parses and validates
// against the call schema (which requires a "unit" the example leaves out, so
// an unheld call would miss it), the text around them stays free, and several calls
// in one reply are each held (the constraint re-arms after each close).
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "engine/chat/tool_syntax.h"
#include "tests/engine/grammar/json_schema_validator.h"
#include "tests/engine/grammar/real_models.h"
#include "tests/support/json_reading.h"
#include "tests/support/weir_test.h"
#include "weir/engine.h"

using namespace weir;

namespace {

const char* kCallSchema = R"({"type":"object","properties":{"name":{"const":"get_weather"},
  "arguments":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},
  "required":["city","unit"],"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false})";

const char* kPrompt =
    "Weather questions are answered with a tool_call block.\n"
    "Q: Weather in Rome?\nA: ```tool_call\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\n"
    "Q: Is it sunny in Paris?\nA:";

struct Outcome {
    std::string text;
    int terminals = 0;
    Event terminal;
};

} // namespace

WEIR_TEST(LazyGeneration, everyClosedCallValidates) {
    const std::string path = weir::test::realModels()[1].path;  // SmolLM2: writes the fence reliably
    if (!std::filesystem::exists(path)) SKIP(path + " is missing");
    EngineOptions o;
    o.modelPath = path;
    o.threads = 2;
    o.maxRunningRequests = 4;
    o.maxContext = 1024;
    Engine engine(o);
    std::mutex m;
    std::condition_variable cv;
    std::vector<Outcome> outcomes(4);
    int ended = 0;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        GenerateRequest r;
        r.prompt = engine.tokenize(kPrompt, true);
        r.maxTokens = 64;
        r.sampling.temperature = i == 0 ? 0.0f : 1.0f;
        r.sampling.seed = i;
        r.constraint = {OutputConstraint::Kind::JsonSchema, kCallSchema, {"```tool_call"}, "```"};
        Outcome* out = &outcomes[i];
        engine.submit(std::move(r), [&, out](const Event& ev) {
            std::lock_guard<std::mutex> lock(m);
            if (ev.kind == Event::Kind::Token) {
                out->text += ev.text;
                return;
            }
            ++out->terminals;
            out->terminal = ev;
            ++ended;
            cv.notify_all();
        });
    }
    {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return ended == int(outcomes.size()); });
    }
    const weir::test::SchemaValidator validator(weirtest::Json::parseJson(kCallSchema));
    int calls = 0;
    for (const Outcome& out : outcomes) {
        REQUIRE_EQ(out.terminals, 1);
        REQUIRE_MSG(out.terminal.kind == Event::Kind::Done, out.terminal.text);
        const std::string& t = out.text;
        for (size_t at = t.find("```tool_call"); at != std::string::npos; at = t.find("```tool_call", at + 1)) {
            const size_t body = at + 12;
            const size_t close = t.find("```", body);
            if (close == std::string::npos) {
                // Only the budget may cut a call short.
                CHECK_MSG(out.terminal.finish == FinishReason::Length, t);
                break;
            }
            // One call after another (several may share a block).
            const std::string block = t.substr(body, close - body);
            size_t p = 0;
            while (true) {
                while (p < block.size() && (block[p] == ' ' || block[p] == '\n')) ++p;
                if (p >= block.size()) break;
                const size_t end = toolsyntax::jsonContainerEnd(block, p);
                REQUIRE_MSG(end != std::string::npos, "a held call does not end: " + block);
                const std::string json = block.substr(p, end - p);
                p = end;
                const weirtest::Json value = weirtest::parseJsonOrUndefined(json);
                REQUIRE_MSG(!value.isUndefined(), "a held call does not parse: " + json);
                const std::string why = validator.validate(value);
                CHECK_MSG(why.empty(), json + ": " + why);
                ++calls;
            }
            at = close;
        }
    }
    std::printf("smollm2-135m: %d calls held and valid in %zu replies\n", calls, outcomes.size());
    CHECK_MSG(calls >= 1, "the prompt provoked no call: nothing was proved");
}
