// GGUF writer -> reader round trip: every value type (edge values included),
// nested arrays, tensors of every known ggml type, alignment and padding,
// file and in-memory output; and the writer's refusals.
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::gguf;

namespace {

// Deep equality of two values, type included; NaNs compare by bit pattern.
bool sameValue(const Value& a, const Value& b, std::string& why) {
    if (a.type != b.type) {
        why = std::string("type ") + valueTypeName(a.type) + " vs " + valueTypeName(b.type);
        return false;
    }
    if (a.data.index() != b.data.index()) {
        why = "storage differs";
        return false;
    }
    if (const Array* x = a.asArray()) {
        const Array* y = b.asArray();
        if (x->elementType != y->elementType || x->items.size() != y->items.size()) {
            why = "array shape differs";
            return false;
        }
        for (size_t i = 0; i < x->items.size(); ++i)
            if (!sameValue(x->items[i], y->items[i], why)) {
                why = "item " + std::to_string(i) + ": " + why;
                return false;
            }
        return true;
    }
    if (const double* d = std::get_if<double>(&a.data)) {
        const double e = std::get<double>(b.data);
        if (std::isnan(*d) && std::isnan(e)) return true;
        if (std::memcmp(d, &e, sizeof e) != 0) {
            why = "float " + std::to_string(*d) + " vs " + std::to_string(e);
            return false;
        }
        return true;
    }
    bool same = false;
    if (const auto* u = std::get_if<uint64_t>(&a.data)) same = *u == std::get<uint64_t>(b.data);
    if (const auto* i = std::get_if<int64_t>(&a.data)) same = *i == std::get<int64_t>(b.data);
    if (const auto* x = std::get_if<bool>(&a.data)) same = *x == std::get<bool>(b.data);
    if (const auto* s = std::get_if<std::string>(&a.data)) same = *s == std::get<std::string>(b.data);
    if (!same) why = "value " + a.toDisplayString() + " vs " + b.toDisplayString();
    return same;
}

// Metadata covering every value type, extremes, and arrays nested three deep.
std::vector<std::pair<std::string, Value>> everyValue() {
    using L8 = std::numeric_limits<int8_t>;
    using L16 = std::numeric_limits<int16_t>;
    using L32 = std::numeric_limits<int32_t>;
    using L64 = std::numeric_limits<int64_t>;
    std::vector<std::pair<std::string, Value>> v = {
        {"u8.max", makeU8(255)},
        {"i8.min", makeI8(L8::min())},
        {"u16.max", makeU16(65535)},
        {"i16.min", makeI16(L16::min())},
        {"u32.max", makeU32(0xffffffffu)},
        {"i32.min", makeI32(L32::min())},
        {"u64.max", makeU64(~uint64_t(0))},
        {"i64.min", makeI64(L64::min())},
        {"f32.tiny", makeF32(std::numeric_limits<float>::denorm_min())},
        {"f32.negzero", makeF32(-0.0f)},
        {"f32.inf", makeF32(std::numeric_limits<float>::infinity())},
        {"f32.nan", makeF32(std::numeric_limits<float>::quiet_NaN())},
        {"f64.pi", makeF64(3.141592653589793)},
        {"f64.max", makeF64(std::numeric_limits<double>::max())},
        {"bool.true", makeBool(true)},
        {"bool.false", makeBool(false)},
        {"string.empty", makeString("")},
        {"string.utf8", makeString("\xe2\x96\x81h\xc3\xa9llo <start_of_turn>")},
        {"string.nul", makeString(std::string("a\0b", 3))},
        {"array.empty", makeArray(ValueType::U32, {})},
        {"array.u8", makeArray(ValueType::U8, {makeU8(0), makeU8(255)})},
        {"array.i8", makeArray(ValueType::I8, {makeI8(-128), makeI8(127)})},
        {"array.u16", makeArray(ValueType::U16, {makeU16(1)})},
        {"array.i16", makeArray(ValueType::I16, {makeI16(-2)})},
        {"array.u32", makeArray(ValueType::U32, {makeU32(3)})},
        {"array.i32", makeI32Array({-4, 5})},
        {"array.u64", makeArray(ValueType::U64, {makeU64(uint64_t(1) << 63)})},
        {"array.i64", makeArray(ValueType::I64, {makeI64(-(int64_t(1) << 62))})},
        {"array.f32", makeF32Array({1.5f, -0.25f})},
        {"array.f64", makeArray(ValueType::F64, {makeF64(1e300)})},
        {"array.bool", makeArray(ValueType::Bool, {makeBool(true), makeBool(false)})},
        {"array.string", makeStringArray({"", "x", "\xf0\x9f\x98\x80"})},
        // Arrays of arrays: each inner array has its own element type.
        {"array.nested", makeArray(ValueType::Array, {makeI32Array({1, 2}), makeStringArray({"s"}),
                                                      makeArray(ValueType::F32, {})})},
        {"array.nested3", makeArray(ValueType::Array,
                                    {makeArray(ValueType::Array, {makeArray(ValueType::U8, {makeU8(9)})}),
                                     makeArray(ValueType::Array, {})})},
    };
    return v;
}

// Tensor bytes: deterministic noise of exactly the right size.
std::vector<uint8_t> noise(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = uint8_t(rng());
    return b;
}

struct TensorSpec {
    std::string name;
    kernels::GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
};

// One tensor of every type typeTraits knows, with 1 to 4 dims and odd byte sizes so padding matters.
std::vector<TensorSpec> everyTensorType() {
    std::vector<TensorSpec> specs;
    for (uint32_t id = 0; id < 64; ++id) {
        const kernels::TypeTraits* tr = kernels::typeTraits(id);
        if (!tr) continue;
        const auto type = static_cast<kernels::GgmlType>(id);
        const int nd = 1 + int(specs.size() % 4);
        std::vector<int64_t> ne = {tr->blockElems * (1 + int64_t(id % 3))};
        for (int d = 1; d < nd; ++d) ne.push_back(d == 1 ? 3 : 1 + d);
        uint64_t bytes = uint64_t(ne[0] / tr->blockElems * tr->blockBytes);
        for (int d = 1; d < nd; ++d) bytes *= uint64_t(ne[size_t(d)]);
        specs.push_back({std::string("t.") + tr->name, type, ne, noise(bytes, id)});
    }
    return specs;
}

GgufWriter buildWriter(uint64_t alignment, uint32_t version) {
    GgufWriter w(version);
    if (alignment != 32) w.setAlignment(alignment);
    for (auto& [k, v] : everyValue()) w.add(k, v);
    for (auto& t : everyTensorType()) w.addTensor(t.name, t.type, t.ne, t.data);
    return w;
}

void checkRoundTrip(const std::vector<uint8_t>& bytes, uint64_t alignment, uint32_t version) {
    const auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "rt");
    QCOMPARE(f->version(), version);
    QCOMPARE(f->alignment(), alignment);
    QCOMPARE(f->dataOffset() % alignment, uint64_t(0));
    const auto values = everyValue();
    // general.alignment is added by the writer only when it is not the default.
    QCOMPARE(f->metadata().size(), values.size() + (alignment != 32 ? 1 : 0));
    for (const auto& [k, v] : values) {
        const Value* got = f->find(k);
        QVERIFY2(got, k.c_str());
        std::string why;
        QVERIFY2(sameValue(v, *got, why), (k + ": " + why).c_str());
    }
    const auto specs = everyTensorType();
    QCOMPARE(f->tensors().size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        const TensorInfo& t = f->tensors()[i];
        const TensorSpec& s = specs[i];
        QCOMPARE(t.name, s.name);
        QCOMPARE(t.type, s.type);
        QCOMPARE(t.nDims, uint32_t(s.ne.size()));
        for (size_t d = 0; d < 4; ++d) QCOMPARE(t.ne[d], d < s.ne.size() ? s.ne[d] : int64_t(1));
        QCOMPARE(t.nbytes, uint64_t(s.data.size()));
        QCOMPARE(t.offset % alignment, uint64_t(0));
        QCOMPARE(uint64_t(t.data - bytes.data()), f->dataOffset() + t.offset);
        QVERIFY(std::memcmp(t.data, s.data.data(), s.data.size()) == 0);
        QCOMPARE(f->findTensor(s.name), &t);
    }
}

} // namespace

class GgufWriterTest : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data() {
        QTest::addColumn<qulonglong>("alignment");
        QTest::addColumn<uint>("version");
        QTest::newRow("v3 align 32") << qulonglong(32) << 3u;
        QTest::newRow("v3 align 64") << qulonglong(64) << 3u;
        QTest::newRow("v3 align 1") << qulonglong(1) << 3u;
        QTest::newRow("v2 align 256") << qulonglong(256) << 2u;
    }
    void roundTrip() {
        QFETCH(qulonglong, alignment);
        QFETCH(uint, version);
        const GgufWriter w = buildWriter(alignment, version);
        checkRoundTrip(w.toBytes(), alignment, version);
    }

    // writeFile streams the same bytes as toBytes, and the mmap path reads them.
    void fileMatchesBytes() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("rt.gguf").toStdString();
        const GgufWriter w = buildWriter(64, 3);
        w.writeFile(path);
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray onDisk = f.readAll();
        const std::vector<uint8_t> mem = w.toBytes();
        QCOMPARE(size_t(onDisk.size()), mem.size());
        QVERIFY(std::memcmp(onDisk.constData(), mem.data(), mem.size()) == 0);
        const auto g = GgufFile::open(path);
        QCOMPARE(g->fileSize(), uint64_t(mem.size()));
        QCOMPARE(g->tensors().size(), everyTensorType().size());
        QCOMPARE(g->getString("string.utf8").value(), std::string("\xe2\x96\x81h\xc3\xa9llo <start_of_turn>"));
    }

    // An independent reader (python gguf, WEIR_PYTHON) sees the same keys, types, values,
    // tensor shapes, offsets and bytes as we wrote. Expectations come from the inputs.
    void pythonGgufReadsOurFile() {
        const QString python = qEnvironmentVariable("WEIR_PYTHON");
        if (python.isEmpty() || !QFileInfo(python).isExecutable()) QSKIP("python with gguf not found (WEIR_PYTHON)");
        QTemporaryDir dir;
        const QString path = dir.filePath("py.gguf");
        buildWriter(64, 3).writeFile(path.toStdString());
        static const char* script = R"PY(
import hashlib, json, sys
from gguf import GGUFReader, GGUFValueType
r = GGUFReader(sys.argv[1])
out = {"alignment": int(r.alignment), "fields": {}, "tensors": []}
for name, f in r.fields.items():
    if name.startswith("GGUF."):
        continue
    vals = []
    for idx in f.data:
        part = f.parts[idx]
        vals.append(part.tobytes().hex() if f.types[-1] == GGUFValueType.STRING else repr(part.tolist()[0]))
    out["fields"][name] = {"types": [t.name for t in f.types], "values": vals}
for t in r.tensors:
    out["tensors"].append({"name": t.name, "type": int(t.tensor_type), "shape": [int(x) for x in t.shape],
                           "offset": int(t.data_offset) - int(r.data_offset),
                           "md5": hashlib.md5(t.data.tobytes()).hexdigest()})
print(json.dumps(out))
)PY";
        QProcess p;
        p.start(python, {"-c", script, path});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QJsonObject got = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(got.value("alignment").toInt(), 64);
        const QJsonObject fields = got.value("fields").toObject();
        static const std::map<ValueType, QString> pyName = {
            {ValueType::U8, "UINT8"}, {ValueType::I8, "INT8"}, {ValueType::U16, "UINT16"}, {ValueType::I16, "INT16"},
            {ValueType::U32, "UINT32"}, {ValueType::I32, "INT32"}, {ValueType::F32, "FLOAT32"},
            {ValueType::Bool, "BOOL"}, {ValueType::String, "STRING"}, {ValueType::Array, "ARRAY"},
            {ValueType::U64, "UINT64"}, {ValueType::I64, "INT64"}, {ValueType::F64, "FLOAT64"}};
        int compared = 0;
        for (const auto& [key, value] : everyValue()) {
            const QJsonObject f = fields.value(QString::fromStdString(key)).toObject();
            QVERIFY2(!f.isEmpty(), key.c_str());
            const Array* arr = value.asArray();
            if (arr && (arr->elementType == ValueType::Array || arr->items.empty())) continue;  // python flattens these
            const ValueType leaf = arr ? arr->elementType : value.type;
            QStringList types;
            for (const QJsonValue& t : f.value("types").toArray()) types << t.toString();
            const QStringList expectedTypes = arr ? QStringList{"ARRAY", pyName.at(leaf)} : QStringList{pyName.at(leaf)};
            QCOMPARE(types, expectedTypes);
            const std::vector<Value> items = arr ? arr->items : std::vector<Value>{value};
            const QJsonArray vals = f.value("values").toArray();
            QCOMPARE(vals.size(), qsizetype(items.size()));
            for (size_t i = 0; i < items.size(); ++i) {
                const QString v = vals[qsizetype(i)].toString();
                const Value& item = items[i];
                if (const auto* s = item.asString()) {
                    QCOMPARE(v, QString(QByteArray(s->data(), qsizetype(s->size())).toHex()));
                } else if (const auto* b = std::get_if<bool>(&item.data)) {
                    QCOMPARE(v, QString(*b ? "True" : "False"));
                } else if (const auto* d = std::get_if<double>(&item.data)) {
                    if (std::isnan(*d)) QCOMPARE(v, QString("nan"));
                    else if (std::isinf(*d)) QCOMPARE(v, QString(*d > 0 ? "inf" : "-inf"));
                    else QCOMPARE(v.toDouble(), *d);
                } else if (const auto* u = std::get_if<uint64_t>(&item.data)) {
                    QCOMPARE(v, QString::number(*u));
                } else {
                    QCOMPARE(v, QString::number(std::get<int64_t>(item.data)));
                }
            }
            ++compared;
        }
        QVERIFY(compared > 25);
        const QJsonArray tensors = got.value("tensors").toArray();
        const auto specs = everyTensorType();
        QCOMPARE(tensors.size(), qsizetype(specs.size()));
        uint64_t expectedOffset = 0;
        for (size_t i = 0; i < specs.size(); ++i) {
            const QJsonObject t = tensors[qsizetype(i)].toObject();
            QCOMPARE(t.value("name").toString(), QString::fromStdString(specs[i].name));
            QCOMPARE(t.value("type").toInt(), int(specs[i].type));
            QJsonArray shape;
            for (int64_t n : specs[i].ne) shape.append(qint64(n));
            QCOMPARE(t.value("shape").toArray(), shape);
            QCOMPARE(uint64_t(t.value("offset").toInteger()), expectedOffset);
            expectedOffset = (expectedOffset + specs[i].data.size() + 63) / 64 * 64;
            // python gguf sizes Q8_1 blocks as 40 bytes (two f32); ggml's block_q8_1 is two
            // f16 + 32 int8 = 36 bytes, as typeTraits says. Q8_1 only exists as an activation
            // format, never in model files, so its bytes are not compared.
            if (specs[i].type == kernels::GgmlType::Q8_1) continue;
            const QByteArray md5 = QCryptographicHash::hash(
                QByteArrayView(specs[i].data.data(), qsizetype(specs[i].data.size())), QCryptographicHash::Md5);
            QVERIFY2(t.value("md5").toString() == QString(md5.toHex()), specs[i].name.c_str());
        }
    }

    // The header layout follows the spec byte for byte (checked by hand, not through our reader).
    void headerLayout() {
        GgufWriter w;
        w.addU32("k", 7);
        w.addTensor("t", kernels::GgmlType::F32, {2}, std::vector<uint8_t>(8, 0xab));
        const std::vector<uint8_t> b = w.toBytes();
        const auto u32 = [&](size_t at) { uint32_t v; std::memcpy(&v, &b[at], 4); return v; };
        const auto u64 = [&](size_t at) { uint64_t v; std::memcpy(&v, &b[at], 8); return v; };
        QCOMPARE(std::string(reinterpret_cast<const char*>(b.data()), 4), std::string("GGUF"));
        QCOMPARE(u32(4), 3u);
        QCOMPARE(u64(8), uint64_t(1));   // tensor_count
        QCOMPARE(u64(16), uint64_t(1));  // kv_count
        QCOMPARE(u64(24), uint64_t(1));  // key length
        QCOMPARE(char(b[32]), 'k');
        QCOMPARE(u32(33), 4u);  // u32
        QCOMPARE(u32(37), 7u);
        QCOMPARE(u64(41), uint64_t(1));  // name length
        QCOMPARE(char(b[49]), 't');
        QCOMPARE(u32(50), 1u);           // n_dims
        QCOMPARE(u64(54), uint64_t(2));  // ne[0]
        QCOMPARE(u32(62), 0u);           // F32
        QCOMPARE(u64(66), uint64_t(0));  // offset
        // Infos end at 74; data starts at 96 after zero padding.
        QCOMPARE(b.size(), size_t(96 + 8));
        for (size_t i = 74; i < 96; ++i) QCOMPARE(b[i], uint8_t(0));
        QCOMPARE(b[96], uint8_t(0xab));
    }

    void refusals() {
        const auto refuses = [](auto fn, const char* text) {
            try {
                fn();
            } catch (const Error& e) {
                return std::string(e.what()).find(text) != std::string::npos;
            }
            return false;
        };
        GgufWriter w;
        w.addU32("a", 1);
        QVERIFY(refuses([&] { w.addU32("a", 2); }, "duplicate key 'a'"));
        QVERIFY(refuses([&] { w.add("bad", makeArray(ValueType::U8, {makeU16(1)})); }, "array item of type u16"));
        QVERIFY(refuses([&] { w.add("bad", Value{ValueType::String, uint64_t(1)}); }, "does not hold a string"));
        QVERIFY(refuses([&] { w.setAlignment(48); }, "not a power of two"));
        QVERIFY(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {4}, std::vector<uint8_t>(15)); },
                        "needs 16 bytes, got 15"));
        QVERIFY(refuses([&] { w.addTensor("t", kernels::GgmlType::Q4_K, {128}, std::vector<uint8_t>(72)); },
                        "multiple of the block size"));
        QVERIFY(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {}, std::vector<uint8_t>()); },
                        "1 to 4 dimensions"));
        QVERIFY(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {1, 0}, std::vector<uint8_t>()); },
                        "dimension <= 0"));
        QVERIFY(refuses([&] { w.addTensor("t", static_cast<kernels::GgmlType>(99), {1}, std::vector<uint8_t>(4)); },
                        "unknown type"));
        w.addTensor("t", kernels::GgmlType::F32, {1}, std::vector<uint8_t>(4));
        QVERIFY(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {1}, std::vector<uint8_t>(4)); },
                        "duplicate tensor name"));
    }

    // Setting general.alignment as a key also changes the layout.
    void alignmentKeySetsAlignment() {
        GgufWriter w;
        w.add("general.alignment", makeU32(128));
        QCOMPARE(w.alignment(), uint64_t(128));
        w.addTensor("a", kernels::GgmlType::F32, {3}, std::vector<uint8_t>(12, 1));
        w.addTensor("b", kernels::GgmlType::F32, {3}, std::vector<uint8_t>(12, 2));
        const auto bytes = w.toBytes();
        const auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "a");
        QCOMPARE(f->alignment(), uint64_t(128));
        QCOMPARE(f->metadata().size(), size_t(1));
        QCOMPARE(f->findTensor("b")->offset, uint64_t(128));
        QCOMPARE(f->findTensor("b")->data[0], uint8_t(2));
    }
};

QTEST_APPLESS_MAIN(GgufWriterTest)
#include "gguf_writer_test.moc"
