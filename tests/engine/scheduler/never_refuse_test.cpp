// A request whose prompt fits its context is never refused: it ends Done
// (finish Length when prompt + max_tokens runs past the context), however
// admission, chunked prefill, preemption, shared prefixes and cancels
// interleave. The scheduler is stepped by hand (SteppedScheduler), so each
// interleaving is exact and repeatable. Issue 16, item 1: an 8,187-token
// prompt with max_tokens 20 was refused with "the full KV pool has no room
// for 8192 tokens even with nothing else running" under --page-size 1 and a
// full pool of exactly --max-context tokens.
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <random>
#include <tuple>

#include "tests/engine/scheduler/stepped_scheduler.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;
using weir::test::SteppedScheduler;
using weir::test::StepOutcome;

namespace {

// Ordinary vocabulary ids (past the control and byte tokens), BOS first.
std::vector<int32_t> randomTokens(std::mt19937_64& rng, int32_t n, int32_t vocab) {
    std::vector<int32_t> p{2};
    for (int32_t i = 1; i < n; ++i) p.push_back(262 + int32_t(rng() % uint64_t(vocab - 262)));
    return p;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::string describe(const StepOutcome& o) {
    return "terminal kind " + std::to_string(int(o.terminal.kind)) + " finish " +
           std::to_string(int(o.terminal.finish)) + " after " + std::to_string(o.tokens.size()) +
           " tokens: " + o.terminal.text;
}

// What a request whose prompt fits must end with: Done, and Length exactly
// when max_tokens or the context ran out.
void expectFitsAndEnds(const StepOutcome& o, int32_t promptTokens, int32_t maxTokens, int32_t context) {
    QVERIFY2(o.terminals == 1, describe(o).c_str());
    QCOMPARE(o.afterTerminal, 0);
    QVERIFY2(o.terminal.kind == Event::Kind::Done, describe(o).c_str());
    const int32_t expected = std::min(maxTokens, context + 1 - promptTokens);
    QCOMPARE(int32_t(o.tokens.size()), expected);
    QCOMPARE(int(o.terminal.finish), int(FinishReason::Length));
}

} // namespace

class NeverRefuseTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;

    // The issue's settings scaled to the tiny model (window 32): page size 1,
    // full pool == max context, window pool at its floor, 4 running, chunk 64.
    EngineOptions issueOptions(int32_t context) const {
        EngineOptions o;
        o.modelPath = model_;
        o.threads = 1;
        o.pageSize = 1;
        o.maxRunningRequests = 4;
        o.prefillChunk = 64;
        o.maxContext = context;
        o.kvReserveTokens = context;
        o.maxWaiting = 8;
        o.checkIntegrityEveryStep = true;
        return o;
    }

    static void expectCleanPools(SteppedScheduler& s) {
        s.scheduler().clearPrefixCache();
        const CacheStatus st = s.status();
        for (const auto& d : st.violationDetails) qWarning("violation: %s", d.c_str());
        QCOMPARE(st.violations, uint64_t(0));
        QCOMPARE(st.running, 0);
        QCOMPARE(st.waiting, 0);
        QCOMPARE(st.full.freeTokens, st.full.capacityTokens);
        QCOMPARE(st.window.freeTokens, st.window.capacityTokens);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny-gemma3.gguf").toStdString();
        test::writeTinyGemma3(model_);
    }

    // A cached prefix whose window pages were evicted (tombstoned) is
    // recomputed by the next request sharing it. Its recomputed pages must
    // not sit beside the tree's copy of the same prefix, locked and unusable:
    // with a full pool of exactly one context the request then ran out of
    // pages alone and was refused.
    void recomputedPrefixDoesNotPinTheCachedCopy() {
        const int32_t context = 256;
        EngineOptions o = issueOptions(context);
        o.prefillChunk = 16;  // a window pool of 173 tokens, smaller than the full pool
        SteppedScheduler s(o);
        const int32_t vocab = s.modelConfig().nVocab;
        std::mt19937_64 rng(16);
        const std::vector<int32_t> shared = randomTokens(rng, 100, vocab);
        // A caches `shared` and its own tail; C, unrelated, pushes the
        // shared prefix's window pages out of the window pool.
        StepOutcome& a = s.submit(concat(shared, randomTokens(rng, 100, vocab)), 1);
        QVERIFY(s.runUntilIdle());
        StepOutcome& c = s.submit(randomTokens(rng, 60, vocab), 1);
        QVERIFY(s.runUntilIdle());
        QVERIFY2(a.terminal.kind == Event::Kind::Done, describe(a).c_str());
        QVERIFY2(c.terminal.kind == Event::Kind::Done, describe(c).c_str());

        const std::vector<int32_t> bPrompt = concat(shared, randomTokens(rng, 150, vocab));
        const kv::PrefixMatch m = s.cache().matchPrefix(bPrompt);
        // The interleaving this test is about: the shared prefix is cached
        // but its window content is gone, so B recomputes it.
        QVERIFY(m.cachedTokens >= int64_t(shared.size()));
        QVERIFY(m.reuseTokens < m.cachedTokens);

        // B: 250 prompt tokens, 20 to generate, context 256: ends with
        // Length after 7 tokens, alone in the engine.
        StepOutcome& b = s.submit(bPrompt, 20);
        QVERIFY(s.runUntilIdle());
        expectFitsAndEnds(b, 250, 20, context);
        QCOMPARE(s.status().refusals, uint64_t(0));
        expectCleanPools(s);
    }

    // Two requests sharing a prefix prefill it side by side (both admitted
    // in one step, before either cached it). When the first ends, its cached
    // copy must not stay pinned by the second, which alone needs the whole pool.
    void prefixComputedTwiceIsNotPinned() {
        const int32_t context = 256;
        SteppedScheduler s(issueOptions(context));
        const int32_t vocab = s.modelConfig().nVocab;
        std::mt19937_64 rng(17);
        const std::vector<int32_t> shared = randomTokens(rng, 30, vocab);
        StepOutcome& a = s.submit(concat(shared, randomTokens(rng, 10, vocab)), 2);
        StepOutcome& b = s.submit(concat(shared, randomTokens(rng, 210, vocab)), 40);
        QVERIFY(s.runUntilIdle());
        expectFitsAndEnds(a, 40, 2, context);
        expectFitsAndEnds(b, 240, 40, context);
        QCOMPARE(s.status().refusals, uint64_t(0));
        expectCleanPools(s);
    }

    // The issue's numbers scaled: prompts 5 to 11 tokens short of the
    // context with max_tokens 20, sharing a prefix, queued behind two shorter
    // requests that start together and then outgrow the pool while decoding
    // (the newer is preempted), with a cancel in between.
    void nearLimitPromptUnderPreemptionEndsWithLength() {
        const int32_t context = 256;
        SteppedScheduler s(issueOptions(context));
        const int32_t vocab = s.modelConfig().nVocab;
        std::mt19937_64 rng(18);
        const std::vector<int32_t> shared = randomTokens(rng, 120, vocab);
        std::vector<std::tuple<StepOutcome*, int32_t, int32_t>> keep;
        for (int i = 0; i < 2; ++i) keep.push_back({&s.submit(randomTokens(rng, 100, vocab), 120), 100, 120});
        uint64_t cancelId = 0;
        StepOutcome& victim = s.submit(concat(shared, randomTokens(rng, 60, vocab)), 30, &cancelId);
        for (int i = 0; i < 3; ++i) {
            const int32_t n = context - 5 - 3 * i;
            keep.push_back({&s.submit(concat(shared, randomTokens(rng, n - 120, vocab)), 20), n, 20});
        }
        for (int i = 0; i < 40; ++i) s.step();
        s.cancel(cancelId);
        QVERIFY(s.runUntilIdle());
        QCOMPARE(int(victim.terminal.kind), int(Event::Kind::Cancelled));
        for (auto& [o, n, maxTokens] : keep) expectFitsAndEnds(*o, n, maxTokens, context);
        QVERIFY2(s.status().preemptions > 0, "the interleaving needs preemptions");
        QCOMPARE(s.status().refusals, uint64_t(0));
        expectCleanPools(s);
    }

    // Thousands of interleavings: random pools at the context limit (page
    // sizes 1 to 16, the window pool at or just above its floor), 1 to 4
    // running, chunks of 8 to 64, near-limit prompts, shared prefixes,
    // requests arriving between any two steps, cancels at random points.
    // A prompt that fits never ends with an Error; one that does not is
    // refused at once as too long; nothing hangs; pools stay consistent.
    void randomInterleavingsNeverRefuseWhatFits() {
        const char* env = std::getenv("WEIR_NEVER_REFUSE_SCENARIOS");
        const int scenarios = env ? std::atoi(env) : 250;
        uint64_t requests = 0, steps = 0, preemptions = 0, deferrals = 0, cancels = 0, tooLong = 0, lengthEnds = 0;
        for (int scenario = 0; scenario < scenarios; ++scenario) {
            std::mt19937_64 rng(1000 + uint64_t(scenario));
            auto pick = [&](std::initializer_list<int32_t> v) { return *(v.begin() + rng() % v.size()); };
            const int32_t context = pick({64, 96, 128, 192});
            EngineOptions o = issueOptions(context);
            o.pageSize = pick({1, 1, 2, 4, 16});
            o.maxRunningRequests = 1 + int32_t(rng() % 4);
            o.prefillChunk = pick({8, 16, 32, 64});
            if (rng() % 3 == 0) {  // a little above the floor
                const kv::PoolPlan plan = kv::planPools(o, SteppedScheduler(o).modelConfig());
                o.swaTokens = plan.windowFloor.tokens + o.pageSize * int32_t(rng() % 3);
            }
            SteppedScheduler s(o);
            const int32_t vocab = s.modelConfig().nVocab;
            std::vector<std::vector<int32_t>> bases;
            for (int i = 0; i < 2; ++i)
                bases.push_back(randomTokens(rng, context / 4 + int32_t(rng() % uint64_t(context / 2)), vocab));

            struct Tracked {
                StepOutcome* out;
                uint64_t id;
                int32_t prompt, maxTokens;
                bool cancelled = false;
            };
            std::vector<Tracked> live;
            const int total = 8 + int(rng() % 8);
            int submitted = 0;
            int64_t guard = 0;
            auto outstanding = [&] {
                int n = 0;
                for (auto& t : live) n += !t.out->ended();
                return n;
            };
            while (submitted < total || outstanding() > 0) {
                QVERIFY2(++guard < 20000, ("scenario " + std::to_string(scenario) + " does not finish").c_str());
                // Arrivals: keep the wait queue within --max-waiting.
                for (int a = int(rng() % 3); a > 0 && submitted < total && outstanding() < 8; --a) {
                    int32_t n = rng() % 5 < 2 ? context - int32_t(rng() % 9) : 2 + int32_t(rng() % uint64_t(context - 1));
                    if (rng() % 20 == 0) n = context + 1 + int32_t(rng() % 8);  // cannot fit: refused
                    std::vector<int32_t> prompt;
                    if (rng() % 3 != 0) {
                        const auto& base = bases[rng() % bases.size()];
                        prompt.assign(base.begin(), base.begin() + std::min<int32_t>(n, int32_t(base.size())));
                    } else {
                        prompt = {2};
                    }
                    for (int32_t t : randomTokens(rng, n - int32_t(prompt.size()) + 1, vocab))
                        if (int32_t(prompt.size()) < n) prompt.push_back(t);
                    const int32_t maxTokens = 1 + int32_t(rng() % uint64_t(context / 2));
                    Tracked t{nullptr, 0, n, maxTokens};
                    t.out = &s.submit(std::move(prompt), maxTokens, &t.id);
                    live.push_back(t);
                    ++submitted;
                }
                if (!live.empty() && rng() % 16 == 0) {
                    Tracked& t = live[rng() % live.size()];
                    if (!t.out->ended()) {
                        s.cancel(t.id);
                        t.cancelled = true;
                    }
                }
                s.step();
            }
            for (const Tracked& t : live) {
                const StepOutcome& out = *t.out;
                const std::string what = "scenario " + std::to_string(scenario) + " (context " +
                                         std::to_string(context) + ", page " + std::to_string(o.pageSize) +
                                         ", running " + std::to_string(o.maxRunningRequests) + ", chunk " +
                                         std::to_string(o.prefillChunk) + "), prompt " + std::to_string(t.prompt) +
                                         ", max_tokens " + std::to_string(t.maxTokens) + ": " + describe(out);
                QVERIFY2(out.terminals == 1 && out.afterTerminal == 0, what.c_str());
                if (t.prompt > context) {
                    QVERIFY2(out.terminal.kind == Event::Kind::Error && out.terminal.error == ErrorCode::TooLong,
                             what.c_str());
                    ++tooLong;
                    continue;
                }
                QVERIFY2(out.terminal.kind != Event::Kind::Error, what.c_str());
                if (out.terminal.kind == Event::Kind::Cancelled) {
                    QVERIFY2(t.cancelled, what.c_str());
                    ++cancels;
                    continue;
                }
                QCOMPARE(int(out.terminal.finish), int(FinishReason::Length));
                QVERIFY2(int32_t(out.tokens.size()) == std::min(t.maxTokens, context + 1 - t.prompt), what.c_str());
                lengthEnds += t.maxTokens > context + 1 - t.prompt;
            }
            const CacheStatus st = s.status();
            requests += live.size();
            steps += uint64_t(s.steps());
            preemptions += st.preemptions;
            deferrals += st.deferrals;
            QCOMPARE(st.refusals, uint64_t(std::count_if(live.begin(), live.end(),
                                                         [&](const Tracked& t) { return t.prompt > context; })));
            expectCleanPools(s);
            if (QTest::currentTestFailed()) return;
        }
        qInfo("%d scenarios: %llu requests, %llu steps, %llu preemptions, %llu deferrals, %llu cancelled, "
              "%llu refused as too long, %llu stopped by the context",
              scenarios, (unsigned long long)requests, (unsigned long long)steps, (unsigned long long)preemptions,
              (unsigned long long)deferrals, (unsigned long long)cancels, (unsigned long long)tooLong,
              (unsigned long long)lengthEnds);
        QVERIFY(preemptions > 0);
        QVERIFY(lengthEnds > 0);
    }
};

QTEST_GUILESS_MAIN(NeverRefuseTest)
#include "never_refuse_test.moc"
