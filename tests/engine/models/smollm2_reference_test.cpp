// SmolLM2 135M Instruct (Llama architecture, Q4_1, ChatML; the model the app
// chats with) against llama.cpp: the recorded greedy continuations
// (tests/data/reference/smollm2_135m_greedy.json, made by
// tests/reference/make_model_reference.py; chat prompts rendered by the
// file's own template with python jinja2).
// Weir's tokenizer and chat template must give llama.cpp's prompt ids, and
// the greedy continuations must come out token for token, alone, in mixed
// batches and through the whole Engine (the reference was recorded by an
// AVX-512 build of llama.cpp, whose rounding useBuildOf() selects).
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cstdio>
#include <filesystem>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "tests/engine/models/reference_runner.h"
#include "weir/engine.h"
#include "tests/engine/test_backend.h"

using namespace weir;
using namespace weir::testing;

namespace {

std::string modelPath() { return weirtest::environment("WEIR_SOURCE_DIR") + "/models/smollm2-135m-instruct-q4_1.gguf"; }

std::unique_ptr<Model> model_;
Reference ref_;

EngineOptions engineOptions() {
    EngineOptions o;
    o.modelPath = modelPath();
    o.threads = 2;
    o.maxRunningRequests = 16;  // every case at once
    o.maxContext = 512;
    o.checkIntegrityEveryStep = true;
    return o;
}

bool isChat(const ReferenceCase& c) { return c.text.find("<|im_start|>") != std::string::npos; }

// The user message inside a ChatML prompt of one system and one user turn.
std::string userMessageOf(const std::string& chat) {
    const std::string open = "<|im_start|>user\n", close = "<|im_end|>";
    const size_t from = chat.find(open);
    if (from == std::string::npos) return {};
    const size_t start = from + open.size();
    return chat.substr(start, chat.find(close, start) - start);
}

} // namespace

WEIR_TEST_SUITE_SETUP(Smollm2Reference) {
    if (!std::filesystem::exists(modelPath())) SKIP("SmolLM2 135M Instruct not installed (packaging/setup.sh)");
    ref_ = loadReference(weirtest::environment("WEIR_TEST_DATA") + "/reference/smollm2_135m_greedy.json");
    REQUIRE_MSG(ref_.cases.size() >= 8, "reference data missing or too small");
    REQUIRE_MSG(ref_.avx512Build, "recorded by an AVX-512 build of llama.cpp (what the AVX-512 variants are checked against)");
    if (!useBuildOf(ref_)) SKIP("the reference's llama.cpp build needs the AVX2 path");
    REQUIRE_MSG(ref_.modelSha256 == fileSha256(modelPath()), "the installed file is not the one the reference was made with");
    model_ = loadModel(gguf::GgufFile::open(modelPath()), weirtest::cpuBackend());
    REQUIRE_EQ(model_->config().architecture, std::string("llama"));
}

// At every position of prompt + reference continuation, the argmax is
// llama.cpp's next token (one flipped near-tie does not end the comparison).
WEIR_TEST(Smollm2Reference, picksLlamaCppsNextTokenTeacherForced) {
    size_t steps = 0;
    for (const auto& c : ref_.cases) steps += c.generated.size();
    const size_t agree = teacherForcedAgreement(*model_, ref_.cases);
    std::printf("  teacher-forced: %zu/%zu positions pick llama.cpp's token (%.1f%%)\n", agree, steps,
                100.0 * double(agree) / double(steps));
    REQUIRE_EQ(agree, steps);
}

// Alone, in mixed batches and through the Engine (paged KV, chunked prefill,
// the sampler) the model gives llama.cpp's greedy tokens.
WEIR_TEST(Smollm2Reference, sameTokensAloneInMixedBatchesAndThroughTheEngine) {
    std::vector<Run> alone;
    for (const auto& c : ref_.cases) alone.push_back(runAlone(*model_, c));
    const std::vector<Run> mixed = runMixed(*model_, ref_.cases);
    std::vector<Run> engine;
    REQUIRE(runEngine(engineOptions(), ref_.cases, engine));
    size_t identical = 0;
    for (size_t i = 0; i < ref_.cases.size(); ++i) {
        const size_t same = matchingSteps(ref_.cases[i], alone[i]);
        identical += same == ref_.cases[i].generated.size();
        std::printf("  case %zu: %zu/%zu greedy steps as llama.cpp's before the first difference\n", i, same,
                    ref_.cases[i].generated.size());
        REQUIRE_MSG(mixed[i].tokens == alone[i].tokens, weirtest::str("mixed batches differ in case ", i));
        REQUIRE_MSG(engine[i].tokens == alone[i].tokens, weirtest::str("the Engine differs in case ", i));
    }
    std::printf("  %zu/%zu cases identical to llama.cpp's for every step\n", identical, ref_.cases.size());
    expectMatches(ref_, alone, "alone");
}

// Text prompts tokenize to llama.cpp's ids (special tokens parsed only in
// the chat-formatted ones, as the generator did).
WEIR_TEST(Smollm2Reference, promptTextTokenizesLikeLlamaCpp) {
    Engine engine(engineOptions());
    for (const auto& c : ref_.cases) {
        REQUIRE(!c.text.empty());
        const std::vector<int32_t> ids = isChat(c) ? engine.tokenizePrompt(c.text) : engine.tokenize(c.text, true);
        REQUIRE_MSG(ids == c.prompt, c.text.c_str());
    }
}

// What the app sends for one user message: Weir's rendering of the model's
// own template (with its default system prompt) gives llama.cpp's ids of the
// prompt python jinja2 rendered.
WEIR_TEST(Smollm2Reference, chatMessageRendersToTheReferencePrompt) {
    Engine engine(engineOptions());
    size_t chats = 0;
    for (const auto& c : ref_.cases) {
        if (!isChat(c)) continue;
        ++chats;
        REQUIRE_EQ(engine.tokenizeChat({{"user", userMessageOf(c.text)}}), c.prompt);
    }
    REQUIRE(chats >= 2);
}
