// The Llama code path against llama.cpp on a small random model: the test
// writes the synthetic GGUF again (it must hash to what the reference was
// recorded with) and replays the recorded greedy runs.
#include <QTemporaryDir>
#include <QtTest>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/synthetic_model.h"
#include "tests/engine/models/reference_runner.h"

using namespace weir;
using namespace weir::testing;

class LlamaSyntheticReferenceTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<kernels::ThreadPool> pool_;

    void check(const SyntheticModelSpec& spec, const QString& refName) {
        const Reference ref = loadReference(qEnvironmentVariable("WEIR_TEST_DATA") + "/reference/" + refName);
        QVERIFY2(ref.cases.size() >= 8, qPrintable("reference data missing: " + refName));
        const QString path = dir_.filePath(refName + ".gguf");
        writeSyntheticModel(spec, path.toStdString());
        QCOMPARE(fileSha256(path), ref.modelSha256);  // the very file llama.cpp ran
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(path.toStdString());
        auto model = loadModel(file);
        QCOMPARE(model->config().architecture, spec.architecture);
        std::vector<Run> runs;
        for (const auto& c : ref.cases) runs.push_back(runAlone(*model, c, *pool_));
        expectMatches(ref, runs, (spec.architecture + " alone").c_str());
        expectMatches(ref, runMixed(*model, ref.cases, *pool_), (spec.architecture + " mixed").c_str());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        pool_ = std::make_unique<kernels::ThreadPool>(2);
    }

    void llamaMatchesLlamaCpp() {
        SyntheticModelSpec spec;  // defaults: llama, 2 layers, seed 1
        check(spec, "llama_synthetic_greedy.json");
    }

    void qwen2MatchesLlamaCpp() {
        SyntheticModelSpec spec;
        spec.architecture = "qwen2";
        spec.seed = 2;
        check(spec, "qwen2_synthetic_greedy.json");
    }
};

QTEST_APPLESS_MAIN(LlamaSyntheticReferenceTest)
#include "llama_synthetic_reference_test.moc"
