// The default model (WEIR_MODEL) parses, and its metadata and tensor table
// match the dump made by the python `gguf` package
// (tests/reference/gguf_table_reference.py -> tests/data/gguf/*.table.json).
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "engine/gguf/gguf_file.h"

using namespace weir::gguf;

namespace {

QString modelPath() { return qEnvironmentVariable("WEIR_MODEL"); }

QJsonObject loadReference() {
    QFile f(qEnvironmentVariable("WEIR_TEST_DATA") + "/gguf/gemma-3-270m-q4_k_m.table.json");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Compares one scalar (or array item) with its JSON dump; strings may be {"hex": ...}.
bool matches(const Value& v, const QJsonValue& ref, QString& why) {
    switch (v.type) {
    case ValueType::String: {
        const std::string& s = *v.asString();
        if (ref.isObject()) {
            const QByteArray hex = QByteArray(s.data(), qsizetype(s.size())).toHex();
            if (hex == ref.toObject().value("hex").toString().toLatin1()) return true;
        } else if (QString::fromStdString(s) == ref.toString()) {
            return true;
        }
        why = QString("string %1").arg(QString::fromStdString(v.toDisplayString()));
        return false;
    }
    case ValueType::Bool:
        if (ref.isBool() && ref.toBool() == std::get<bool>(v.data)) return true;
        why = "bool";
        return false;
    case ValueType::F32: case ValueType::F64:
        if (ref.isDouble() && ref.toDouble() == *v.asFloat()) return true;
        why = QString("float %1 vs %2").arg(*v.asFloat(), 0, 'g', 17).arg(ref.toDouble(), 0, 'g', 17);
        return false;
    default:
        // Integers: JSON doubles hold every value in this model exactly (all < 2^53).
        if (ref.isDouble() && v.asInt() && double(*v.asInt()) == ref.toDouble()) return true;
        why = QString("integer %1").arg(QString::fromStdString(v.toDisplayString()));
        return false;
    }
}

} // namespace

class GgufModelTest : public QObject {
    Q_OBJECT
    std::unique_ptr<GgufFile> file_;
    QJsonObject ref_;

private slots:
    void initTestCase() {
        if (modelPath().isEmpty() || !QFileInfo::exists(modelPath())) QSKIP("default model not found (WEIR_MODEL)");
        ref_ = loadReference();
        QVERIFY2(!ref_.isEmpty(), "tests/data/gguf/gemma-3-270m-q4_k_m.table.json missing or invalid");
        file_ = GgufFile::open(modelPath().toStdString());
    }

    void header() {
        QCOMPARE(file_->tensors().size(), size_t(236));
        QCOMPARE(file_->getString("general.architecture").value(), std::string("gemma3"));
        QCOMPARE(qint64(file_->fileSize()), ref_.value("file_size").toInteger());
        QCOMPARE(qint64(file_->version()), ref_.value("version").toInteger());
        QCOMPARE(qint64(file_->alignment()), ref_.value("alignment").toInteger());
        QCOMPARE(qint64(file_->dataOffset()), ref_.value("data_offset").toInteger());
        QCOMPARE(qint64(file_->metadata().size()), ref_.value("kv_count").toInteger());
        QCOMPARE(qint64(file_->tensors().size()), ref_.value("tensor_count").toInteger());
    }

    // Every key in the same order, with the same type and value (arrays: length and sampled items).
    void metadataMatchesReference() {
        const QJsonArray keys = ref_.value("metadata").toArray();
        QCOMPARE(qsizetype(file_->metadata().size()), keys.size());
        for (qsizetype i = 0; i < keys.size(); ++i) {
            const QJsonObject r = keys[i].toObject();
            const KeyValue& kv = file_->metadata()[size_t(i)];
            const QString key = QString::fromStdString(kv.key);
            QCOMPARE(key, r.value("key").toString());
            QCOMPARE(QString(valueTypeName(kv.value.type)), r.value("type").toString());
            QString why;
            if (const Array* a = kv.value.asArray()) {
                QCOMPARE(QString(valueTypeName(a->elementType)), r.value("element_type").toString());
                QCOMPARE(qint64(a->items.size()), r.value("count").toInteger());
                const QJsonObject samples = r.value("samples").toObject();
                QVERIFY(!samples.isEmpty());
                for (auto it = samples.begin(); it != samples.end(); ++it) {
                    const size_t index = it.key().toULongLong();
                    QVERIFY(index < a->items.size());
                    QVERIFY2(matches(a->items[index], it.value(), why), qPrintable(key + "[" + it.key() + "]: " + why));
                }
            } else {
                QVERIFY2(matches(kv.value, r.value("value"), why), qPrintable(key + ": " + why));
            }
        }
    }

    void tensorTableMatchesReference() {
        const QJsonArray tensors = ref_.value("tensors").toArray();
        QCOMPARE(qsizetype(file_->tensors().size()), tensors.size());
        for (qsizetype i = 0; i < tensors.size(); ++i) {
            const QJsonObject r = tensors[i].toObject();
            const TensorInfo& t = file_->tensors()[size_t(i)];
            const QString name = QString::fromStdString(t.name);
            QCOMPARE(name, r.value("name").toString());
            QCOMPARE(qint64(t.type), r.value("type").toInteger());
            const QJsonArray shape = r.value("shape").toArray();
            QCOMPARE(qsizetype(t.nDims), shape.size());
            for (qsizetype d = 0; d < shape.size(); ++d) QCOMPARE(qint64(t.ne[d]), shape[d].toInteger());
            QCOMPARE(qint64(t.offset), r.value("offset").toInteger());
            QCOMPARE(qint64(t.nbytes), r.value("bytes").toInteger());
            QCOMPARE(t.data, file_->tensors()[0].data - file_->tensors()[0].offset + t.offset);
        }
    }

    // The typed getters the model and tokenizer code rely on.
    void typedGettersOnModel() {
        QCOMPARE(file_->getInt("gemma3.block_count").value(), int64_t(18));
        QCOMPARE(file_->getInt("gemma3.embedding_length").value(), int64_t(640));
        QCOMPARE(float(file_->getFloat("gemma3.attention.layer_norm_rms_epsilon").value()), 1e-6f);
        QCOMPARE(file_->getStringArray("tokenizer.ggml.tokens")->size(), size_t(262144));
        QCOMPARE(file_->getFloatArray("tokenizer.ggml.scores")->size(), size_t(262144));
        QCOMPARE(file_->getIntArray("tokenizer.ggml.token_type")->at(0), int64_t(3));
        QCOMPARE(file_->getBool("tokenizer.ggml.add_bos_token").value(), true);
        const TensorInfo* embd = file_->findTensor("token_embd.weight");
        QVERIFY(embd);
        QCOMPARE(embd->ne[0], int64_t(640));
        QCOMPARE(embd->ne[1], int64_t(262144));
    }
};

QTEST_APPLESS_MAIN(GgufModelTest)
#include "gguf_model_test.moc"
