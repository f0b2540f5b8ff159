// The lazy constraint of tool_choice "auto", on the real vocabularies with
// teacher tokens (no model): free text passes unmasked, the trigger arms the
// call's grammar at the very token that writes it, a held call bans what
// breaks it (end-of-generation included) and lets the closing marker end it,
// after which the text is free again and the next trigger arms it anew. A
// masked walk with random logits from the trigger always writes a call that
// parses and validates. A token that writes the trigger and more hands the
// rest to the call (held when a call may start so, free when not). Prints
// the cost of watching for the trigger.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/chat/jinja_value.h"
#include "engine/chat/tool_syntax.h"
#include "engine/gguf/gguf_file.h"
#include "engine/grammar/constraint_factory.h"
#include "engine/grammar/lazy_constraint.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/engine/grammar/json_schema_validator.h"
#include "tests/engine/grammar/real_models.h"
#include "tests/support/weir_test.h"

using namespace weir;
using namespace weir::grammar;

namespace {

// Two tools, as the endpoint's call schema has them: {"name", "arguments"}.
const char* kCallSchema = R"({"anyOf":[
  {"type":"object","properties":{"name":{"const":"get_weather"},
   "arguments":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}},
   "required":["name","arguments"],"additionalProperties":false},
  {"type":"object","properties":{"name":{"const":"add"},
   "arguments":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}},
   "required":["name","arguments"],"additionalProperties":false}]})";

struct Vocab {
    std::string name;
    std::unique_ptr<Tokenizer> tok;
};

std::vector<Vocab> realVocabularies() {
    std::vector<Vocab> out;
    for (const auto& model : weir::test::realModels()) {
        if (!std::filesystem::exists(model.path)) continue;
        const auto file = gguf::GgufFile::open(model.path);
        out.push_back({model.name, Tokenizer::fromGguf(*file)});
    }
    return out;
}

OutputConstraint lazySpec(std::string trigger, std::string close) {
    OutputConstraint c{OutputConstraint::Kind::JsonSchema, kCallSchema, {std::move(trigger)}, std::move(close)};
    return c;
}

std::vector<int32_t> ids(const Tokenizer& tok, const std::string& text) { return tok.encode(text, false, false); }

// Feeds teacher tokens; false at the first one refused.
bool feed(LazyConstraint& c, const std::vector<int32_t>& tokens) {
    for (int32_t t : tokens)
        if (!c.accept(t)) return false;
    return true;
}

constexpr float kNever = -std::numeric_limits<float>::infinity();

// The JSON documents of a block, one after another (whitespace between).
std::vector<std::string> documents(std::string_view body) {
    std::vector<std::string> out;
    size_t p = 0;
    while (true) {
        while (p < body.size() && (body[p] == ' ' || body[p] == '\n')) ++p;
        if (p >= body.size()) return out;
        const size_t end = toolsyntax::jsonContainerEnd(body, p);
        if (end == std::string_view::npos) return {};
        out.emplace_back(body.substr(p, end - p));
        p = end;
    }
}

} // namespace

WEIR_TEST(LazyConstraint, armsAtTriggerHoldsTheCallAndFreesAfterClose) {
    const auto vocabs = realVocabularies();
    if (vocabs.empty()) SKIP("no real model in models/");
    for (const Vocab& v : vocabs) {
        const Tokenizer& tok = *v.tok;
        ConstraintFactory factory(tok);
        for (const auto& [trigger, close] : std::vector<std::pair<std::string, std::string>>{
                 {"```tool_call", "```"}, {"<tool_call>", "</tool_call>"}}) {
            auto c = factory.makeLazy(lazySpec(trigger, close));
            REQUIRE(c != nullptr);
            const int32_t n = tok.vocabSize();
            std::vector<float> logits(size_t(n), 1.0f);

            // Free text: no mask at all, end of generation allowed.
            REQUIRE(feed(*c, ids(tok, "Let me look that up for you.\n")));
            CHECK(!c->held());
            REQUIRE(c->maskLogits(logits.data(), n));
            CHECK(std::all_of(logits.begin(), logits.end(), [](float x) { return x == 1.0f; }));

            // The trigger's last token arms the call.
            const std::vector<int32_t> trig = ids(tok, trigger);
            REQUIRE(feed(*c, std::vector<int32_t>(trig.begin(), trig.end() - 1)));
            CHECK_MSG(!c->held(), v.name + ": armed before the trigger was complete");
            REQUIRE(c->accept(trig.back()));
            CHECK_MSG(c->held(), v.name + ": not armed by " + trigger);
            CHECK_EQ(c->callsOpened(), size_t(1));

            // Held: end of generation and plain words are masked, '{' is not.
            REQUIRE(c->maskLogits(logits.data(), n));
            for (int32_t eog : tok.endOfGeneration()) CHECK_EQ(logits[size_t(eog)], kNever);
            const std::vector<int32_t> word = ids(tok, "Sure");
            REQUIRE(!word.empty());
            CHECK_EQ(logits[size_t(word[0])], kNever);
            CHECK(!c->accept(word[0]));
            CHECK(c->held());  // a refused token changes nothing

            // A call to a tool that is not offered breaks it.
            {
                auto other = factory.makeLazy(lazySpec(trigger, close));
                REQUIRE(feed(*other, ids(tok, "ok " + trigger)));
                REQUIRE(other->held());
                CHECK_MSG(!feed(*other, ids(tok, "\n{\"name\": \"delete_everything\"")),
                          v.name + ": an unknown tool name was accepted");
            }

            // A valid call and its closing marker free the text again.
            REQUIRE_MSG(feed(*c, ids(tok, "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n" + close)),
                        v.name + ": a valid call was refused");
            CHECK(!c->held());
            CHECK_EQ(c->callsClosed(), size_t(1));
            std::fill(logits.begin(), logits.end(), 1.0f);
            REQUIRE(c->maskLogits(logits.data(), n));
            CHECK(std::all_of(logits.begin(), logits.end(), [](float x) { return x == 1.0f; }));
            REQUIRE(feed(*c, ids(tok, " Anything goes here: }}} \"")));

            // The next trigger arms a second call.
            REQUIRE(feed(*c, ids(tok, "\n" + trigger)));
            CHECK(c->held());
            CHECK_EQ(c->callsOpened(), size_t(2));
            REQUIRE(feed(*c, ids(tok, "{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}" + close)));
            CHECK(!c->held());
            CHECK_EQ(c->callsClosed(), size_t(2));
        }
    }
}

WEIR_TEST(LazyConstraint, maskedWalkFromTheTriggerWritesValidCalls) {
    const auto vocabs = realVocabularies();
    if (vocabs.empty()) SKIP("no real model in models/");
    const weir::test::SchemaValidator validator(jinja::Value::parseJson(kCallSchema));
    for (const Vocab& v : vocabs) {
        const Tokenizer& tok = *v.tok;
        ConstraintFactory factory(tok);
        const int32_t n = tok.vocabSize();
        // Tokens a random walk should prefer so that strings and numbers end.
        std::vector<int32_t> preferred;
        for (const char* s : {"\"", "}", ",", ":", "1", "7", "x", "\n", "```", " ", "{"})
            for (int32_t id : ids(tok, s)) preferred.push_back(id);
        int valid = 0;
        for (uint32_t seed = 1; seed <= 6; ++seed) {
            auto c = factory.makeLazy(lazySpec("```tool_call", "```"));
            REQUIRE(feed(*c, ids(tok, "I will call a tool.\n```tool_call")));
            REQUIRE(c->held());
            std::mt19937 rng(seed);
            std::normal_distribution<float> noise(0.0f, 1.0f);
            std::string text;
            std::vector<float> logits(static_cast<size_t>(n));
            for (int step = 0; step < 400 && c->held(); ++step) {
                for (float& x : logits) x = noise(rng);
                for (int32_t p : preferred) logits[size_t(p)] += 8.0f;
                REQUIRE(c->maskLogits(logits.data(), n));
                const int32_t t = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
                REQUIRE(logits[size_t(t)] != kNever);
                REQUIRE_MSG(c->accept(t), v.name + ": the mask allowed a token the call refuses");
                text += tok.tokenBytes(t, true);
            }
            REQUIRE_MSG(!c->held(), v.name + ": the call did not close within 400 tokens: " + text);
            REQUIRE(text.size() >= 3 && text.ends_with("```"));
            const std::string body = text.substr(0, text.size() - 3);
            std::string problem;
            const std::vector<std::string> calls = documents(body);
            if (calls.empty()) problem = "no call";
            for (const std::string& call : calls)
                if (problem.empty()) problem = validator.validate(jinja::Value::parseJson(call));
            CHECK_MSG(problem.empty(), v.name + ": " + body + ": " + problem);
            if (problem.empty()) ++valid;
        }
        std::printf("%s: %d of 6 masked walks wrote a valid call\n", v.name.c_str(), valid);
    }
}

WEIR_TEST(LazyConstraint, splitTriggersArmAndLookAlikesDoNot) {
    const auto vocabs = realVocabularies();
    if (vocabs.empty()) SKIP("no real model in models/");
    const Tokenizer& tok = *vocabs.front().tok;
    ConstraintFactory factory(tok);
    // The trigger written one byte per token (as a tokenizer may split it).
    auto c = factory.makeLazy(lazySpec("```tool_call", "```"));
    for (char ch : std::string("text ```tool_call")) REQUIRE(feed(*c, ids(tok, std::string(1, ch))));
    CHECK(c->held());
    // Text that only looks like a trigger leaves the reply free.
    auto d = factory.makeLazy(lazySpec("```tool_call", "```"));
    REQUIRE(feed(*d, ids(tok, "```tool_cal ```python\nprint(1)\n```")));
    CHECK(!d->held());
    CHECK_EQ(d->callsOpened(), size_t(0));
}

WEIR_TEST(LazyConstraint, watchingCostPerToken) {
    const auto vocabs = realVocabularies();
    if (vocabs.empty()) SKIP("no real model in models/");
    const Tokenizer& tok = *vocabs.front().tok;
    ConstraintFactory factory(tok);
    auto c = factory.makeLazy(lazySpec("```tool_call", "```"));
    const std::vector<int32_t> text =
        ids(tok, "The weather in Paris is mild today, with a light breeze from the west and a few clouds. ");
    constexpr int kRounds = 2000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < kRounds; ++r) REQUIRE(feed(*c, text));
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    CHECK(!c->held());
    std::printf("%s: watching for the trigger: %.0f ns per free token (%zu tokens)\n", vocabs.front().name.c_str(),
                ns / double(kRounds * text.size()), kRounds * text.size());
}

WEIR_TEST(LazyConstraint, aTokenPastTheTriggerFeedsTheRestToTheCall) {
    // "<tool_call" then one token ">X": X is the call's first byte. A brace
    // may start a call (held); a comma may not (the reply stays free).
    int ran = 0;
    for (const Vocab& v : realVocabularies()) {
        const Tokenizer& tok = *v.tok;
        auto tokenOf = [&](const std::string& bytes) {
            for (int32_t id = 0; id < tok.vocabSize(); ++id)
                if (!tok.isControl(id) && tok.tokenBytes(id) == bytes) return id;
            return int32_t(-1);
        };
        const int32_t brace = tokenOf(">{"), comma = tokenOf(">,");
        if (brace < 0 || comma < 0) continue;
        ++ran;
        ConstraintFactory factory(tok);
        auto held = factory.makeLazy(lazySpec("<tool_call>", "</tool_call>"));
        REQUIRE(feed(*held, ids(tok, "Checking. <tool_call")));
        REQUIRE(!held->held());
        REQUIRE(held->accept(brace));
        CHECK_MSG(held->held(), v.name + ": the trigger inside a token did not arm");
        // The brace is spent: the call goes on inside its object.
        REQUIRE(feed(*held, ids(tok, "\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>")));
        CHECK(!held->held());
        CHECK_EQ(held->callsClosed(), size_t(1));

        auto free = factory.makeLazy(lazySpec("<tool_call>", "</tool_call>"));
        REQUIRE(feed(*free, ids(tok, "Checking. <tool_call")));
        REQUIRE(free->accept(comma));
        CHECK_MSG(!free->held(), v.name + ": a call that cannot start was held");
        CHECK_EQ(free->callsOpened(), size_t(0));
        // ... and a later trigger still arms.
        REQUIRE(feed(*free, ids(tok, " then <tool_call>")));
        CHECK(free->held());
    }
    if (ran == 0) SKIP("no vocabulary with the tokens \">{\" and \">,\" (Gemma 3's has them)");
}

WEIR_TEST(LazyConstraint, severalCallsPerBlockUpToTheBound) {
    const auto vocabs = realVocabularies();
    if (vocabs.empty()) SKIP("no real model in models/");
    const Tokenizer& tok = *vocabs.front().tok;
    ConstraintFactory factory(tok);
    const std::string call = R"({"name": "add", "arguments": {"a": 1, "b": 2}})";
    auto c = factory.makeLazy(lazySpec("```tool_call", "```"));
    REQUIRE(feed(*c, ids(tok, "```tool_call\n" + call + "\n" + call + "\n```")));
    CHECK(!c->held());
    CHECK_EQ(c->callsClosed(), size_t(1));
    // One call more than the bound: the block must close instead.
    auto d = factory.makeLazy(lazySpec("```tool_call", "```"));
    std::string block = "```tool_call\n" + call;
    for (int i = 1; i < kMaxDocumentsPerCall; ++i) block += "\n" + call;
    REQUIRE(feed(*d, ids(tok, block)));
    REQUIRE(d->held());
    CHECK(!feed(*d, ids(tok, "\n{")));
}
