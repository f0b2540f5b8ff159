// The CPU backend's flash decoding: with more threads than query heads, the
// query of a token alone in its sequence's batch (a decode step, a verify
// row) attends in parts of its positions on several threads, merged. When it
// splits; that a split step gives an unsplit one's logits within rounding;
// and that a token's bits still depend on nothing else in its batch.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/cpu_backend.h"
#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/models/synthetic_model.h"
#include "tests/engine/test_backend.h"

using namespace weir;

static weirtest::TempDir dir_;

WEIR_TEST_SUITE_SETUP(CpuAttentionParts) {
    REQUIRE(dir_.isValid());
}

WEIR_TEST(CpuAttentionParts, splitsWhenThreadsOutnumberHeadsAndRangesAreLong) {
    // No more threads than query heads: attention as a whole, as llama.cpp's.
    CHECK_EQ(CpuBackend::attentionParts(4, 2, 100000), int64_t(1));
    CHECK_EQ(CpuBackend::attentionParts(4, 4, 100000), int64_t(1));
    CHECK_EQ(CpuBackend::attentionParts(1, 1, 100000), int64_t(1));
    // Gemma 3 270M (4 heads) and SmolLM2 135M (9) decoding on 16 threads.
    CHECK_EQ(CpuBackend::attentionParts(4, 16, 4096), int64_t(4));
    CHECK_EQ(CpuBackend::attentionParts(9, 16, 4096), int64_t(2));
    // Parts of at least 128 positions: a short context stays whole.
    CHECK_EQ(CpuBackend::attentionParts(4, 16, 300), int64_t(2));
    CHECK_EQ(CpuBackend::attentionParts(4, 16, 200), int64_t(1));
}

namespace {

// Logits of a decode step after a `prompt`-token prompt on `backend`.
std::vector<float> decodeLogits(const std::string& path, Backend& backend, int32_t prompt, KvDtype dtype) {
    auto model = loadModel(gguf::GgufFile::open(path), backend);
    const ModelConfig& cfg = model->config();
    SimpleKvCache kv(cfg, 1, prompt + 1, 16, dtype);
    Batch b;
    for (int32_t i = 0; i < prompt; ++i) b.add(3 + (11 * i) % 250, 0, i, i + 1 == prompt);
    std::vector<float> logits;
    model->forward(b, kv, logits);
    b.tokens.clear();
    b.add(7, 0, prompt, true);
    model->forward(b, kv, logits);
    return logits;
}

} // namespace

WEIR_TEST(CpuAttentionParts, aSplitDecodeStepGivesTheWholeStepsLogits) {
    // Gemma 3 in small: four query heads over one KV head; layer 2 attends
    // globally (the others see a 16-position window and stay whole).
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.nLayer = 3;
    spec.nHeadKv = 1;
    spec.seed = 9;
    const std::string path = dir_.filePath("gemma3_parts.gguf");
    writeSyntheticModel(spec, path);
    constexpr int32_t kPrompt = 400;
    // Two threads: no split. Eight: each head's query in two parts of the 401
    // positions of the global layer.
    REQUIRE_EQ(CpuBackend::attentionParts(4, 8, kPrompt + 1), int64_t(2));
    // An f32 cache leaves only the merge's float rounding (which the output
    // projection's 8-bit activations mostly absorb); an f16 one also rounds
    // each part's value sums to f16 where the whole rounds one sum.
    for (const auto [dtype, tolerance] : {std::pair{KvDtype::F32, 1e-5}, std::pair{KvDtype::F16, 3e-3}}) {
        const std::vector<float> whole = decodeLogits(path, weirtest::cpuBackend(2), kPrompt, dtype);
        const std::vector<float> split = decodeLogits(path, weirtest::cpuBackend(8), kPrompt, dtype);
        REQUIRE_EQ(whole.size(), split.size());
        double worst = 0, spread = 0;
        for (size_t i = 0; i < whole.size(); ++i) {
            worst = std::max(worst, std::fabs(double(whole[i]) - split[i]));
            spread = std::max(spread, std::fabs(double(whole[i])));
        }
        std::printf("  %s cache: largest logit difference %.3g (logits up to %.3g)\n", kvDtypeName(dtype), worst, spread);
        CHECK_MSG(worst <= tolerance * spread, std::string(kvDtypeName(dtype)) + " cache: split attention moved a logit by " +
                                                   std::to_string(worst));
        CHECK_EQ(std::max_element(split.begin(), split.end()) - split.begin(),
                 std::max_element(whole.begin(), whole.end()) - whole.begin());
    }
}

namespace {

SyntheticModelSpec smallGemma() {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.nLayer = 3;
    spec.nHeadKv = 1;
    spec.seed = 9;
    return spec;
}

bool sameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

} // namespace

// Speculative decoding's promise: verify rows (BatchToken::alone) give the
// bits of the decode steps they stand for, split or not; and a decode token
// next to another sequence's prompt chunk gives its bits alone.
WEIR_TEST(CpuAttentionParts, verifyRowsAndMixedStepsKeepTheDecodeStepsBits) {
    const std::string path = dir_.filePath("gemma3_parts_rows.gguf");
    writeSyntheticModel(smallGemma(), path);
    auto model = loadModel(gguf::GgufFile::open(path), weirtest::cpuBackend(8));
    const ModelConfig& cfg = model->config();
    const size_t V = size_t(cfg.nVocab);
    constexpr int32_t kPrompt = 300, kSteps = 3;
    REQUIRE_EQ(CpuBackend::attentionParts(4, 8, kPrompt + 1), int64_t(2));
    auto prefill = [&](SimpleKvCache& kv, int32_t seq) {
        Batch b;
        for (int32_t i = 0; i < kPrompt; ++i) b.add(3 + (13 * i + seq) % 250, seq, i, i + 1 == kPrompt);
        std::vector<float> logits;
        model->forward(b, kv, logits);
    };
    const int32_t next[kSteps] = {17, 42, 99};

    // Plain decode steps.
    std::vector<float> steps;
    {
        SimpleKvCache kv(cfg, 2, kPrompt + kSteps, 16);
        prefill(kv, 0);
        for (int32_t s = 0; s < kSteps; ++s) {
            Batch b;
            b.add(next[s], 0, kPrompt + s, true);
            std::vector<float> logits;
            model->forward(b, kv, logits);
            steps.insert(steps.end(), logits.begin(), logits.end());
        }
    }
    // The same tokens as one verify step.
    {
        SimpleKvCache kv(cfg, 2, kPrompt + kSteps, 16);
        prefill(kv, 0);
        Batch b;
        for (int32_t s = 0; s < kSteps; ++s) b.add(next[s], 0, kPrompt + s, true, /*alone=*/true);
        std::vector<float> logits;
        model->forward(b, kv, logits);
        REQUIRE_EQ(logits.size(), steps.size());
        for (int32_t s = 0; s < kSteps; ++s)
            CHECK_MSG(sameBits(logits.data() + size_t(s) * V, steps.data() + size_t(s) * V, V),
                      "verify row " + std::to_string(s) + " differs from its decode step");
    }
    // The first step next to another sequence's prompt.
    {
        SimpleKvCache kv(cfg, 2, kPrompt + kSteps, 16);
        prefill(kv, 0);
        Batch b;
        b.add(next[0], 0, kPrompt, true);
        for (int32_t i = 0; i < 40; ++i) b.add(5 + i, 1, i, i == 39);
        std::vector<float> logits;
        model->forward(b, kv, logits);
        REQUIRE_EQ(logits.size(), 2 * V);
        CHECK_MSG(sameBits(logits.data(), steps.data(), V), "the decode token differs next to a prompt chunk");
    }
}

// A prompt's attention tiles are dealt to the threads' jobs by their cost
// (kernels/cpu/longest_first.h), and how many tokens and heads a tile holds
// depends on the thread count; each query's bits must not. Two prompts in
// one step (each token sees its own sequence's keys) at 1, 3 and 16 threads.
WEIR_TEST(CpuAttentionParts, aPromptsBitsDoNotDependOnTheThreads) {
    const std::string path = dir_.filePath("gemma3_parts_prompt.gguf");
    writeSyntheticModel(smallGemma(), path);
    constexpr int32_t kLong = 300, kShort = 130;
    auto prompts = [&](Backend& backend) {
        auto model = loadModel(gguf::GgufFile::open(path), backend);
        SimpleKvCache kv(model->config(), 2, kLong + 1, 16);
        Batch b;
        for (int32_t i = 0; i < kLong; ++i) b.add(3 + (13 * i) % 250, 0, i, i % 23 == 0 || i + 1 == kLong);
        for (int32_t i = 0; i < kShort; ++i) b.add(4 + (7 * i) % 250, 1, i, i % 17 == 0 || i + 1 == kShort);
        std::vector<float> logits;
        model->forward(b, kv, logits);
        return logits;  // (a decode step after it would split at 16 threads: the test above)
    };
    const std::vector<float> one = prompts(weirtest::cpuBackend(1));
    REQUIRE(!one.empty());
    for (const int threads : {3, 16}) {
        const std::vector<float> many = prompts(weirtest::cpuBackend(threads));
        REQUIRE_EQ(many.size(), one.size());
        CHECK_MSG(sameBits(many.data(), one.data(), one.size()),
                  std::to_string(threads) + " threads changed a prompt's logits");
    }
}
