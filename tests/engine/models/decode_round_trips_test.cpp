// How many times a decode step hands work to the pool's threads and waits for
// all of them (ThreadPool::processCounters): each round trip costs a hand-off
// and the slowest thread's lag, which grows with the thread count. A decode
// step of a layer needs five: the q/k/v projections with the per-token work
// before attention (head norms, RoPE, cache stores; one job), attention, the
// output projection, gate/up with the activation (one job) and the down
// projection; the output head adds one. In a step of many sequences of a
// wider model each residual add with the norms around it is enough for the
// pool too (one job each, seven per layer, and the embedding and first norm
// once). The counts are exact for a given model and thread count, so this is
// a plain bound, not a timing.
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

using namespace weir;

static weirtest::TempDir dir_;

namespace {

constexpr uint64_t kRoundTripsPerLayer = 5;

// Round trips of one decode step of `sequences` sequences, each after a
// short prompt, on the tests' two-thread CPU backend.
uint64_t decodeStepRoundTrips(const SyntheticModelSpec& spec, int32_t sequences) {
    const std::string path = dir_.filePath(spec.architecture + "_round_trips.gguf");
    writeSyntheticModel(spec, path);
    auto model = loadModel(gguf::GgufFile::open(path), weirtest::cpuBackend(2));
    const ModelConfig& cfg = model->config();
    constexpr int32_t kPrompt = 12;
    SimpleKvCache kv(cfg, sequences, kPrompt + 1, 16);
    Batch b;
    for (int32_t s = 0; s < sequences; ++s)
        for (int32_t i = 0; i < kPrompt; ++i) b.add(3 + (7 * i + s) % 200, s, i, i + 1 == kPrompt);
    std::vector<float> logits;
    model->forward(b, kv, logits);
    b.tokens.clear();
    for (int32_t s = 0; s < sequences; ++s) b.add(5 + s, s, kPrompt, true);
    const uint64_t before = kernels::ThreadPool::processCounters().roundTrips;
    model->forward(b, kv, logits);
    const uint64_t after = kernels::ThreadPool::processCounters().roundTrips;
    REQUIRE_EQ(logits.size(), size_t(sequences) * size_t(cfg.nVocab));
    return after - before;
}

void checkBound(uint64_t trips, const SyntheticModelSpec& spec, uint64_t perLayer = kRoundTripsPerLayer, uint64_t perStep = 1) {
    const uint64_t bound = perLayer * uint64_t(spec.nLayer) + perStep;
    // Every matrix has more than one tile of rows: each job runs on both threads.
    CHECK_MSG(trips >= uint64_t(spec.nLayer), std::to_string(trips) + " round trips: the pool's counters missed the step");
    CHECK_MSG(trips <= bound, std::to_string(trips) + " round trips in a decode step of " + std::to_string(spec.nLayer) +
                                  " layers, at most " + std::to_string(bound) + " expected");
}

// Gemma 3 270M's shape in small: four query heads over one KV head.
SyntheticModelSpec gemmaSpec() {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.nLayer = 3;
    spec.nHeadKv = 1;
    spec.seed = 5;
    return spec;
}

} // namespace

WEIR_TEST_SUITE_SETUP(DecodeRoundTrips) {
    REQUIRE(dir_.isValid());
}

WEIR_TEST(DecodeRoundTrips, gemma3StepOfOneSequenceTakesFivePerLayerAndOneForTheHead) {
    const SyntheticModelSpec spec = gemmaSpec();
    const uint64_t trips = decodeStepRoundTrips(spec, 1);
    checkBound(trips, spec);
}

WEIR_TEST(DecodeRoundTrips, gemma3StepOfFourSequences) {
    const SyntheticModelSpec spec = gemmaSpec();
    const uint64_t trips = decodeStepRoundTrips(spec, 4);
    checkBound(trips, spec);
}

// Close to Gemma 3 270M's widths (query heads of 256 over one KV head, 2048
// FFN values, 768 instead of 640 model values): at 16 sequences the head
// norms with RoPE and the cache stores, and the GeGLU, have enough values
// for the pool. A step that ran them as jobs of their own took seven round
// trips per layer, and six with the per-token work one job after the q/k/v
// projections' instead of inside it.
WEIR_TEST(DecodeRoundTrips, gemma3StepOfSixteenSequencesNearGemma270mWidths) {
    SyntheticModelSpec spec = gemmaSpec();
    spec.nEmbd = 768;
    spec.nHead = 3;
    spec.nFf = 2048;
    const uint64_t trips = decodeStepRoundTrips(spec, 16);
    checkBound(trips, spec);
}

// 1024 model values: at 16 sequences the row norms go to the pool as well.
// A step with a job per norm and per head-norm kind took twelve per layer,
// and eight with the per-token work after the q/k/v projections' job.
WEIR_TEST(DecodeRoundTrips, gemma3StepOfSixteenSequencesOfAWiderModel) {
    SyntheticModelSpec spec = gemmaSpec();
    spec.nEmbd = 1024;
    spec.nFf = 2048;
    const uint64_t trips = decodeStepRoundTrips(spec, 16);
    checkBound(trips, spec, 7, 3);
}

WEIR_TEST(DecodeRoundTrips, llamaStep) {
    SyntheticModelSpec spec;  // llama: no head norms, SwiGLU
    spec.nLayer = 3;
    const uint64_t trips = decodeStepRoundTrips(spec, 1);
    checkBound(trips, spec);
}

// No head norms: at 16 sequences of 768 model values RoPE and the cache
// stores go inside the q/k/v projections' job too (six per layer when they
// were a job after it).
WEIR_TEST(DecodeRoundTrips, llamaStepOfSixteenSequences) {
    SyntheticModelSpec spec;
    spec.nLayer = 3;
    spec.nEmbd = 768;
    spec.nHead = 3;
    spec.nHeadKv = 1;
    const uint64_t trips = decodeStepRoundTrips(spec, 16);
    checkBound(trips, spec);
}
