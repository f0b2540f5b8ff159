// GenerateRequest::embed: the prompt runs through the scheduler like any
// other (batched with generation), nothing is sampled, and the one Done event
// carries the last token's final hidden state, unit length; the pages come
// back and nothing enters the prefix cache.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "tests/engine/scheduler/tiny_gemma3.h"
#include "weir/engine.h"

using namespace weir;

namespace {

struct Collected {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    int tokens = 0;
    Event terminal;

    EventSink sink() {
        return [this](const Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (ev.kind == Event::Kind::Token) {
                ++tokens;
                return;
            }
            terminal = ev;
            done = true;
            cv.notify_all();
        };
    }
    Event wait() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return done; });
        return terminal;
    }
};

GenerateRequest embedRequest(std::vector<int32_t> prompt) {
    GenerateRequest r;
    r.prompt = std::move(prompt);
    r.embed = true;
    return r;
}

double norm(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += double(x) * double(x);
    return std::sqrt(s);
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(double(a[i]) - double(b[i])));
    return d;
}

}  // namespace

static weirtest::TempDir dir_;
static std::string model_;

WEIR_TEST_SUITE_SETUP(Embedding) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny.gguf");
    test::writeTinyGemma3(model_);
}

static EngineOptions options() {
    EngineOptions o;
    o.modelPath = model_;
    o.threads = 2;
    o.maxContext = 512;
    o.checkIntegrityEveryStep = true;
    return o;
}

WEIR_TEST(Embedding, unitLengthDeterministicAndNothingSampled) {
    Engine engine(options());
    const std::vector<int32_t> prompt = engine.tokenize("the operator shall record every change", true);
    Collected a, b, other;
    engine.submit(embedRequest(prompt), a.sink());
    const Event ea = a.wait();
    engine.submit(embedRequest(prompt), b.sink());
    engine.submit(embedRequest(engine.tokenize("backups are verified weekly", true)), other.sink());
    const Event eb = b.wait(), eo = other.wait();
    REQUIRE(ea.kind == Event::Kind::Done);
    REQUIRE_EQ(a.tokens, 0);
    REQUIRE_EQ(int64_t(ea.embedding.size()), int64_t(engine.modelConfig().nEmbd));
    REQUIRE(std::abs(norm(ea.embedding) - 1.0) < 1e-4);
    REQUIRE_EQ(ea.usage.promptTokens, int32_t(prompt.size()));
    REQUIRE_EQ(ea.usage.completionTokens, 0);
    // The same prompt, the same vector (now batched beside another request).
    REQUIRE(maxDiff(ea.embedding, eb.embedding) < 1e-5);
    REQUIRE(maxDiff(ea.embedding, eo.embedding) > 1e-3);
    // Nothing kept: every page is free again, none cached.
    const CacheStatus st = engine.cacheStatus();
    REQUIRE_EQ(st.full.cachedTokens, int64_t(0));
    REQUIRE_EQ(st.full.freeTokens, st.full.capacityTokens);
    REQUIRE_EQ(st.violations, uint64_t(0));
}

WEIR_TEST(Embedding, runsBesideGeneration) {
    Engine engine(options());
    const std::vector<int32_t> prompt = engine.tokenize("tools may call", true);
    Collected alone;
    engine.submit(embedRequest(prompt), alone.sink());
    const Event reference = alone.wait();
    GenerateRequest gen;
    gen.prompt = engine.tokenize("the budget", true);
    gen.maxTokens = 24;
    gen.sampling.temperature = 0;
    gen.stopAtEndOfGeneration = false;
    Collected generating, embedding;
    engine.submit(std::move(gen), generating.sink());
    engine.submit(embedRequest(prompt), embedding.sink());
    const Event e = embedding.wait();
    const Event g = generating.wait();
    REQUIRE(g.kind == Event::Kind::Done);
    REQUIRE_EQ(generating.tokens, 24);
    REQUIRE(e.kind == Event::Kind::Done);
    REQUIRE(maxDiff(reference.embedding, e.embedding) < 1e-4);
}
