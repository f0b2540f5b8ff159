// SmolLM2 135M Instruct (Llama architecture, Q4_1, ChatML; the model the app
// chats with) against llama.cpp: the recorded greedy continuations
// (tests/data/reference/smollm2_135m_greedy.json, made by
// tests/reference/make_model_reference.py; chat prompts rendered by the
// file's own template with python jinja2) must come out token for token from
// the model alone, in mixed batches and through the whole Engine; Weir's
// tokenizer and chat template must give llama.cpp's prompt ids.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "tests/engine/models/reference_runner.h"
#include "weir/engine.h"

using namespace weir;
using namespace weir::testing;

namespace {

std::string modelPath() { return weirtest::environment("WEIR_SOURCE_DIR") + "/models/smollm2-135m-instruct-q4_1.gguf"; }

std::unique_ptr<Model> model_;
Reference ref_;
std::unique_ptr<kernels::ThreadPool> pool_;

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
    model_ = loadModel(gguf::GgufFile::open(modelPath()));
    REQUIRE_EQ(model_->config().architecture, std::string("llama"));
    pool_ = std::make_unique<kernels::ThreadPool>(2);
}

WEIR_TEST(Smollm2Reference, eachPromptAlone) {
    std::vector<Run> runs;
    for (const auto& c : ref_.cases) runs.push_back(runAlone(*model_, c, *pool_));
    expectMatches(ref_, runs, "alone");
}

WEIR_TEST(Smollm2Reference, allPromptsInMixedBatches) {
    expectMatches(ref_, runMixed(*model_, ref_.cases, *pool_), "mixed");
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

// Every prompt submitted at once to the Engine: paged KV, chunked prefill,
// greedy sampling through the sampler; each comes out as llama.cpp's.
WEIR_TEST(Smollm2Reference, everyPromptThroughTheEngineAtOnce) {
    Engine engine(engineOptions());
    std::mutex m;
    std::condition_variable cv;
    std::vector<Run> runs(ref_.cases.size());
    size_t ended = 0;
    std::vector<std::string> errors;
    for (size_t i = 0; i < ref_.cases.size(); ++i) {
        GenerateRequest req;
        req.prompt = ref_.cases[i].prompt;
        req.sampling.temperature = 0;
        req.maxTokens = int32_t(ref_.cases[i].generated.size());
        req.stopAtEndOfGeneration = false;
        engine.submit(std::move(req), [&, i](const Event& e) {
            std::lock_guard<std::mutex> lock(m);
            if (e.kind == Event::Kind::Token) {
                runs[i].tokens.push_back(e.token);
                return;
            }
            if (e.kind != Event::Kind::Done) errors.push_back(e.text);
            ++ended;
            cv.notify_all();
        });
    }
    {
        std::unique_lock<std::mutex> lock(m);
        REQUIRE_MSG(cv.wait_for(lock, std::chrono::minutes(5), [&] { return ended == ref_.cases.size(); }),
                    "the engine did not finish the reference prompts");
    }
    for (const std::string& e : errors) std::printf("  engine error: %s\n", e.c_str());
    REQUIRE(errors.empty());
    size_t identical = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
        const size_t same = matchingSteps(ref_.cases[i], runs[i]);
        std::printf("  engine case %zu: %zu/%zu steps match\n", i, same, ref_.cases[i].generated.size());
        identical += same == ref_.cases[i].generated.size();
    }
    REQUIRE_EQ(identical, ref_.cases.size());
}
