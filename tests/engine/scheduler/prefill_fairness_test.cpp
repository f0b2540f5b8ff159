// Issue 16, item 8: one step's prefill budget is shared by every request that
// wants to prefill, so several long prompts start together and a short prompt
// behind a long one gets its first token without waiting for all of it. The
// scheduler is stepped by hand, so "together" and "first" are step counts,
// not timings.
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include "engine/scheduler/prefill_share.h"
#include "tests/engine/scheduler/stepped_scheduler.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;
using weir::test::SteppedScheduler;
using weir::test::StepOutcome;

namespace {

std::vector<int32_t> randomTokens(std::mt19937_64& rng, int32_t n, int32_t vocab) {
    std::vector<int32_t> p{2};
    for (int32_t i = 1; i < n; ++i) p.push_back(262 + int32_t(rng() % uint64_t(vocab - 262)));
    return p;
}

int64_t served(const std::vector<int32_t>& demands, int32_t cap) {
    int64_t sum = 0;
    for (int32_t d : demands) sum += std::min(d, cap);
    return sum;
}

} // namespace

class PrefillFairnessTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string model_;

    EngineOptions options() const {
        EngineOptions o;
        o.modelPath = model_;
        o.threads = 1;
        o.pageSize = 16;
        o.maxRunningRequests = 4;
        o.prefillChunk = 64;
        o.maxContext = 2048;
        o.checkIntegrityEveryStep = true;
        return o;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("tiny-gemma3.gguf").toStdString();
        test::writeTinyGemma3(model_);
    }

    void shareIsMaxMinFair() {
        // The largest cap whose total fits, short demands served whole.
        const std::vector<std::vector<int32_t>> cases = {
            {10, 100, 100}, {300, 300, 300, 300}, {5, 6}, {1, 1, 1, 500}, {63, 64, 65}, {7}};
        for (const auto& d : cases) {
            const int32_t cap = fairPrefillShare(d, 64);
            QVERIFY(cap >= 1);
            QVERIFY(served(d, cap) <= 64);
            const int32_t largest = *std::max_element(d.begin(), d.end());
            if (cap < largest) QVERIFY2(served(d, cap + 1) > 64, "a larger cap would still fit");
        }
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{10, 100, 100}, 64), 27);
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{300, 300, 300, 300}, 64), 16);
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{5, 6}, 64), 6);
        // More requests than tokens: one each, the budget decides who goes.
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{100, 100, 100}, 2), 1);
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{}, 64), 0);
        QCOMPARE(fairPrefillShare(std::vector<int32_t>{5}, 0), 0);
    }

    void longPromptsStartTogether() {
        SteppedScheduler s(options());
        std::mt19937_64 rng(81);
        std::vector<StepOutcome*> out;
        for (int i = 0; i < 4; ++i) out.push_back(&s.submit(randomTokens(rng, 300, s.modelConfig().nVocab), 4));
        s.step();
        // All four run from the first step, each prefilling a quarter of the budget.
        QCOMPARE(s.status().running, 4);
        QCOMPARE(s.status().waiting, 0);
        QVERIFY(s.runUntilIdle());
        int64_t first = INT64_MAX, last = 0;
        for (StepOutcome* o : out) {
            QCOMPARE(int(o->terminal.kind), int(Event::Kind::Done));
            first = std::min(first, o->firstTokenStep);
            last = std::max(last, o->firstTokenStep);
        }
        // 4 x 300 tokens at 64 a step: everyone's first token within a step of the others.
        QVERIFY2(last - first <= 1, ("first tokens at steps " + std::to_string(first) + ".." +
                                     std::to_string(last)).c_str());
        QCOMPARE(s.status().violations, uint64_t(0));
    }

    void shortPromptIsNotStuckBehindALongOne() {
        SteppedScheduler s(options());
        std::mt19937_64 rng(82);
        StepOutcome& longOne = s.submit(randomTokens(rng, 1000, s.modelConfig().nVocab), 4);
        s.step();  // the long prompt is already prefilling when the short one arrives
        StepOutcome& shortOne = s.submit(randomTokens(rng, 20, s.modelConfig().nVocab), 4);
        QVERIFY(s.runUntilIdle());
        QCOMPARE(int(longOne.terminal.kind), int(Event::Kind::Done));
        QCOMPARE(int(shortOne.terminal.kind), int(Event::Kind::Done));
        // 20 tokens fit in the step after it arrives; the long prompt needs ~16 steps.
        QCOMPARE(shortOne.firstTokenStep, int64_t(2));
        QVERIFY(longOne.firstTokenStep >= 16);
        QCOMPARE(s.status().violations, uint64_t(0));
    }

    void sharedPrefixIsComputedOnce() {
        // Sharing the budget must not make two requests with one long system
        // prompt compute it side by side: the second waits for the first to
        // cache it, then attaches it.
        SteppedScheduler s(options());
        std::mt19937_64 rng(83);
        const int32_t vocab = s.modelConfig().nVocab;
        const std::vector<int32_t> system = randomTokens(rng, 300, vocab);
        std::vector<int32_t> a = system, b = system;
        for (int32_t t : randomTokens(rng, 20, vocab)) a.push_back(t);
        for (int32_t t : randomTokens(rng, 20, vocab)) b.push_back(t);
        StepOutcome& first = s.submit(a, 4);
        StepOutcome& second = s.submit(b, 4);
        StepOutcome& other = s.submit(randomTokens(rng, 200, vocab), 4);
        QVERIFY(s.runUntilIdle());
        for (StepOutcome* o : {&first, &second, &other}) QCOMPARE(int(o->terminal.kind), int(Event::Kind::Done));
        QCOMPARE(first.terminal.usage.cachedPromptTokens, 0);
        QVERIFY2(second.terminal.usage.cachedPromptTokens >= 288,
                 std::to_string(second.terminal.usage.cachedPromptTokens).c_str());
        // The unrelated prompt did not wait for the shared one.
        QVERIFY(other.firstTokenStep < second.firstTokenStep);
        QCOMPARE(s.status().violations, uint64_t(0));
    }
};

QTEST_GUILESS_MAIN(PrefillFairnessTest)
#include "prefill_fairness_test.moc"
