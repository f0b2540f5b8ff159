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

#include <random>

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

    // The issue's numbers scaled: a prompt 5 tokens short of the context,
    // max_tokens 20, while other near-limit requests sharing its prefix are
    // admitted, preempted and cancelled around it.
    void nearLimitPromptUnderPreemptionEndsWithLength() {
        const int32_t context = 256;
        SteppedScheduler s(issueOptions(context));
        const int32_t vocab = s.modelConfig().nVocab;
        std::mt19937_64 rng(18);
        const std::vector<int32_t> shared = randomTokens(rng, 120, vocab);
        std::vector<std::pair<StepOutcome*, int32_t>> keep;
        uint64_t cancelId = 0;
        StepOutcome& victim = s.submit(concat(shared, randomTokens(rng, 120, vocab)), 30, &cancelId);
        for (int i = 0; i < 3; ++i) {
            const int32_t n = context - 5 - 3 * i;
            keep.push_back({&s.submit(concat(shared, randomTokens(rng, n - 120, vocab)), 20), n});
        }
        for (int i = 0; i < 6; ++i) s.step();
        s.cancel(cancelId);
        QVERIFY(s.runUntilIdle());
        QCOMPARE(int(victim.terminal.kind), int(Event::Kind::Cancelled));
        for (auto& [o, n] : keep) expectFitsAndEnds(*o, n, 20, context);
        QVERIFY2(s.status().preemptions > 0, "the interleaving needs preemptions");
        QCOMPARE(s.status().refusals, uint64_t(0));
        expectCleanPools(s);
    }
};

QTEST_GUILESS_MAIN(NeverRefuseTest)
#include "never_refuse_test.moc"
