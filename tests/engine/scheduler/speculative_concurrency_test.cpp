// Speculative decoding beside other requests, stepped by hand on the tiny
// Gemma 3 (sliding window 32): several running sequences give the tokens
// plain decoding gives; under preemption and with a cancel at every step of
// a run, every request ends with exactly one terminal event and the pools
// come back whole (integrity checked after every step).
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cstdio>
#include <random>

#include "tests/engine/scheduler/stepped_scheduler.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;
using weir::test::SteppedScheduler;
using weir::test::StepOutcome;

namespace {

// A prompt that repeats itself (so lookup finds drafts), BOS first.
std::vector<int32_t> quotingPrompt(std::mt19937_64& rng, int32_t half, int32_t vocab) {
    std::vector<int32_t> p{2}, part;
    for (int32_t i = 0; i < half; ++i) part.push_back(262 + int32_t(rng() % uint64_t(vocab - 262)));
    p.insert(p.end(), part.begin(), part.end());
    p.insert(p.end(), part.begin(), part.end() - half / 2);
    return p;
}

void expectCleanPools(SteppedScheduler& s) {
    s.scheduler().clearPrefixCache();
    const CacheStatus st = s.status();
    for (const auto& d : st.violationDetails) std::printf("  violation: %s\n", d.c_str());
    REQUIRE_EQ(st.violations, uint64_t(0));
    REQUIRE_EQ(st.running, 0);
    REQUIRE_EQ(st.waiting, 0);
    REQUIRE_EQ(st.full.freeTokens, st.full.capacityTokens);
    REQUIRE_EQ(st.window.freeTokens, st.window.capacityTokens);
}

} // namespace

static weirtest::TempDir dir_;
static std::string model_;

WEIR_TEST_SUITE_SETUP(SpeculativeConcurrency) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny-gemma3.gguf");
    test::writeTinyGemma3(model_);
}

static EngineOptions options(bool speculative, int32_t pageSize, int32_t context) {
    EngineOptions o;
    o.modelPath = model_;
    o.threads = 1;
    o.pageSize = pageSize;
    o.maxRunningRequests = 4;
    o.prefillChunk = 64;
    o.maxContext = context;
    o.kvReserveTokens = context;  // a full pool of one context: the requests outgrow it together
    o.maxWaiting = 16;
    o.checkIntegrityEveryStep = true;
    o.speculative = speculative;
    o.draftTokens = 6;
    o.draftStepRows = 64;  // drafts alongside the other running requests, which the default keeps apart
    return o;
}

struct Run {
    std::vector<std::vector<int32_t>> tokens;
    std::vector<Event::Kind> ends;
    CacheStatus status;
};

// Six requests, four running at once; `cancelAtStep` >= 0 cancels the
// third then. Page size 4 and a full pool of one 256-token context.
static Run runWorkload(bool speculative, int64_t cancelAtStep) {
    SteppedScheduler s(options(speculative, 4, 256));
    const int32_t vocab = s.modelConfig().nVocab;
    std::mt19937_64 rng(41);
    std::vector<StepOutcome*> outs;
    uint64_t victim = 0;
    for (int i = 0; i < 6; ++i) {
        uint64_t id = 0;
        outs.push_back(&s.submit(quotingPrompt(rng, 20 + 6 * i, vocab), 40, &id));
        if (i == 2) victim = id;
    }
    for (int64_t step = 0; step < 100000 && s.step(); ++step)
        if (step == cancelAtStep) s.cancel(victim);
    Run run;
    for (StepOutcome* o : outs) {
        REQUIRE_EQ(o->terminals, 1);
        REQUIRE_EQ(o->afterTerminal, 0);
        run.tokens.push_back(o->tokens);
        run.ends.push_back(o->terminal.kind);
    }
    run.status = s.status();
    expectCleanPools(s);
    return run;
}

WEIR_TEST(SpeculativeConcurrency, runningSequencesGivePlainTokens) {
    const Run plain = runWorkload(false, -1), spec = runWorkload(true, -1);
    std::printf("  %llu of %llu drafts kept, %llu preemptions (plain: %llu)\n",
                (unsigned long long)spec.status.acceptedDraftTokens, (unsigned long long)spec.status.draftTokens,
                (unsigned long long)spec.status.preemptions, (unsigned long long)plain.status.preemptions);
    REQUIRE(spec.status.acceptedDraftTokens > 0);
    REQUIRE(spec.status.preemptions > 0);  // the pool is one context for four requests
    for (size_t i = 0; i < plain.tokens.size(); ++i) {
        CHECK(plain.ends[i] == Event::Kind::Done);
        CHECK(spec.ends[i] == Event::Kind::Done);
        CHECK_EQ(plain.tokens[i], spec.tokens[i]);
    }
}

WEIR_TEST(SpeculativeConcurrency, cancelAtAnyStepEndsOnceAndFreesEverything) {
    const Run plain = runWorkload(false, -1);
    for (int64_t at = 0; at < 60; at += 3) {
        const Run r = runWorkload(true, at);
        // The others are untouched by the cancel: the tokens plain decoding gives.
        for (size_t i = 0; i < r.tokens.size(); ++i) {
            if (i == 2) continue;
            CHECK(r.ends[i] == Event::Kind::Done);
            CHECK_EQ(r.tokens[i], plain.tokens[i]);
        }
        // The victim ended once, cancelled or (when the cancel came late) done, its tokens a prefix of plain's.
        CHECK(r.ends[2] == Event::Kind::Cancelled || r.ends[2] == Event::Kind::Done);
        CHECK(r.tokens[2].size() <= plain.tokens[2].size());
        CHECK(std::equal(r.tokens[2].begin(), r.tokens[2].end(), plain.tokens[2].begin()));
    }
}
