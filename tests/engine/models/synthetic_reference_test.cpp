// The Llama, Qwen 2 and Gemma 3 code paths against llama.cpp on small random
// models: the test writes each synthetic GGUF again (it must hash to what the
// reference was recorded with) and replays the recorded greedy runs. The
// references were made with
//   weir-cli make-synthetic llama.gguf
//   weir-cli make-synthetic qwen2.gguf --arch qwen2 --seed 2
//   weir-cli make-synthetic gemma3.gguf --arch gemma3 --seed 3 --layers 3 --rope-base 1000000
//   tests/reference/make_model_reference.py --model X.gguf --prompt-ids-seed 7 --out tests/data/reference/X_synthetic_greedy.json
// The Gemma 3 model has a 16-token window, so its sequences cross it many times.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <filesystem>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/synthetic_model.h"
#include "tests/engine/models/reference_runner.h"
#include "tests/engine/test_backend.h"

using namespace weir;
using namespace weir::testing;

static weirtest::TempDir dir_;

void check(const SyntheticModelSpec& spec, const std::string& refName) {
    const Reference ref = loadReference(weirtest::environment("WEIR_TEST_DATA") + "/reference/" + refName);
    REQUIRE_MSG(ref.cases.size() >= 8, "reference data missing: " + refName);
    if (!useBuildOf(ref)) SKIP("the reference's llama.cpp build needs the AVX2 path");
    const std::string path = dir_.filePath(refName + ".gguf");
    writeSyntheticModel(spec, path);
    REQUIRE_EQ(fileSha256(path), ref.modelSha256);  // the very file llama.cpp ran
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(path);
    auto model = loadModel(file, weirtest::cpuBackend());
    REQUIRE_EQ(model->config().architecture, spec.architecture);
    std::vector<Run> runs;
    for (const auto& c : ref.cases) runs.push_back(runAlone(*model, c));
    expectMatches(ref, runs, (spec.architecture + " alone").c_str());
    expectMatches(ref, runMixed(*model, ref.cases), (spec.architecture + " mixed").c_str());
}

WEIR_TEST_SUITE_SETUP(SyntheticReference) {
    REQUIRE(dir_.isValid());
}

WEIR_TEST(SyntheticReference, llamaMatchesLlamaCpp) {
    SyntheticModelSpec spec;  // defaults: llama, 2 layers, seed 1
    check(spec, "llama_synthetic_greedy.json");
}

WEIR_TEST(SyntheticReference, qwen2MatchesLlamaCpp) {
    SyntheticModelSpec spec;
    spec.architecture = "qwen2";
    spec.seed = 2;
    check(spec, "qwen2_synthetic_greedy.json");
}

WEIR_TEST(SyntheticReference, gemma3WithSlidingWindowMatchesLlamaCpp) {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.seed = 3;
    spec.nLayer = 3;
    spec.ropeBase = 1e6f;
    check(spec, "gemma3_synthetic_greedy.json");
}
