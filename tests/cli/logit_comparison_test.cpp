// compare-devices' verdict on logits: greedy choices compared per step, a
// differing choice excused only where the reference's top two were within
// the tie margin, the relative error, and non-finite logits a failure.
#include "tests/support/weir_test.h"

#include <cmath>
#include <vector>

#include "app/cli/logit_comparison.h"
#include "weir/base/error.h"

using namespace weir::cli;

WEIR_TEST(LogitComparison, sameChoicesAndTheErrorRelativeToTheLargestLogit) {
    const std::vector<float> ref = {1.0f, 8.0f, -4.0f, 2.0f};
    const std::vector<float> other = {1.1f, 7.9f, -4.0f, 2.0f};
    const LogitStep s = compareLogits(ref, other);
    CHECK_EQ(s.argmaxRef, 1);
    CHECK_EQ(s.argmaxOther, 1);
    CHECK_EQ(s.top1Ref, 8.0f);
    CHECK_EQ(s.top2Ref, 2.0f);
    CHECK_NEAR(s.relError, 0.1 / 8.0, 1e-6);
    CHECK(!s.identical);
    CHECK(compareLogits(ref, ref).identical);
    CHECK_NEAR(s.relMargin(), 6.0 / 8.0, 1e-9);
    CHECK_THROWS(weir::Error, compareLogits(ref, std::vector<float>(3)));
}

WEIR_TEST(LogitComparison, aFlipIsExcusedOnlyAtANearTie) {
    PromptComparison pc(1e-2);
    // Step 0 agrees; step 1 flips a near-tie (10.00 vs 9.95: 0.5%); step 2
    // flips a clear choice (10 vs 8).
    pc.add(compareLogits(std::vector<float>{0, 10, 3}, std::vector<float>{0, 10, 3}));
    pc.add(compareLogits(std::vector<float>{10.0f, 9.95f, 0}, std::vector<float>{9.9f, 9.96f, 0}));
    CHECK_EQ(pc.firstDivergence(), 1);
    CHECK_EQ(pc.hardDivergences(), 0);
    CHECK(pc.pass());
    CHECK(pc.divergences().at(0).nearTie);
    CHECK_EQ(pc.divergences().at(0).tokenRef, 0);
    CHECK_EQ(pc.divergences().at(0).tokenOther, 1);
    pc.add(compareLogits(std::vector<float>{10, 8, 0}, std::vector<float>{7, 8, 0}));
    CHECK_EQ(pc.hardDivergences(), 1);
    CHECK(!pc.pass());
    CHECK_EQ(pc.steps(), 3);
    CHECK_NEAR(pc.maxRelError(), 0.3, 1e-6);
    CHECK(pc.toJson().find("\"first_divergence\":1") != std::string::npos);
    CHECK(pc.toJson().find("\"pass\":false") != std::string::npos);
}

WEIR_TEST(LogitComparison, nonFiniteLogitsFail) {
    PromptComparison pc(1e-2);
    pc.add(compareLogits(std::vector<float>{0, 10, 3}, std::vector<float>{0, NAN, 3}));
    CHECK(!pc.allFinite());
    CHECK(!pc.pass());
    PromptComparison inf(1e-2);
    inf.add(compareLogits(std::vector<float>{0, 10, 3}, std::vector<float>{0, 10, INFINITY}));
    CHECK(!inf.pass());
}
