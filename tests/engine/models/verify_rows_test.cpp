// A speculative verify step's rows (BatchToken::alone) give bit for bit the
// logits of the decode steps they stand for, on the real models: the
// property that makes speculative decoding's output the one plain decoding
// gives. Several rows of one sequence batched without `alone` may round
// differently (the K-quant kernels follow llama.cpp's batch-size choices).
#include "tests/support/weir_test.h"

#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "tests/engine/grammar/real_models.h"
#include "tests/engine/test_backend.h"

using namespace weir;

namespace {

void checkModel(const test::RealModel& m) {
    if (!std::filesystem::exists(m.path)) SKIP(m.name + " not present");
    auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(m.path));
    std::unique_ptr<Model> model = loadModel(file, weirtest::cpuBackend());
    const ModelConfig& c = model->config();
    const std::vector<int32_t> prompt{2, 651, 6037, 576, 5611, 603, 651, 6037, 576};
    const std::vector<int32_t> next{5611, 603, 476, 2824, 576, 1378};
    const size_t V = size_t(c.nVocab);

    // Plain decoding: the prompt, then one token per forward pass.
    SimpleKvCache plainKv(c, 1, 64, 16, KvDtype::F16);
    std::vector<float> logits, decoded;
    Batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], 0, int32_t(i), i + 1 == prompt.size());
    model->forward(b, plainKv, logits);
    for (size_t j = 0; j < next.size(); ++j) {
        b.tokens.clear();
        b.add(next[j], 0, int32_t(prompt.size() + j), true);
        model->forward(b, plainKv, logits);
        decoded.insert(decoded.end(), logits.begin(), logits.end());
    }
    // The same tokens in one verify step.
    SimpleKvCache verifyKv(c, 1, 64, 16, KvDtype::F16);
    b.tokens.clear();
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], 0, int32_t(i), i + 1 == prompt.size());
    model->forward(b, verifyKv, logits);
    b.tokens.clear();
    for (size_t j = 0; j < next.size(); ++j) b.add(next[j], 0, int32_t(prompt.size() + j), true, true);
    model->forward(b, verifyKv, logits);
    REQUIRE_EQ(logits.size(), decoded.size());
    for (size_t j = 0; j < next.size(); ++j)
        REQUIRE_MSG(std::memcmp(logits.data() + j * V, decoded.data() + j * V, V * sizeof(float)) == 0,
                    (m.name + ": verify row " + std::to_string(j) + " differs from its decode step").c_str());
}

} // namespace

WEIR_TEST(VerifyRows, gemma3RowsEqualDecodeSteps) { checkModel(test::realModels()[0]); }
WEIR_TEST(VerifyRows, smollm2RowsEqualDecodeSteps) { checkModel(test::realModels()[1]); }
