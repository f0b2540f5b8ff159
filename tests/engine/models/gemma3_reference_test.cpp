// Gemma 3 270M against llama.cpp: the recorded greedy continuations of several
// prompts (tests/data/reference/gemma3_270m_greedy.json, made by
// tests/reference/make_model_reference.py) must come out token for token:
// from the model alone and in mixed batches, and through the whole Engine
// (prompt text tokenized by Weir, the chat prompt rendered by its template,
// paged KV pools, chunked prefill, all prompts scheduled at once).
#include <QtTest>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "engine/engine.h"
#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "tests/engine/models/reference_runner.h"

using namespace weir;
using namespace weir::testing;

class Gemma3ReferenceTest : public QObject {
    Q_OBJECT

    static EngineOptions engineOptions() {
        EngineOptions o;
        o.modelPath = qEnvironmentVariable("WEIR_MODEL").toStdString();
        o.threads = 2;
        o.maxRunningRequests = 16;  // every case at once
        o.maxContext = 512;
        o.checkIntegrityEveryStep = true;
        return o;
    }
    std::unique_ptr<Model> model_;
    Reference ref_;
    std::unique_ptr<kernels::ThreadPool> pool_;

private slots:
    void initTestCase() {
        const QString modelPath = qEnvironmentVariable("WEIR_MODEL");
        if (modelPath.isEmpty() || !QFile::exists(modelPath)) QSKIP("default model not present (WEIR_MODEL)");
        ref_ = loadReference(qEnvironmentVariable("WEIR_TEST_DATA") + "/reference/gemma3_270m_greedy.json");
        QVERIFY2(ref_.cases.size() >= 8, "reference data missing or too small");
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(modelPath.toStdString());
        model_ = loadModel(file);
        QCOMPARE(model_->config().architecture, std::string("gemma3"));
        pool_ = std::make_unique<kernels::ThreadPool>(2);
    }

    void eachPromptAlone() {
        std::vector<Run> runs;
        for (const auto& c : ref_.cases) runs.push_back(runAlone(*model_, c, *pool_));
        expectMatches(ref_, runs, "alone");
    }

    void allPromptsInMixedBatches() {
        expectMatches(ref_, runMixed(*model_, ref_.cases, *pool_), "mixed");
    }

    // Weir's tokenizer gives llama.cpp's prompt ids for every text prompt
    // (special tokens parsed only in the chat-formatted one, as the generator did).
    void promptTextTokenizesLikeLlamaCpp() {
        Engine engine(engineOptions());
        for (const auto& c : ref_.cases) {
            QVERIFY(!c.text.empty());
            const bool chat = c.text.find("<start_of_turn>") != std::string::npos;
            const std::vector<int32_t> ids = chat ? engine.tokenizePrompt(c.text) : engine.tokenize(c.text, true);
            QVERIFY2(ids == c.prompt, c.text.c_str());
        }
    }

    // The chat case is what the app sends for one user message: the template's
    // rendering must tokenize to llama.cpp's ids of the same formatted prompt.
    void chatMessageRendersToTheReferencePrompt() {
        Engine engine(engineOptions());
        const ReferenceCase* chatCase = nullptr;
        for (const auto& c : ref_.cases)
            if (c.text.find("<start_of_turn>") != std::string::npos) chatCase = &c;
        QVERIFY(chatCase);
        QCOMPARE(engine.tokenizeChat({{"user", "Write a haiku about autumn."}}), chatCase->prompt);
    }

    // Every prompt submitted at once to the Engine: scheduled together, paged
    // KV, greedy sampling through the sampler; each comes out as llama.cpp's.
    void everyPromptThroughTheEngineAtOnce() {
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
        std::unique_lock<std::mutex> lock(m);
        QVERIFY(cv.wait_for(lock, std::chrono::minutes(5), [&] { return ended == ref_.cases.size(); }));
        QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().c_str());
        size_t identical = 0;
        for (size_t i = 0; i < runs.size(); ++i) {
            const size_t same = matchingSteps(ref_.cases[i], runs[i]);
            qInfo("engine case %zu: %zu/%zu steps match", i, same, ref_.cases[i].generated.size());
            identical += same == ref_.cases[i].generated.size();
        }
        QCOMPARE(identical, ref_.cases.size());
    }
};

QTEST_APPLESS_MAIN(Gemma3ReferenceTest)
#include "gemma3_reference_test.moc"
