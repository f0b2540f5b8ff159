// The step profile (weir/step_profile.h) on a real forward pass of a small
// Gemma 3 on two threads: off, it records nothing; on, each op kind gets the
// calls the layer sequence makes, the ops fit inside the pass, the pool's
// timed round trips are the ones its counters saw, and its thread time is
// split into computing and waiting without inventing any. Times are only
// compared with each other, never with a figure.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/models/synthetic_model.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/engine/test_backend.h"
#include "weir/step_profile.h"

using namespace weir;

static weirtest::TempDir dir_;

namespace {

constexpr int32_t kLayers = 3;
constexpr int32_t kPrompt = 12;

struct Pass {
    StepProfile change;
    uint64_t roundTrips = 0;  // ThreadPool::processCounters over the same pass
};

// A prompt of kPrompt tokens for `sequences` sequences, then one decode step
// of each, the step's profile (profiling `on`) returned.
Pass profiledDecodeStep(int32_t sequences, bool on) {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.nLayer = kLayers;
    spec.nHeadKv = 1;
    spec.seed = 9;
    const std::string path = dir_.filePath("step_profile.gguf");
    writeSyntheticModel(spec, path);
    auto model = loadModel(gguf::GgufFile::open(path), weirtest::cpuBackend(2));
    SimpleKvCache kv(model->config(), sequences, kPrompt + 1, 16);
    Batch b;
    for (int32_t s = 0; s < sequences; ++s)
        for (int32_t i = 0; i < kPrompt; ++i) b.add(3 + (5 * i + s) % 200, s, i, i + 1 == kPrompt);
    std::vector<float> logits;
    model->forward(b, kv, logits);
    b.tokens.clear();
    for (int32_t s = 0; s < sequences; ++s) b.add(7 + s, s, kPrompt, true);
    setStepProfiling(on);
    const StepProfile before = stepProfile();
    const uint64_t trips = kernels::ThreadPool::processCounters().roundTrips;
    model->forward(b, kv, logits);
    Pass p{stepProfile() - before, kernels::ThreadPool::processCounters().roundTrips - trips};
    setStepProfiling(false);
    return p;
}

uint64_t opNs(const StepProfile& p) {
    uint64_t sum = 0;
    for (int i = 0; i < kStepOps; ++i) sum += p.opNs[i];
    return sum;
}

} // namespace

WEIR_TEST_SUITE_SETUP(StepProfile) {
    REQUIRE(dir_.isValid());
}

WEIR_TEST(StepProfile, offRecordsNothing) {
    const Pass p = profiledDecodeStep(1, false);
    CHECK_EQ(p.change.steps, uint64_t(0));
    CHECK_EQ(p.change.forwardNs, uint64_t(0));
    CHECK_EQ(opNs(p.change), uint64_t(0));
    CHECK_EQ(p.change.pool.roundTrips, uint64_t(0));
    CHECK_EQ(p.change.pool.busyNs, uint64_t(0));
    CHECK_MSG(p.roundTrips > 0, "the pass ran no round trip: the pool's counters missed it");
}

WEIR_TEST(StepProfile, aDecodeStepIsSplitByOpKind) {
    const Pass p = profiledDecodeStep(1, true);
    const StepProfile& d = p.change;
    REQUIRE_EQ(d.steps, uint64_t(1));
    // Per layer: q/k/v with the head norms, RoPE and the cache stores, the
    // output projection, gate/up with the activation, down; one attention.
    CHECK_EQ(d.opCalls[int(StepOp::Projections)], uint64_t(4 * kLayers));
    CHECK_EQ(d.opCalls[int(StepOp::OutputHead)], uint64_t(1));
    CHECK_EQ(d.opCalls[int(StepOp::Attention)], uint64_t(kLayers));
    CHECK_EQ(d.opCalls[int(StepOp::RopeAndStore)], uint64_t(0));
    CHECK_EQ(d.opCalls[int(StepOp::Embed)], uint64_t(1));
    // The first norm, then two residual norms per layer.
    CHECK_EQ(d.opCalls[int(StepOp::Norms)], uint64_t(1 + 2 * kLayers));
    CHECK_EQ(d.opCalls[int(StepOp::Gather)], uint64_t(0));
    for (StepOp op : {StepOp::Projections, StepOp::OutputHead, StepOp::Attention})
        CHECK_MSG(d.opNs[int(op)] > 0, std::string(stepOpName(op)) + " took no time");
    CHECK_MSG(opNs(d) <= d.forwardNs, std::to_string(opNs(d)) + " ns in ops, " + std::to_string(d.forwardNs) + " in the pass");
}

// Several sequences: every norm is held until the matmul that reads its rows
// and runs inside that matmul's job (CpuBackend), so none is an op of its own.
WEIR_TEST(StepProfile, manySequencesNormInsideTheirMatmuls) {
    const Pass p = profiledDecodeStep(16, true);
    const StepProfile& d = p.change;
    REQUIRE_EQ(d.steps, uint64_t(1));
    CHECK_EQ(d.opCalls[int(StepOp::Norms)], uint64_t(0));
    CHECK_EQ(d.opCalls[int(StepOp::Projections)], uint64_t(4 * kLayers));
    CHECK_EQ(d.opCalls[int(StepOp::OutputHead)], uint64_t(1));
}

WEIR_TEST(StepProfile, thePoolsRoundTripsAreAccountedFor) {
    for (int32_t sequences : {1, 16}) {
        const Pass p = profiledDecodeStep(sequences, true);
        const PoolTiming& t = p.change.pool;
        const std::string at = std::to_string(sequences) + " sequences: ";
        CHECK_MSG(t.roundTrips == p.roundTrips,
                  at + std::to_string(t.roundTrips) + " timed round trips, the counters saw " + std::to_string(p.roundTrips));
        // Every round trip happens inside an op, so inside the pass.
        CHECK_MSG(t.wallNs <= opNs(p.change), at + "round trips took longer than the ops that made them");
        CHECK_EQ(t.threadNs, t.wallNs * 2);  // two threads held for each
        CHECK_MSG(t.busyNs > 0 && t.busyNs <= t.threadNs,
                  at + std::to_string(t.busyNs) + " ns busy of " + std::to_string(t.threadNs) + " ns of thread time");
        // One worker: at most one wake-up per round trip (none where the
        // caller took every chunk first), each inside its round trip.
        CHECK_MSG(t.wakes <= t.roundTrips, at + std::to_string(t.wakes) + " wake-ups");
        CHECK_MSG(t.wakeNs <= t.wallNs && t.tailNs <= t.wallNs, at + "a wait outlasted its round trips");
        // Per op kind: its round trips lie inside it, and together they are all of them.
        const StepProfile& d = p.change;
        uint64_t wall = 0, thread = 0, busy = 0;
        for (int i = 0; i < kStepOps; ++i) {
            const std::string op = at + stepOpName(StepOp(i)) + ": ";
            CHECK_MSG(d.opPoolWallNs[i] <= d.opNs[i], op + "its round trips outlasted it");
            CHECK_MSG(d.opPoolThreadNs[i] == 2 * d.opPoolWallNs[i], op + "two threads held for each round trip");
            CHECK_MSG(d.opPoolBusyNs[i] <= d.opPoolThreadNs[i], op + "busier than its thread time");
            wall += d.opPoolWallNs[i];
            thread += d.opPoolThreadNs[i];
            busy += d.opPoolBusyNs[i];
        }
        CHECK_EQ(wall, t.wallNs);
        CHECK_EQ(thread, t.threadNs);
        CHECK_EQ(busy, t.busyNs);
        CHECK_MSG(d.opPoolWallNs[int(StepOp::Projections)] > 0 && d.opPoolWallNs[int(StepOp::OutputHead)] > 0,
                  at + "the matmuls made no round trip");
    }
}
