// A step's rows sampled on the backend's thread pool (scheduler_sampling.cpp)
// give exactly the events drawing them one after another gives: several
// conversations decoding at once with their own seeds, sampled (penalties,
// logit bias), greedy, with and without log probabilities, two of them held
// to one JSON grammar (so they share its compiled automaton and mask cache),
// some ending on an end-of-generation token mid-run. The parallel path is
// proven taken by the pool's round trips: exactly one more per step that
// sampled several rows than the same run sampling one row at a time.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/engine/scheduler/tiny_gemma3.h"
#include "tests/engine/test_backend.h"
#include "weir/types/engine_options.h"

using namespace weir;

namespace {

// Every event of one run, in the order the scheduler delivered them, with
// the floats as bits: two runs agree only when they agree exactly.
struct Run {
    std::vector<std::string> events;
    Scheduler::ParallelSampling parallel;
    uint64_t poolRoundTrips = 0;
    int tokens = 0, errors = 0;
};

std::string describe(const TokenLogprob& t) {
    char lp[64];
    std::snprintf(lp, sizeof lp, "%a", double(t.logprob));
    return std::to_string(t.token) + ":" + lp + ":" + t.bytes;
}

std::string describe(const Event& ev) {
    std::string s = "request " + std::to_string(ev.request) + " kind " + std::to_string(int(ev.kind)) + " token " +
                    std::to_string(ev.token) + " text [" + ev.text + "] finish " + std::to_string(int(ev.finish));
    if (ev.logprobs) {
        s += " chosen " + describe(ev.logprobs->chosen) + " top";
        for (const TokenLogprob& t : ev.logprobs->top) s += " " + describe(t);
    }
    if (ev.isTerminal()) s += " generated " + std::to_string(ev.usage.completionTokens);
    return s;
}

GenerateRequest sampled(std::vector<int32_t> prompt, uint64_t seed, int32_t topLogprobs) {
    GenerateRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = 20;
    r.sampling.temperature = 1.1f;
    r.sampling.topK = 0;  // the whole row
    r.sampling.topP = 0.97f;
    r.sampling.minP = 0.0f;
    r.sampling.seed = seed;
    r.topLogprobs = topLogprobs;
    r.stopAtEndOfGeneration = true;
    return r;
}

std::vector<GenerateRequest> requests() {
    std::vector<GenerateRequest> out;
    // Prompts of different lengths: some finish their prefill while others
    // already decode, so a step's rows mix both.
    auto prompt = [](int32_t n, int32_t first) {
        std::vector<int32_t> p{2};  // BOS
        for (int32_t i = 1; i < n; ++i) p.push_back(262 + (first + i * 7) % 90);
        return p;
    };
    out.push_back(sampled(prompt(9, 0), 11, 3));
    out.push_back(sampled(prompt(14, 5), 12, -1));
    out.back().sampling.repeatPenalty = 1.3f;
    out.back().sampling.presencePenalty = 0.4f;
    out.push_back(sampled(prompt(6, 9), 13, 2));
    out.back().constraint.kind = OutputConstraint::Kind::JsonObject;
    out.push_back(sampled(prompt(11, 3), 14, -1));
    out.back().constraint.kind = OutputConstraint::Kind::JsonObject;
    out.push_back(sampled(prompt(7, 21), 15, 0));
    out.back().sampling.logitBias = {{270, kLogitBan}, {271, 4.0f}};
    out.push_back(sampled(prompt(12, 40), 16, 5));
    out.back().sampling.temperature = 0.0f;  // greedy
    out.push_back(sampled(prompt(5, 60), 17, -1));
    out.back().stopAtEndOfGeneration = false;
    out.back().maxTokens = 28;
    return out;
}

// The requests above, all at once, on a scheduler over `threads` threads.
Run run(const std::string& modelPath, int threads, bool sampleInParallel) {
    auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(modelPath));
    std::unique_ptr<Model> model = loadModel(file, weirtest::cpuBackend(threads));
    std::unique_ptr<Tokenizer> tokenizer = Tokenizer::fromGguf(*file);
    EngineOptions o;
    o.modelPath = modelPath;
    o.threads = threads;
    o.maxRunningRequests = 8;
    o.prefillChunk = 32;
    o.pageSize = 16;
    o.maxContext = 256;
    const kv::PoolPlan plan = kv::planPoolsOrThrow(o, model->config());
    kv::HybridKvCache cache(kv::KvCacheConfig::fromPlan(plan, model->config()));
    SchedulerOptions so;
    so.maxRunning = o.maxRunningRequests;
    so.prefillChunk = o.prefillChunk;
    so.maxContext = int32_t(plan.maxContext);
    so.checkEveryStep = true;
    so.sampleInParallel = sampleInParallel;
    Scheduler scheduler(*model, cache, tokenizer.get(), so);

    Run out;
    for (GenerateRequest& r : requests())
        scheduler.submit(std::move(r), [&out](const Event& ev) {
            out.events.push_back(describe(ev));
            out.tokens += ev.kind == Event::Kind::Token;
            out.errors += ev.kind == Event::Kind::Error;
        });
    const uint64_t tripsBefore = kernels::ThreadPool::processCounters().roundTrips;
    for (int i = 0; i < 1000 && scheduler.step(); ++i) {
    }
    out.poolRoundTrips = kernels::ThreadPool::processCounters().roundTrips - tripsBefore;
    out.parallel = scheduler.parallelSampling();
    const CacheStatus st = scheduler.status();
    for (const auto& d : st.violationDetails) std::printf("  violation: %s\n", d.c_str());
    CHECK_EQ(st.violations, uint64_t(0));
    return out;
}

void expectSameEvents(const Run& a, const Run& b) {
    const size_t n = std::min(a.events.size(), b.events.size());
    for (size_t i = 0; i < n; ++i) REQUIRE_EQ(a.events[i], b.events[i]);
    REQUIRE_EQ(a.events.size(), b.events.size());
}

} // namespace

static weirtest::TempDir dir_;
static std::string model_;

WEIR_TEST_SUITE_SETUP(ParallelSampling) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny-gemma3.gguf");
    test::writeTinyGemma3(model_);
}

WEIR_TEST(ParallelSampling, poolDrawsTheTokensOneByOneDrawingDraws) {
    const Run oneByOne = run(model_, 4, false);
    const Run parallel = run(model_, 4, true);
    // Something worth comparing: every request generated, none failed.
    REQUIRE_EQ(oneByOne.errors, 0);
    REQUIRE(oneByOne.tokens >= 7 * 5);
    REQUIRE_EQ(oneByOne.parallel.jobs, uint64_t(0));

    expectSameEvents(parallel, oneByOne);
    // Steps with several rows sampled them in one pool job each, and each of
    // those is a round trip the one-by-one run did not make.
    REQUIRE(parallel.parallel.jobs >= 10);
    REQUIRE(parallel.parallel.rows >= 2 * parallel.parallel.jobs);
    CHECK_EQ(parallel.poolRoundTrips, oneByOne.poolRoundTrips + parallel.parallel.jobs);
}

WEIR_TEST(ParallelSampling, aPoolOfOneDrawsOnTheEngineThread) {
    const Run one = run(model_, 1, true);
    CHECK_EQ(one.parallel.jobs, uint64_t(0));
    CHECK_EQ(one.parallel.rows, uint64_t(0));
    CHECK_EQ(one.errors, 0);
    // One thread computes the same logits as four here (each row on its own,
    // and no context long enough for attention to be split): the same events.
    expectSameEvents(one, run(model_, 4, true));
}
