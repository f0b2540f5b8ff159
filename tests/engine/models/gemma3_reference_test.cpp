// Gemma 3 270M against llama.cpp: the recorded greedy continuations of several
// prompts (tests/data/reference/gemma3_270m_greedy.json, made by
// tests/reference/make_model_reference.py) must come out token for token.
#include <QtTest>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "tests/engine/models/reference_runner.h"

using namespace weir;
using namespace weir::testing;

class Gemma3ReferenceTest : public QObject {
    Q_OBJECT
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
};

QTEST_APPLESS_MAIN(Gemma3ReferenceTest)
#include "gemma3_reference_test.moc"
