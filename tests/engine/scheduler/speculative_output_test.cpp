// Speculative decoding by prompt lookup gives the output plain decoding
// gives, on both real models: greedy token for token, sampled with the same
// seed (penalties and log probabilities included), and under a JSON
// constraint; on prompts that quote themselves (drafts are kept) and on ones
// that do not. Pool integrity is checked after every step.
#include "tests/support/weir_test.h"

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/engine/grammar/real_models.h"
#include "weir/engine.h"

using namespace weir;

namespace {

struct Reply {
    std::vector<int32_t> tokens;
    std::vector<std::optional<TokenLogprobs>> logprobs;
    std::string text;
    Event terminal;
};

Reply generate(Engine& engine, GenerateRequest request) {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    Reply out;
    engine.submit(std::move(request), [&](const Event& ev) {
        std::lock_guard<std::mutex> lock(mutex);
        if (ev.kind == Event::Kind::Token) {
            out.tokens.push_back(ev.token);
            out.logprobs.push_back(ev.logprobs);
            out.text += ev.text;
            return;
        }
        out.terminal = ev;
        done = true;
        cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return done; });
    return out;
}

EngineOptions options(const std::string& path, bool speculative) {
    EngineOptions o;
    o.modelPath = path;
    o.threads = 2;
    o.maxContext = 512;
    o.maxRunningRequests = 2;
    o.checkIntegrityEveryStep = true;
    o.speculative = speculative;
    return o;
}

const char* kQuoting =
    "Copy the code below exactly.\n\nint add(int a, int b) {\n    return a + b;\n}\n\nint sub(int a, int b) {\n"
    "    return a - b;\n}\n\nCopy:\n\nint add(int a, int b) {\n";
const char* kPlain = "The three most important rivers of Europe are";

struct Case {
    const char* name;
    const char* prompt;
    bool sampled;
};

bool sameLogprobs(const Reply& a, const Reply& b) {
    if (a.logprobs.size() != b.logprobs.size()) return false;
    for (size_t i = 0; i < a.logprobs.size(); ++i) {
        if (a.logprobs[i].has_value() != b.logprobs[i].has_value()) return false;
        if (!a.logprobs[i]) continue;
        if (a.logprobs[i]->chosen.logprob != b.logprobs[i]->chosen.logprob) return false;
        if (a.logprobs[i]->top.size() != b.logprobs[i]->top.size()) return false;
    }
    return true;
}

void compareOnModel(const test::RealModel& model) {
    if (!std::filesystem::exists(model.path)) SKIP(model.name + " not present");
    Engine off(options(model.path, false)), on(options(model.path, true));
    const Case cases[] = {{"quoting greedy", kQuoting, false},
                          {"plain greedy", kPlain, false},
                          {"quoting sampled", kQuoting, true},
                          {"plain sampled", kPlain, true}};
    for (const Case& c : cases) {
        GenerateRequest r;
        r.prompt = on.tokenize(c.prompt, true);
        r.maxTokens = 24;
        r.stopAtEndOfGeneration = false;
        r.sampling.temperature = 0.0f;
        if (c.sampled) {
            r.sampling.temperature = 0.7f;
            r.sampling.seed = 1234;
            r.sampling.repeatPenalty = 1.1f;  // the history each row sees matters
            r.topLogprobs = 2;
        }
        const Reply a = generate(off, r), b = generate(on, r);
        std::printf("  %s %s: %zu tokens, %d of %d drafts kept: %s\n", model.name.c_str(), c.name, b.tokens.size(),
                    b.terminal.usage.acceptedDraftTokens, b.terminal.usage.draftTokens, b.text.c_str());
        REQUIRE(a.terminal.kind == Event::Kind::Done);
        REQUIRE(b.terminal.kind == Event::Kind::Done);
        CHECK_EQ(a.tokens, b.tokens);
        CHECK_EQ(a.text, b.text);
        CHECK(sameLogprobs(a, b));
        CHECK_EQ(a.terminal.usage.draftTokens, 0);
        CHECK_EQ(b.terminal.usage.completionTokens, int32_t(b.tokens.size()));
        CHECK(b.terminal.usage.acceptedDraftTokens <= b.terminal.usage.draftTokens);
        // A model copying code takes drafts; greedy, that is certain.
        if (std::string(c.name) == "quoting greedy") CHECK(b.terminal.usage.acceptedDraftTokens >= 8);
    }
    for (Engine* e : {&off, &on}) {
        const CacheStatus st = e->cacheStatus();
        CHECK_EQ(st.violations, uint64_t(0));
        CHECK_EQ(st.full.ownedTokens, int64_t(0));  // nothing held once every request ended
        CHECK_EQ(st.window.ownedTokens, int64_t(0));
    }
    CHECK(on.cacheStatus().acceptedDraftTokens > 0);
}

} // namespace

WEIR_TEST(SpeculativeOutput, gemma3SameAsPlainDecoding) { compareOnModel(test::realModels()[0]); }
WEIR_TEST(SpeculativeOutput, smollm2SameAsPlainDecoding) { compareOnModel(test::realModels()[1]); }

WEIR_TEST(SpeculativeOutput, constrainedJsonSameAsPlainDecoding) {
    const test::RealModel model = test::realModels()[0];
    if (!std::filesystem::exists(model.path)) SKIP(model.name + " not present");
    Engine off(options(model.path, false)), on(options(model.path, true));
    GenerateRequest r;
    r.prompt = on.tokenize("{\"name\": \"Ann\", \"age\": 31, \"city\": \"Oslo\"}\n{\"name\": \"Bob\", \"age\": 42, \"city\": \"Rome\"}\n", true);
    r.maxTokens = 24;
    r.sampling.temperature = 0.0f;
    r.constraint.kind = OutputConstraint::Kind::JsonObject;
    const Reply a = generate(off, r), b = generate(on, r);
    std::printf("  json: %d of %d drafts kept: %s\n", b.terminal.usage.acceptedDraftTokens,
                b.terminal.usage.draftTokens, b.text.c_str());
    REQUIRE(b.terminal.kind == Event::Kind::Done);
    CHECK_EQ(a.tokens, b.tokens);
    CHECK(b.terminal.usage.acceptedDraftTokens > 0);
    CHECK_EQ(on.cacheStatus().violations, uint64_t(0));
}
