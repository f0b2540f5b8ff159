// `weir-cli inspect` (from WEIR_BIN_DIR) through QProcess: every malformed file
// ends with a non-zero exit (not a signal) and exactly one stderr line naming
// the problem; the default model's --json output matches the python `gguf` dump.
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "engine/gguf/gguf_writer.h"
#include "engine/models/synthetic_model.h"
#include "malformed_gguf_cases.h"

namespace {

struct Run {
    QProcess::ExitStatus status;
    int code;
    QByteArray out, err;
};

QString cliPath() { return qEnvironmentVariable("WEIR_BIN_DIR") + "/weir-cli"; }

Run inspect(const QStringList& args) {
    QProcess p;
    p.start(cliPath(), QStringList{"inspect"} + args);
    p.waitForFinished(60000);
    return Run{p.exitStatus(), p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

} // namespace

class GgufInspectCliTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (qEnvironmentVariable("WEIR_BIN_DIR").isEmpty() || !QFileInfo(cliPath()).isExecutable())
            QSKIP("weir-cli not built (WEIR_BIN_DIR)");
    }

    void malformedFiles() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const auto& c : weir::gguf::testing::malformedCases()) {
            const QString path = dir.filePath(QString::fromStdString(c.name) + ".gguf");
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(reinterpret_cast<const char*>(c.bytes.data()), qint64(c.bytes.size()));
            f.close();
            const Run r = inspect({path});
            const QString label = QString::fromStdString(c.name) + ": " + QString::fromUtf8(r.err);
            QVERIFY2(r.status == QProcess::NormalExit, qPrintable(label + " (crashed)"));
            QVERIFY2(r.code != 0, qPrintable(label));
            QVERIFY2(r.err.endsWith('\n') && r.err.count('\n') == 1, qPrintable(label + " (not one line)"));
            const QByteArray expected =
                (path + ": offset " + QString::number(c.offset) + ": ").toUtf8();
            QVERIFY2(r.err.contains(expected), qPrintable(label));
            QVERIFY2(r.err.contains(QByteArray::fromStdString(c.problem)), qPrintable(label));
            QVERIFY2(r.out.isEmpty(), qPrintable(label + " (printed to stdout)"));
        }
    }

    void missingFileAndBadArguments() {
        for (const QStringList& args : {QStringList{"/nonexistent/x.gguf"}, QStringList{}, QStringList{"a", "b"}}) {
            const Run r = inspect(args);
            QCOMPARE(r.status, QProcess::NormalExit);
            QVERIFY(r.code != 0);
            QCOMPARE(r.err.count('\n'), 1);
        }
    }

    // Issue 16: a model whose metadata parses but makes no sense. `inspect`
    // still shows it, then fails like `generate`, naming the key and value.
    void corruptModelsExitNonZero() {
        using namespace weir::gguf;
        weir::SyntheticModelSpec spec;
        spec.architecture = "gemma3";
        const std::vector<uint8_t> good = weir::makeSyntheticModel(spec);
        auto f = GgufFile::fromMemory(good.data(), good.size(), "synthetic");
        GgufWriter w;
        for (const auto& kv : f->metadata())
            w.add(kv.key, kv.key == "gemma3.attention.layer_norm_rms_epsilon" ? makeF32(INFINITY) : kv.value);
        for (const auto& t : f->tensors())
            w.addTensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + std::max<uint32_t>(1, t.nDims)), t.data,
                        size_t(t.nbytes));
        QTemporaryDir dir;
        const QString path = dir.filePath("corrupt.gguf");
        w.writeFile(path.toStdString());
        const QByteArray expected = "gemma3.attention.layer_norm_rms_epsilon = inf: must be a finite positive number";

        Run r = inspect({path});
        QCOMPARE(r.status, QProcess::NormalExit);
        QVERIFY2(r.code != 0, r.err.constData());
        QVERIFY2(r.err.contains(expected), r.err.constData());
        QVERIFY(r.out.contains("layer_norm_rms_epsilon"));  // the table came first

        QProcess p;
        p.start(cliPath(), {"generate", "-m", path, "-p", "hi", "-n", "2"});
        p.waitForFinished(60000);
        const QByteArray err = p.readAllStandardError();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(p.exitCode() != 0, err.constData());
        QVERIFY2(err.contains(expected), err.constData());
    }

    // A small file made with our writer: the text table lists its tensors and totals.
    void textTable() {
        using namespace weir::gguf;
        GgufWriter w;
        w.addString("general.architecture", "tiny");
        w.add("tiny.list", makeI32Array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        w.addTensor("weights.a", weir::kernels::GgmlType::F32, {4, 2}, std::vector<uint8_t>(32));
        w.addTensor("weights.b", weir::kernels::GgmlType::Q8_0, {64}, std::vector<uint8_t>(68));
        QTemporaryDir dir;
        const QString path = dir.filePath("tiny.gguf");
        w.writeFile(path.toStdString());
        const Run r = inspect({path});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("\"tiny\""), qPrintable(out));
        QVERIFY2(out.contains("[1, 2, 3, 4, 5, 6, 7, 8, ...] (12 items)"), qPrintable(out));  // abbreviated
        QVERIFY2(QRegularExpression(R"(weights\.a\s+F32\s+\[4, 2\]\s+0\s+32\n)").match(out).hasMatch(), qPrintable(out));
        QVERIFY2(QRegularExpression(R"(weights\.b\s+Q8_0\s+\[64\]\s+32\s+68\n)").match(out).hasMatch(), qPrintable(out));
        QVERIFY2(out.contains("total: 2 tensors, 72 elements, 100 bytes"), qPrintable(out));
    }

    // --json on the default model agrees with the python gguf dump.
    void jsonMatchesReference() {
        const QString model = qEnvironmentVariable("WEIR_MODEL");
        if (model.isEmpty() || !QFileInfo::exists(model)) QSKIP("default model not found (WEIR_MODEL)");
        QFile refFile(qEnvironmentVariable("WEIR_TEST_DATA") + "/gguf/gemma-3-270m-q4_k_m.table.json");
        QVERIFY(refFile.open(QIODevice::ReadOnly));
        const QJsonObject ref = QJsonDocument::fromJson(refFile.readAll()).object();
        const Run r = inspect({model, "--json"});
        QCOMPARE(r.code, 0);
        QJsonParseError perr;
        const QJsonObject got = QJsonDocument::fromJson(r.out, &perr).object();
        QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
        QCOMPARE(got.value("data_offset").toInteger(), ref.value("data_offset").toInteger());
        const QJsonArray gotT = got.value("tensors").toArray(), refT = ref.value("tensors").toArray();
        QCOMPARE(gotT.size(), refT.size());
        qint64 bytes = 0;
        for (qsizetype i = 0; i < refT.size(); ++i) {
            const QJsonObject a = gotT[i].toObject(), b = refT[i].toObject();
            QCOMPARE(a.value("name").toString(), b.value("name").toString());
            QCOMPARE(a.value("type").toString(), b.value("type_name").toString());
            QCOMPARE(a.value("shape").toArray(), b.value("shape").toArray());
            QCOMPARE(a.value("offset").toInteger(), b.value("offset").toInteger());
            QCOMPARE(a.value("bytes").toInteger(), b.value("bytes").toInteger());
            bytes += b.value("bytes").toInteger();
        }
        QCOMPARE(got.value("totals").toObject().value("bytes").toInteger(), bytes);
        const QJsonArray meta = got.value("metadata").toArray();
        QCOMPARE(meta.size(), ref.value("metadata").toArray().size());
        for (const QJsonValue& m : meta) {
            const QJsonObject o = m.toObject();
            if (o.value("key").toString() != "tokenizer.ggml.tokens") continue;
            const QJsonObject v = o.value("value").toObject();
            QCOMPARE(v.value("count").toInteger(), 262144);
            QCOMPARE(v.value("truncated").toBool(), true);
            QCOMPARE(v.value("items").toArray().size(), 8);  // long arrays abbreviated
            QCOMPARE(v.value("items").toArray()[1].toString(), QString("<eos>"));
        }
    }
};

QTEST_GUILESS_MAIN(GgufInspectCliTest)
#include "gguf_inspect_cli_test.moc"
