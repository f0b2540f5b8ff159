// GGUF reader: malformed input gives one-line "NAME: offset N: problem" errors
// (never a crash), truncation anywhere is caught, and well-formed edge cases
// (v2, custom alignment, deep-but-allowed nesting) are accepted.
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"
#include "malformed_gguf_cases.h"

using namespace weir;
using namespace weir::gguf;
using weir::gguf::testing::MalformedCase;
using weir::gguf::testing::RawGguf;

namespace {

// Runs the parser; returns the error message, or "" if it parsed.
std::string parseError(const std::vector<uint8_t>& bytes, const std::string& name) {
    try {
        GgufFile::fromMemory(bytes.data(), bytes.size(), name);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// A small valid file exercising every section: metadata of several types,
// a nested array, and tensors of a few types.
std::vector<uint8_t> smallValidFile() {
    GgufWriter w;
    w.addString("general.architecture", "test");
    w.addU32("test.block_count", 2);
    w.add("test.tokens", makeStringArray({"a", "bb", "ccc"}));
    w.add("test.nested", makeArray(ValueType::Array, {makeF32Array({1.f, 2.f}), makeI32Array({-1})}));
    std::vector<uint8_t> f32(4 * 8, 1), q8(34 * 2, 2);
    w.addTensor("a", kernels::GgmlType::F32, {8}, f32);
    w.addTensor("b", kernels::GgmlType::Q8_0, {32, 2}, q8);
    return w.toBytes();
}

} // namespace

class GgufReaderTest : public QObject {
    Q_OBJECT
private slots:
    void malformed_data() {
        QTest::addColumn<int>("index");
        const auto cases = testing::malformedCases();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name.c_str()) << int(i);
    }
    // Each hand-built bad file fails with the expected offset and problem, on one line.
    void malformed() {
        QFETCH(int, index);
        const MalformedCase c = testing::malformedCases()[size_t(index)];
        const std::string msg = parseError(c.bytes, c.name + ".gguf");
        QVERIFY2(!msg.empty(), "malformed file was accepted");
        const std::string prefix = c.name + ".gguf: offset " + std::to_string(c.offset) + ": ";
        QVERIFY2(msg.rfind(prefix, 0) == 0, ("expected prefix '" + prefix + "', got: " + msg).c_str());
        QVERIFY2(msg.find(c.problem) != std::string::npos, ("expected '" + c.problem + "' in: " + msg).c_str());
        QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
    }

    // Same through the mmap path: the message names the real path.
    void malformedFromDisk() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const MalformedCase& c : testing::malformedCases()) {
            const std::string path = dir.filePath(QString::fromStdString(c.name + ".gguf")).toStdString();
            QFile f(QString::fromStdString(path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(reinterpret_cast<const char*>(c.bytes.data()), qint64(c.bytes.size()));
            f.close();
            std::string msg;
            try {
                GgufFile::open(path);
            } catch (const Error& e) {
                msg = e.what();
            }
            const std::string prefix = path + ": offset " + std::to_string(c.offset) + ": ";
            QVERIFY2(msg.rfind(prefix, 0) == 0, (c.name + ": " + msg).c_str());
            QVERIFY2(msg.find(c.problem) != std::string::npos, (c.name + ": " + msg).c_str());
        }
    }

    void missingFileAndDirectory() {
        QTemporaryDir dir;
        const std::string missing = dir.filePath("nope.gguf").toStdString();
        try {
            GgufFile::open(missing);
            QFAIL("opened a missing file");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).rfind(missing + ": cannot open", 0) == 0);
        }
        try {
            GgufFile::open(dir.path().toStdString());
            QFAIL("opened a directory");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("not a regular file") != std::string::npos);
        }
    }

    // Cutting a valid file at any byte gives an error, never a crash or a silent success.
    void truncatedAnywhere() {
        const std::vector<uint8_t> full = smallValidFile();
        QVERIFY(parseError(full, "full").empty());
        const auto file = GgufFile::fromMemory(full.data(), full.size(), "full");
        const uint64_t dataStart = file->dataOffset();
        for (size_t n = 0; n < full.size(); ++n) {
            const std::vector<uint8_t> cut(full.begin(), full.begin() + long(n));
            const std::string msg = parseError(cut, "cut");
            QVERIFY2(!msg.empty(), ("prefix of " + std::to_string(n) + " bytes was accepted").c_str());
            // Cuts before the data section are reported as truncation (or as a count or
            // length that no longer fits); cuts inside it as a tensor outside the file.
            if (n >= dataStart) {
                QVERIFY2(msg.find("lies outside the file") != std::string::npos, msg.c_str());
            } else {
                const bool named = msg.find("truncated file") != std::string::npos ||
                                   msg.find("cannot fit") != std::string::npos ||
                                   msg.find("past the end") != std::string::npos ||
                                   msg.find("lies outside the file") != std::string::npos;
                QVERIFY2(named, msg.c_str());
            }
        }
    }

    // Random byte corruption (fixed seed) never crashes: every result parses or throws weir::Error.
    void corruptedBytesNeverCrash() {
        const std::vector<uint8_t> full = smallValidFile();
        std::mt19937_64 rng(1234);
        int errors = 0, parsed = 0;
        for (int iter = 0; iter < 3000; ++iter) {
            std::vector<uint8_t> bytes = full;
            const int flips = 1 + int(rng() % 4);
            for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = uint8_t(rng());
            try {
                const auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "x");
                for (const TensorInfo& t : f->tensors()) {
                    // Every accepted tensor lies inside the buffer.
                    QVERIFY(t.data >= bytes.data() && t.data + t.nbytes <= bytes.data() + bytes.size());
                }
                ++parsed;
            } catch (const Error& e) {
                QVERIFY(std::string(e.what()).rfind("x: ", 0) == 0);
                ++errors;
            }
        }
        QVERIFY(errors > 0);
        QVERIFY(parsed > 0);
    }

    // 8 levels of nested arrays are allowed (the 9th is refused, see malformed()).
    void nestingAtTheLimitIsAccepted() {
        RawGguf r;
        r.header(0, 1).str("deep").u32(9);
        for (int level = 0; level < 7; ++level) r.u32(9).u64(1);
        r.u32(4).u64(1).u32(77);  // innermost: u32[1] = {77}
        const auto f = GgufFile::fromMemory(r.b.data(), r.b.size(), "deep");
        const Value* v = f->find("deep");
        QVERIFY(v);
        int depth = 0;
        while (v->asArray() && v->asArray()->elementType == ValueType::Array) {
            v = &v->asArray()->items.at(0);
            ++depth;
        }
        QCOMPARE(depth, 7);
        QCOMPARE(v->asArray()->items.at(0).asInt().value(), 77);
    }

    // Version 2 files and a non-default alignment are read; the data section starts aligned.
    void version2AndAlignment() {
        RawGguf r;
        r.header(1, 1, 2).kvU32("general.alignment", 64).tensor("t", {4}, 0, 0);
        const uint64_t end = r.pos();
        r.padTo(64);
        const uint64_t dataStart = r.pos();
        QVERIFY(dataStart > end);
        r.put<float>(1.f).put<float>(2.f).put<float>(3.f).put<float>(4.f);
        const auto f = GgufFile::fromMemory(r.b.data(), r.b.size(), "v2");
        QCOMPARE(f->version(), 2u);
        QCOMPARE(f->alignment(), uint64_t(64));
        QCOMPARE(f->dataOffset(), dataStart);
        const TensorInfo* t = f->findTensor("t");
        QVERIFY(t);
        QCOMPARE(t->data, r.b.data() + dataStart);  // used in place, not copied
        float x[4];
        std::memcpy(x, t->data, 16);
        QCOMPARE(x[3], 4.f);
    }

    // A file with no tensors and nothing after the metadata is valid.
    void metadataOnly() {
        RawGguf r;
        r.header(0, 1).kvU32("a", 5);
        const auto f = GgufFile::fromMemory(r.b.data(), r.b.size(), "m");
        QCOMPARE(f->getInt("a").value(), 5);
        QVERIFY(f->tensors().empty());
    }

    // Integer keys may be stored with any integer type; getters convert, and refuse the wrong kind.
    void typedGetters() {
        GgufWriter w;
        w.add("u8", makeU8(200));
        w.add("i64", makeI64(-5));
        w.add("u64big", makeU64(~uint64_t(0)));
        w.addF32("f", 0.5f);
        w.addBool("b", true);
        w.addString("s", "text");
        w.add("tokens", makeStringArray({"x", "y"}));
        w.add("scores", makeF32Array({0.25f, -1.f}));
        w.add("types", makeI32Array({1, 6}));
        w.add("u16s", makeArray(ValueType::U16, {makeU16(7), makeU16(9)}));
        const auto bytes = w.toBytes();
        const auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "g");
        QCOMPARE(f->getInt("u8").value(), 200);
        QCOMPARE(f->getInt("i64").value(), -5);
        QCOMPARE(f->getFloat("u8").value(), 200.0);
        QCOMPARE(f->getFloat("f").value(), 0.5);
        QCOMPARE(f->getBool("b").value(), true);
        QCOMPARE(f->getString("s").value(), std::string("text"));
        QVERIFY(!f->getInt("absent").has_value());
        QVERIFY(!f->getStringArray("absent").has_value());
        QCOMPARE(f->getStringArray("tokens").value(), (std::vector<std::string>{"x", "y"}));
        QCOMPARE(f->getFloatArray("scores").value(), (std::vector<float>{0.25f, -1.f}));
        QCOMPARE(f->getIntArray("types").value(), (std::vector<int64_t>{1, 6}));
        QCOMPARE(f->getIntArray("u16s").value(), (std::vector<int64_t>{7, 9}));
        const auto throwsNaming = [](auto fn, const char* text) {
            try {
                fn();
            } catch (const Error& e) {
                return std::string(e.what()).find(text) != std::string::npos;
            }
            return false;
        };
        QVERIFY(throwsNaming([&] { f->getInt("s"); }, "key 's' is string, expected an integer"));
        QVERIFY(throwsNaming([&] { f->getInt("u64big"); }, "expected an integer"));
        QVERIFY(throwsNaming([&] { f->getString("u8"); }, "expected a string"));
        QVERIFY(throwsNaming([&] { f->getBool("u8"); }, "expected a bool"));
        QVERIFY(throwsNaming([&] { f->getStringArray("scores"); }, "is array of f32, expected an array of strings"));
        QVERIFY(throwsNaming([&] { f->getIntArray("scores"); }, "expected an array of integers"));
        QVERIFY(throwsNaming([&] { f->getFloatArray("tokens"); }, "expected an array of numbers"));
        QVERIFY(throwsNaming([&] { f->getFloatArray("s"); }, "expected an array of numbers"));
    }

    // A file written by the python gguf package (tests/fuzz/make_gguf_seeds.py): an
    // independent writer, so the values below come from that script, not from our code.
    void readsPythonWrittenFile() {
        const QString path = qEnvironmentVariable("WEIR_SOURCE_DIR") + "/tests/fuzz/corpus/gguf_reader/valid_small";
        if (!QFileInfo::exists(path)) QSKIP("seed corpus not found (WEIR_SOURCE_DIR)");
        const auto f = GgufFile::open(path.toStdString());
        QCOMPARE(f->version(), 3u);
        QCOMPARE(f->getString("general.architecture").value(), std::string("tiny"));
        QCOMPARE(f->getInt("tiny.block_count").value(), 2);
        QCOMPARE(f->getInt("tiny.offset").value(), -7);
        QCOMPARE(f->getFloat("tiny.eps").value(), 0.5);
        QCOMPARE(f->getFloat("tiny.f64").value(), -2.25);
        QCOMPARE(f->getBool("tiny.flag").value(), true);
        QCOMPARE(f->find("tiny.u8")->type, ValueType::U8);
        QCOMPARE(f->getInt("tiny.u8").value(), 200);
        QCOMPARE(f->getInt("tiny.i8").value(), -100);
        QCOMPARE(f->getInt("tiny.u16").value(), 60000);
        QCOMPARE(f->getInt("tiny.i16").value(), -30000);
        QCOMPARE(f->getInt("tiny.u64").value(), int64_t(1) << 40);
        QCOMPARE(f->getInt("tiny.i64").value(), -(int64_t(1) << 40));
        QCOMPARE(f->getStringArray("tiny.tokens").value(), (std::vector<std::string>{"<pad>", "a", "\xe2\x96\x81" "b"}));
        QCOMPARE(f->getFloatArray("tiny.scores").value(), (std::vector<float>{0.f, -1.5f, 2.f}));
        const Array* nested = f->find("tiny.nested")->asArray();
        QVERIFY(nested && nested->elementType == ValueType::Array && nested->items.size() == 2);
        QCOMPARE(nested->items[0].asArray()->items.size(), size_t(2));
        QCOMPARE(nested->items[1].asArray()->items[0].asInt().value(), 3);
        QCOMPARE(f->tensors().size(), size_t(3));
        const TensorInfo* t = f->findTensor("t.f32");
        QVERIFY(t);
        float x[8];
        std::memcpy(x, t->data, sizeof x);
        for (int i = 0; i < 8; ++i) QCOMPARE(x[i], float(i));  // np.arange(8)
        const TensorInfo* q8 = f->findTensor("t.q8_0");
        QVERIFY(q8 && q8->type == kernels::GgmlType::Q8_0 && q8->ne[0] == 32 && q8->ne[1] == 2 && q8->nbytes == 68);
        QCOMPARE(q8->data[1], uint8_t(0x3c));
        const TensorInfo* q4 = f->findTensor("t.q4_k");
        QVERIFY(q4 && q4->type == kernels::GgmlType::Q4_K && q4->ne[0] == 256 && q4->nbytes == 144);
        QCOMPARE(q4->data[143], uint8_t(0x11));
    }

    void displayStrings() {
        QCOMPARE(makeU32(7).toDisplayString(), std::string("7"));
        QCOMPARE(makeI8(-3).toDisplayString(), std::string("-3"));
        QCOMPARE(makeF32(0.1f).toDisplayString(), std::string("0.1"));
        QCOMPARE(makeBool(false).toDisplayString(), std::string("false"));
        QCOMPARE(makeString("a\"b\n").toDisplayString(), std::string("\"a\\\"b\\n\""));
        QCOMPARE(makeI32Array({1, 2, 3, 4}).toDisplayString(2), std::string("[1, 2, ...] (4 items)"));
        QCOMPARE(makeI32Array({1, 2}).toDisplayString(2), std::string("[1, 2]"));
        const std::string longText(500, 'x');
        const std::string shown = makeString(longText).toDisplayString();
        QVERIFY(shown.size() < 150);
        QVERIFY(shown.find("(500 bytes)") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(GgufReaderTest)
#include "gguf_reader_test.moc"
