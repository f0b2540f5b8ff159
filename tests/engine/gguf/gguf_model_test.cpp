// The default model (WEIR_MODEL) parses, and its metadata and tensor table
// match the dump made by the python `gguf` package
// (tests/reference/gguf_table_reference.py -> tests/data/gguf/*.table.json).
#include "tests/support/weir_test.h"

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

std::unique_ptr<GgufFile> file_;
QJsonObject ref_;

WEIR_TEST_SUITE_SETUP(GgufModel) {
    if (modelPath().isEmpty() || !QFileInfo::exists(modelPath())) SKIP("default model not found (WEIR_MODEL)");
    ref_ = loadReference();
    REQUIRE_MSG(!ref_.isEmpty(), "tests/data/gguf/gemma-3-270m-q4_k_m.table.json missing or invalid");
    file_ = GgufFile::open(modelPath().toStdString());
}

WEIR_TEST(GgufModel, header) {
    REQUIRE_EQ(file_->tensors().size(), size_t(236));
    REQUIRE_EQ(file_->getString("general.architecture").value(), std::string("gemma3"));
    REQUIRE_EQ(qint64(file_->fileSize()), ref_.value("file_size").toInteger());
    REQUIRE_EQ(qint64(file_->version()), ref_.value("version").toInteger());
    REQUIRE_EQ(qint64(file_->alignment()), ref_.value("alignment").toInteger());
    REQUIRE_EQ(qint64(file_->dataOffset()), ref_.value("data_offset").toInteger());
    REQUIRE_EQ(qint64(file_->metadata().size()), ref_.value("kv_count").toInteger());
    REQUIRE_EQ(qint64(file_->tensors().size()), ref_.value("tensor_count").toInteger());
}

// Every key in the same order, with the same type and value (arrays: length and sampled items).
WEIR_TEST(GgufModel, metadataMatchesReference) {
    const QJsonArray keys = ref_.value("metadata").toArray();
    REQUIRE_EQ(qsizetype(file_->metadata().size()), keys.size());
    for (qsizetype i = 0; i < keys.size(); ++i) {
        const QJsonObject r = keys[i].toObject();
        const KeyValue& kv = file_->metadata()[size_t(i)];
        const QString key = QString::fromStdString(kv.key);
        REQUIRE_EQ(key, r.value("key").toString());
        REQUIRE_EQ(QString(valueTypeName(kv.value.type)), r.value("type").toString());
        QString why;
        if (const Array* a = kv.value.asArray()) {
            REQUIRE_EQ(QString(valueTypeName(a->elementType)), r.value("element_type").toString());
            REQUIRE_EQ(qint64(a->items.size()), r.value("count").toInteger());
            const QJsonObject samples = r.value("samples").toObject();
            REQUIRE(!samples.isEmpty());
            for (auto it = samples.begin(); it != samples.end(); ++it) {
                const size_t index = it.key().toULongLong();
                REQUIRE(index < a->items.size());
                REQUIRE_MSG(matches(a->items[index], it.value(), why), qPrintable(key + "[" + it.key() + "]: " + why));
            }
        } else {
            REQUIRE_MSG(matches(kv.value, r.value("value"), why), qPrintable(key + ": " + why));
        }
    }
}

WEIR_TEST(GgufModel, tensorTableMatchesReference) {
    const QJsonArray tensors = ref_.value("tensors").toArray();
    REQUIRE_EQ(qsizetype(file_->tensors().size()), tensors.size());
    for (qsizetype i = 0; i < tensors.size(); ++i) {
        const QJsonObject r = tensors[i].toObject();
        const TensorInfo& t = file_->tensors()[size_t(i)];
        const QString name = QString::fromStdString(t.name);
        REQUIRE_EQ(name, r.value("name").toString());
        REQUIRE_EQ(qint64(t.type), r.value("type").toInteger());
        const QJsonArray shape = r.value("shape").toArray();
        REQUIRE_EQ(qsizetype(t.nDims), shape.size());
        for (qsizetype d = 0; d < shape.size(); ++d) REQUIRE_EQ(qint64(t.ne[d]), shape[d].toInteger());
        REQUIRE_EQ(qint64(t.offset), r.value("offset").toInteger());
        REQUIRE_EQ(qint64(t.nbytes), r.value("bytes").toInteger());
        REQUIRE_EQ(t.data, file_->tensors()[0].data - file_->tensors()[0].offset + t.offset);
    }
}

// The typed getters the model and tokenizer code rely on.
WEIR_TEST(GgufModel, typedGettersOnModel) {
    REQUIRE_EQ(file_->getInt("gemma3.block_count").value(), int64_t(18));
    REQUIRE_EQ(file_->getInt("gemma3.embedding_length").value(), int64_t(640));
    REQUIRE_EQ(float(file_->getFloat("gemma3.attention.layer_norm_rms_epsilon").value()), 1e-6f);
    REQUIRE_EQ(file_->getStringArray("tokenizer.ggml.tokens")->size(), size_t(262144));
    REQUIRE_EQ(file_->getFloatArray("tokenizer.ggml.scores")->size(), size_t(262144));
    REQUIRE_EQ(file_->getIntArray("tokenizer.ggml.token_type")->at(0), int64_t(3));
    REQUIRE_EQ(file_->getBool("tokenizer.ggml.add_bos_token").value(), true);
    const TensorInfo* embd = file_->findTensor("token_embd.weight");
    REQUIRE(embd);
    REQUIRE_EQ(embd->ne[0], int64_t(640));
    REQUIRE_EQ(embd->ne[1], int64_t(262144));
}
