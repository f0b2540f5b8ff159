// dequantizeRow / dotRowF32 / getRow against the python gguf package, and the
// Q8 activation quantizers against a numpy transcription of llama.cpp's
// formulas (data: tests/reference/make_quant_reference.py).
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>

#include "weir/base/error.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "quant_test_util.h"

using namespace weir::kernels;
using namespace weirtest;

class QuantRowsTest : public QObject {
    Q_OBJECT
    QuantReference ref_;

    QJsonObject tensor(const QString& name) {
        for (const auto& v : ref_.manifest["tensors"].toArray())
            if (v.toObject()["name"].toString() == name) return v.toObject();
        return {};
    }

private slots:
    void initTestCase() {
        QVERIFY2(ref_.load(), qPrintable("missing reference data in " + quantDataDir() +
                                         " (run tests/reference/make_quant_reference.py)"));
        QCOMPARE(ref_.manifest["tensors"].toArray().size(), qsizetype(allTypes().size()));
    }

    void dequantizeRow_matchesGguf_data() {
        QTest::addColumn<QString>("name");
        for (GgmlType t : allTypes()) QTest::newRow(typeName(t)) << QString(typeName(t));
    }
    void dequantizeRow_matchesGguf() {
        QFETCH(QString, name);
        const QJsonObject t = tensor(name);
        QVERIFY(!t.isEmpty());
        const auto type = GgmlType(t["type"].toInt());
        const int64_t n = t["elements"].toInteger();
        QCOMPARE(int64_t(rowBytes(type, n)), t["data_bytes"].toInteger());
        const uint8_t* data = ref_.at(t["data_offset"].toInteger());
        const std::vector<float> expected = ref_.floats(t["values_offset"].toInteger(), n);

        // Whole tensor at once, then in rows of 256 (every block size divides it).
        std::vector<float> got(static_cast<size_t>(n), NAN);
        dequantizeRow(type, data, got.data(), n);
        std::vector<float> pieces(static_cast<size_t>(n), NAN);
        for (int64_t i = 0; i < n; i += 256) dequantizeRow(type, data + rowBytes(type, i), pieces.data() + i, 256);
        for (int64_t i = 0; i < n; ++i) {
            // Bit-exact: same formula, same f32 operations, no FMA contraction.
            if (std::memcmp(&got[size_t(i)], &expected[size_t(i)], 4) != 0 ||
                std::memcmp(&pieces[size_t(i)], &expected[size_t(i)], 4) != 0)
                QFAIL(qPrintable(QString("%1 element %2: got %3 (pieces %4), gguf says %5")
                                     .arg(name).arg(i).arg(double(got[size_t(i)]), 0, 'g', 9)
                                     .arg(double(pieces[size_t(i)]), 0, 'g', 9).arg(double(expected[size_t(i)]), 0, 'g', 9)));
        }
    }

    void dotRowF32_matchesDouble_data() { dequantizeRow_matchesGguf_data(); }
    void dotRowF32_matchesDouble() {
        QFETCH(QString, name);
        const QJsonObject t = tensor(name);
        const auto type = GgmlType(t["type"].toInt());
        const int64_t n = t["elements"].toInteger();
        const uint8_t* data = ref_.at(t["data_offset"].toInteger());
        const std::vector<float> w = ref_.floats(t["values_offset"].toInteger(), n);
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(n));
        for (auto& v : x) v = normal(rng);

        const int64_t block = typeTraits(type)->blockElems;
        // Full length, one block, and (for the plain types) lengths that leave tails.
        std::vector<int64_t> lengths = {n, block == 1 ? 1 : block, 3 * block, n - block};
        if (block == 1) lengths.insert(lengths.end(), {7, 37, 263});
        for (int64_t len : lengths) {
            double exact = 0.0, mag = 0.0;
            for (int64_t i = 0; i < len; ++i) {
                exact += double(w[size_t(i)]) * double(x[size_t(i)]);
                mag += std::fabs(double(w[size_t(i)]) * double(x[size_t(i)]));
            }
            const double got = dotRowF32(type, data, x.data(), len);
            const double tol = 4e-6 * mag + 1e-30;
            if (std::fabs(got - exact) > tol)
                QFAIL(qPrintable(QString("%1 n=%2: dot %3, double reference %4 (tolerance %5)")
                                     .arg(name).arg(len).arg(got, 0, 'g', 10).arg(exact, 0, 'g', 10).arg(tol)));
        }
    }

    void getRow_returnsDequantizedRow() {
        for (GgmlType type : allTypes()) {
            const QJsonObject t = tensor(typeName(type));
            const int64_t n = t["elements"].toInteger(), cols = 256;
            const std::vector<float> expected = ref_.floats(t["values_offset"].toInteger(), n);
            const WeightView w{type, ref_.at(t["data_offset"].toInteger()), cols, n / cols, rowBytes(type, cols)};
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r : {int64_t(0), int64_t(5), n / cols - 1}) {
                getRow(w, r, row.data());
                QVERIFY2(std::memcmp(row.data(), expected.data() + r * cols, size_t(cols) * 4) == 0, typeName(type));
            }
        }
    }

    void cleanup() { resetKernelPath(); }

    // The quantizers have a scalar and an AVX2 version; both must write exactly
    // the python bytes.
    void q8Quantizers_matchPythonFormula_data() {
        QTest::addColumn<int>("path");
        QTest::addColumn<QString>("format");
        for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2})
            for (const char* f : {"Q8_0", "Q8_1", "Q8_K"})
                QTest::addRow("%s/%s", kernelPathName(p), f) << int(p) << QString(f);
    }
    void q8Quantizers_matchPythonFormula() {
        QFETCH(int, path);
        QFETCH(QString, format);
        if (!forceKernelPath(KernelPath(path))) QSKIP("kernel path not supported by this CPU");
        const QJsonObject a = ref_.manifest["activations"].toObject();
        const int rows = a["rows"].toInt();
        const int64_t k = a["k"].toInteger();
        const size_t rowBytesExpected = size_t(a[format + "_row_bytes"].toInteger());
        const std::vector<float> x = ref_.floats(a["input_offset"].toInteger(), rows * k);
        const uint8_t* expected = ref_.at(a[format + "_offset"].toInteger());
        auto quantize = format == "Q8_0" ? quantizeRowQ8_0 : format == "Q8_1" ? quantizeRowQ8_1 : quantizeRowQ8_K;
        const size_t blockBytes = format == "Q8_0" ? kQ8_0BlockBytes : format == "Q8_1" ? kQ8_1BlockBytes : kQ8_KBlockBytes;
        const int64_t blockElems = format == "Q8_K" ? 256 : 32;
        QCOMPARE(rowBytesExpected, size_t(k / blockElems) * blockBytes);
        std::vector<uint8_t> got(rowBytesExpected);
        for (int r = 0; r < rows; ++r) {
            quantize(x.data() + r * k, got.data(), k);
            const uint8_t* want = expected + r * rowBytesExpected;
            for (size_t i = 0; i < rowBytesExpected; ++i)
                if (got[i] != want[i])
                    QFAIL(qPrintable(QString("%1 row %2: byte %3 (block %4, offset %5) is %6, python says %7")
                                         .arg(format).arg(r).arg(i).arg(i / blockBytes).arg(i % blockBytes)
                                         .arg(got[i]).arg(want[i])));
        }
    }

    // F16/BF16 activation conversion (used for F16/BF16 weights): the AVX2 path
    // must round exactly like f32ToF16/f32ToBf16, including ties, subnormals,
    // overflow and NaN.
    void halfConversions_pathsAgree() {
        if (!forceKernelPath(KernelPath::Avx2)) QSKIP("no AVX2 on this CPU");
        std::mt19937 rng(3);
        std::vector<float> x;
        for (uint32_t bits : {0x00000000u, 0x80000000u, 0x33000000u, 0x33000001u, 0x387fc000u, 0x38800000u, 0x477fefffu,
                              0x477ff000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffa00000u,
                              0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x00000001u, 0x3fff8000u})
            x.push_back(std::bit_cast<float>(bits));
        std::uniform_int_distribution<uint32_t> any;
        while (x.size() < 4099) x.push_back(std::bit_cast<float>(any(rng)));  // odd length: scalar tail too
        for (GgmlType t : {GgmlType::F16, GgmlType::BF16}) {
            std::vector<uint16_t> fast(x.size()), slow(x.size());
            // For F16 this also checks f32ToF16 against the F16C instruction.
            for (size_t i = 0; i < x.size(); ++i) slow[i] = t == GgmlType::F16 ? f32ToF16(x[i]) : f32ToBf16(x[i]);
            (t == GgmlType::F16 ? weir::kernels::detail::convertRowF16 : weir::kernels::detail::convertRowBF16)(
                x.data(), fast.data(), int64_t(x.size()));
            for (size_t i = 0; i < x.size(); ++i)
                if (fast[i] != slow[i])
                    QFAIL(qPrintable(QString("%1: 0x%2 -> avx2 0x%3, scalar 0x%4").arg(typeName(t))
                                         .arg(std::bit_cast<uint32_t>(x[i]), 8, 16, QChar('0'))
                                         .arg(fast[i], 4, 16, QChar('0')).arg(slow[i], 4, 16, QChar('0'))));
        }
    }

    void badInput_throwsNamedError() {
        float out[64];
        const uint8_t zeros[256] = {};
        auto expectError = [](auto fn, const char* needle) {
            try {
                fn();
            } catch (const weir::Error& e) {
                QVERIFY2(QString(e.what()).contains(needle), e.what());
                return;
            }
            QFAIL(qPrintable(QString("no weir::Error mentioning ") + needle));
        };
        expectError([&] { dequantizeRow(GgmlType::Q2_K, zeros, out, 256); }, "Q2_K");
        expectError([&] { dequantizeRow(GgmlType(99), zeros, out, 32); }, "99");
        expectError([&] { dequantizeRow(GgmlType::Q4_0, zeros, out, 33); }, "block size 32");
        expectError([&] { dotRowF32(GgmlType::Q3_K, zeros, out, 256); }, "Q3_K");
        const WeightView w{GgmlType::Q8_0, zeros, 32, 4, 34};
        expectError([&] { getRow(w, 4, out); }, "out of range");
        expectError([&] { getRow(w, -1, out); }, "out of range");
    }
};

QTEST_APPLESS_MAIN(QuantRowsTest)
#include "quant_rows_test.moc"
