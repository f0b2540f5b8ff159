// dequantizeRow / dotRowF32 / getRow against the python gguf package, and the
// Q8 activation quantizers against a numpy transcription of llama.cpp's
// formulas (data: tests/reference/make_quant_reference.py).
#include "tests/support/weir_test.h"

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

namespace {

QuantReference ref_;

const Json& tensor(const std::string& name) {
    for (const auto& v : items(field(ref_.manifest, "tensors")))
        if (text(field(v, "name")) == name) return v;
    return missingJson();
}

struct TypeRow {
    std::string name;
};
std::vector<TypeRow> typeRows() {
    std::vector<TypeRow> rows;
    for (GgmlType t : allTypes()) rows.push_back({typeName(t)});
    return rows;
}

} // namespace

WEIR_TEST_SUITE_SETUP(QuantRows) {
    REQUIRE_MSG(ref_.load(), "missing reference data in " + quantDataDir() +
                                     " (run tests/reference/make_quant_reference.py)");
    REQUIRE_EQ(items(field(ref_.manifest, "tensors")).size(), allTypes().size());
}

WEIR_TEST(QuantRows, dequantizeRow_matchesGguf) {
    eachRow(typeRows(), [](const TypeRow& row) {
        const std::string& name = row.name;
        const Json& t = tensor(name);
        REQUIRE(t.isDict());
        const auto type = GgmlType(integer(field(t, "type")));
        const int64_t n = integer(field(t, "elements"));
        REQUIRE_EQ(int64_t(rowBytes(type, n)), integer(field(t, "data_bytes")));
        const uint8_t* data = ref_.at(integer(field(t, "data_offset")));
        const std::vector<float> expected = ref_.floats(integer(field(t, "values_offset")), n);

        // Whole tensor at once, then in rows of 256 (every block size divides it).
        std::vector<float> got(static_cast<size_t>(n), NAN);
        dequantizeRow(type, data, got.data(), n);
        std::vector<float> pieces(static_cast<size_t>(n), NAN);
        for (int64_t i = 0; i < n; i += 256) dequantizeRow(type, data + rowBytes(type, i), pieces.data() + i, 256);
        for (int64_t i = 0; i < n; ++i) {
            // Bit-exact: same formula, same f32 operations, no FMA contraction.
            if (std::memcmp(&got[size_t(i)], &expected[size_t(i)], 4) != 0 ||
                std::memcmp(&pieces[size_t(i)], &expected[size_t(i)], 4) != 0)
                FAIL(str(name, " element ", i, ": got ", got[size_t(i)], " (pieces ", pieces[size_t(i)], "), gguf says ",
                         expected[size_t(i)]));
        }
    });
}

WEIR_TEST(QuantRows, dotRowF32_matchesDouble) {
    eachRow(typeRows(), [](const TypeRow& row) {
        const std::string& name = row.name;
        const Json& t = tensor(name);
        const auto type = GgmlType(integer(field(t, "type")));
        const int64_t n = integer(field(t, "elements"));
        const uint8_t* data = ref_.at(integer(field(t, "data_offset")));
        const std::vector<float> w = ref_.floats(integer(field(t, "values_offset")), n);
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
                FAIL(str(name, " n=", len, ": dot ", got, ", double reference ", exact, " (tolerance ", tol, ")"));
        }
    });
}

WEIR_TEST(QuantRows, getRow_returnsDequantizedRow) {
    for (GgmlType type : allTypes()) {
        const Json& t = tensor(typeName(type));
        const int64_t n = integer(field(t, "elements")), cols = 256;
        const std::vector<float> expected = ref_.floats(integer(field(t, "values_offset")), n);
        const WeightView w{type, ref_.at(integer(field(t, "data_offset"))), cols, n / cols, rowBytes(type, cols)};
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r : {int64_t(0), int64_t(5), n / cols - 1}) {
            getRow(w, r, row.data());
            REQUIRE_MSG(std::memcmp(row.data(), expected.data() + r * cols, size_t(cols) * 4) == 0, typeName(type));
        }
    }
}

WEIR_TEST_EACH_TEARDOWN(QuantRows) { resetKernelPath(); }

// The quantizers have a scalar and an AVX2 version; both must write exactly
// the python bytes.
struct QuantizerRow {
    std::string name;
    KernelPath path;
    std::string format;
};

WEIR_TEST(QuantRows, q8Quantizers_matchPythonFormula) {
    std::vector<QuantizerRow> table;
    for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2})
        for (const char* f : {"Q8_0", "Q8_1", "Q8_K"})
            table.push_back({str(kernelPathName(p), "/", f), p, f});
    eachRow(table, [](const QuantizerRow& row) {
        const std::string& format = row.format;
        resetKernelPath();  // each row starts from the CPU's own choice
        if (!forceKernelPath(row.path)) SKIP("kernel path not supported by this CPU");
        const Json& a = field(ref_.manifest, "activations");
        const int rows = int(integer(field(a, "rows")));
        const int64_t k = integer(field(a, "k"));
        const size_t rowBytesExpected = size_t(integer(field(a, format + "_row_bytes")));
        const std::vector<float> x = ref_.floats(integer(field(a, "input_offset")), rows * k);
        const uint8_t* expected = ref_.at(integer(field(a, format + "_offset")));
        auto quantize = format == "Q8_0" ? quantizeRowQ8_0 : format == "Q8_1" ? quantizeRowQ8_1 : quantizeRowQ8_K;
        const size_t blockBytes = format == "Q8_0" ? kQ8_0BlockBytes : format == "Q8_1" ? kQ8_1BlockBytes : kQ8_KBlockBytes;
        const int64_t blockElems = format == "Q8_K" ? 256 : 32;
        REQUIRE_EQ(rowBytesExpected, size_t(k / blockElems) * blockBytes);
        std::vector<uint8_t> got(rowBytesExpected);
        for (int r = 0; r < rows; ++r) {
            quantize(x.data() + r * k, got.data(), k);
            const uint8_t* want = expected + r * rowBytesExpected;
            for (size_t i = 0; i < rowBytesExpected; ++i)
                if (got[i] != want[i])
                    FAIL(str(format, " row ", r, ": byte ", i, " (block ", i / blockBytes, ", offset ", i % blockBytes,
                             ") is ", got[i], ", python says ", want[i]));
        }
    });
}

// F16/BF16 activation conversion (used for F16/BF16 weights): the AVX2 path
// must round exactly like f32ToF16/f32ToBf16, including ties, subnormals,
// overflow and NaN.
WEIR_TEST(QuantRows, halfConversions_pathsAgree) {
    if (!forceKernelPath(KernelPath::Avx2)) SKIP("no AVX2 on this CPU");
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
                FAIL(str(typeName(t), ": ", hex(std::bit_cast<uint32_t>(x[i]), 8), " -> avx2 ", hex(fast[i], 4),
                         ", scalar ", hex(slow[i], 4)));
    }
}

WEIR_TEST(QuantRows, badInput_throwsNamedError) {
    float out[64];
    const uint8_t zeros[256] = {};
    auto expectError = [](auto fn, const char* needle) {
        try {
            fn();
        } catch (const weir::Error& e) {
            REQUIRE_MSG(std::string_view(e.what()).find(needle) != std::string_view::npos, e.what());
            return;
        }
        FAIL(std::string("no weir::Error mentioning ") + needle);
    };
    expectError([&] { dequantizeRow(GgmlType::Q2_K, zeros, out, 256); }, "Q2_K");
    expectError([&] { dequantizeRow(GgmlType(99), zeros, out, 32); }, "99");
    expectError([&] { dequantizeRow(GgmlType::Q4_0, zeros, out, 33); }, "block size 32");
    expectError([&] { dotRowF32(GgmlType::Q3_K, zeros, out, 256); }, "Q3_K");
    const WeightView w{GgmlType::Q8_0, zeros, 32, 4, 34};
    expectError([&] { getRow(w, 4, out); }, "out of range");
    expectError([&] { getRow(w, -1, out); }, "out of range");
}
