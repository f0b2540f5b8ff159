// GGUF writer -> reader round trip: every value type (edge values included),
// nested arrays, tensors of every known ggml type, alignment and padding,
// file and in-memory output; and the writer's refusals.
#include "tests/support/json_reading.h"
#include "tests/support/process_run.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"

using namespace weir;
using namespace weir::gguf;
using weirtest::field;
using weirtest::integer;
using weirtest::Json;
using weirtest::text;

namespace {

std::string toHex(const void* data, size_t size) {
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < size; ++i) {
        const auto c = static_cast<const unsigned char*>(data)[i];
        out += kDigits[c >> 4];
        out += kDigits[c & 15];
    }
    return out;
}

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
    REQUIRE_EQ(f->version(), version);
    REQUIRE_EQ(f->alignment(), alignment);
    REQUIRE_EQ(f->dataOffset() % alignment, uint64_t(0));
    const auto values = everyValue();
    // general.alignment is added by the writer only when it is not the default.
    REQUIRE_EQ(f->metadata().size(), values.size() + (alignment != 32 ? 1 : 0));
    for (const auto& [k, v] : values) {
        const Value* got = f->find(k);
        REQUIRE_MSG(got, k.c_str());
        std::string why;
        REQUIRE_MSG(sameValue(v, *got, why), (k + ": " + why).c_str());
    }
    const auto specs = everyTensorType();
    REQUIRE_EQ(f->tensors().size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        const TensorInfo& t = f->tensors()[i];
        const TensorSpec& s = specs[i];
        REQUIRE_EQ(t.name, s.name);
        REQUIRE_EQ(t.type, s.type);
        REQUIRE_EQ(t.nDims, uint32_t(s.ne.size()));
        for (size_t d = 0; d < 4; ++d) REQUIRE_EQ(t.ne[d], d < s.ne.size() ? s.ne[d] : int64_t(1));
        REQUIRE_EQ(t.nbytes, uint64_t(s.data.size()));
        REQUIRE_EQ(t.offset % alignment, uint64_t(0));
        REQUIRE_EQ(uint64_t(t.data - bytes.data()), f->dataOffset() + t.offset);
        REQUIRE(std::memcmp(t.data, s.data.data(), s.data.size()) == 0);
        REQUIRE_EQ(f->findTensor(s.name), &t);
    }
}

} // namespace

struct LayoutRow {
    const char* name;
    uint64_t alignment;
    uint32_t version;
};

WEIR_TEST(GgufWriter, roundTrip) {
    const std::vector<LayoutRow> table = {
        {"v3 align 32", 32, 3}, {"v3 align 64", 64, 3}, {"v3 align 1", 1, 3}, {"v2 align 256", 256, 2}};
    weirtest::eachRow(table, [](const LayoutRow& row) {
        const GgufWriter w = buildWriter(row.alignment, row.version);
        checkRoundTrip(w.toBytes(), row.alignment, row.version);
    });
}

// writeFile streams the same bytes as toBytes, and the mmap path reads them.
WEIR_TEST(GgufWriter, fileMatchesBytes) {
    weirtest::TempDir dir;
    const std::string path = dir.filePath("rt.gguf");
    const GgufWriter w = buildWriter(64, 3);
    w.writeFile(path);
    const auto file = weirtest::readFile(path);
    REQUIRE(file.has_value());
    const std::string& onDisk = *file;
    const std::vector<uint8_t> mem = w.toBytes();
    REQUIRE_EQ(size_t(onDisk.size()), mem.size());
    REQUIRE(std::memcmp(onDisk.data(), mem.data(), mem.size()) == 0);
    const auto g = GgufFile::open(path);
    REQUIRE_EQ(g->fileSize(), uint64_t(mem.size()));
    REQUIRE_EQ(g->tensors().size(), everyTensorType().size());
    REQUIRE_EQ(g->getString("string.utf8").value(), std::string("\xe2\x96\x81h\xc3\xa9llo <start_of_turn>"));
}

// An independent reader (python gguf, WEIR_PYTHON) sees the same keys, types, values,
// tensor shapes, offsets and bytes as we wrote. Expectations come from the inputs.
WEIR_TEST(GgufWriter, pythonGgufReadsOurFile) {
    const std::string python = weirtest::environment("WEIR_PYTHON");
    if (python.empty() || !weirtest::isExecutable(python)) SKIP("python with gguf not found (WEIR_PYTHON)");
    weirtest::TempDir dir;
    const std::string path = dir.filePath("py.gguf");
    buildWriter(64, 3).writeFile(path);
    static const char* script = R"PY(
import json, sys
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
                           "hex": t.data.tobytes().hex()})
print(json.dumps(out))
)PY";
    const weirtest::ProcessResult p = weirtest::runProcess(python, {"-c", script, path});
    REQUIRE_MSG(p.exited, "python did not run to the end: " + p.startError + p.err);
    REQUIRE_MSG(p.exitCode == 0, p.err);
    const Json got = weirtest::parseJsonOrUndefined(p.out);
    REQUIRE_EQ(integer(field(got, "alignment")), 64);
    const Json& fields = field(got, "fields");
    static const std::map<ValueType, std::string> pyName = {
        {ValueType::U8, "UINT8"}, {ValueType::I8, "INT8"}, {ValueType::U16, "UINT16"}, {ValueType::I16, "INT16"},
        {ValueType::U32, "UINT32"}, {ValueType::I32, "INT32"}, {ValueType::F32, "FLOAT32"},
        {ValueType::Bool, "BOOL"}, {ValueType::String, "STRING"}, {ValueType::Array, "ARRAY"},
        {ValueType::U64, "UINT64"}, {ValueType::I64, "INT64"}, {ValueType::F64, "FLOAT64"}};
    int compared = 0;
    for (const auto& [key, value] : everyValue()) {
        const Json& f = field(fields, key);
        REQUIRE_MSG(f.isDict() && !f.asDict().entries.empty(), key.c_str());
        const Array* arr = value.asArray();
        if (arr && (arr->elementType == ValueType::Array || arr->items.empty())) continue;  // python flattens these
        const ValueType leaf = arr ? arr->elementType : value.type;
        std::vector<std::string> types;
        for (const Json& t : weirtest::items(field(f, "types"))) types.push_back(text(t));
        const std::vector<std::string> expectedTypes =
            arr ? std::vector<std::string>{"ARRAY", pyName.at(leaf)} : std::vector<std::string>{pyName.at(leaf)};
        REQUIRE_EQ(types, expectedTypes);
        const std::vector<Value> items = arr ? arr->items : std::vector<Value>{value};
        const auto& vals = weirtest::items(field(f, "values"));
        REQUIRE_EQ(vals.size(), items.size());
        for (size_t i = 0; i < items.size(); ++i) {
            const std::string v = text(vals[i]);
            const Value& item = items[i];
            if (const auto* s = item.asString()) {
                REQUIRE_EQ(v, toHex(s->data(), s->size()));
            } else if (const auto* b = std::get_if<bool>(&item.data)) {
                REQUIRE_EQ(v, std::string(*b ? "True" : "False"));
            } else if (const auto* d = std::get_if<double>(&item.data)) {
                if (std::isnan(*d)) REQUIRE_EQ(v, std::string("nan"));
                else if (std::isinf(*d)) REQUIRE_EQ(v, std::string(*d > 0 ? "inf" : "-inf"));
                else REQUIRE_EQ(std::strtod(v.c_str(), nullptr), *d);
            } else if (const auto* u = std::get_if<uint64_t>(&item.data)) {
                REQUIRE_EQ(v, std::to_string(*u));
            } else {
                REQUIRE_EQ(v, std::to_string(std::get<int64_t>(item.data)));
            }
        }
        ++compared;
    }
    REQUIRE(compared > 25);
    const auto& tensors = weirtest::items(field(got, "tensors"));
    const auto specs = everyTensorType();
    REQUIRE_EQ(tensors.size(), specs.size());
    uint64_t expectedOffset = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
        const Json& t = tensors[i];
        REQUIRE_EQ(text(field(t, "name")), specs[i].name);
        REQUIRE_EQ(integer(field(t, "type")), int(specs[i].type));
        std::vector<int64_t> shape;
        for (const Json& n : weirtest::items(field(t, "shape"))) shape.push_back(integer(n));
        REQUIRE_EQ(shape, std::vector<int64_t>(specs[i].ne.begin(), specs[i].ne.end()));
        REQUIRE_EQ(uint64_t(integer(field(t, "offset"))), expectedOffset);
        expectedOffset = (expectedOffset + specs[i].data.size() + 63) / 64 * 64;
        // python gguf sizes Q8_1 blocks as 40 bytes (two f32); ggml's block_q8_1 is two
        // f16 + 32 int8 = 36 bytes, as typeTraits says. Q8_1 only exists as an activation
        // format, never in model files, so its bytes are not compared.
        if (specs[i].type == kernels::GgmlType::Q8_1) continue;
        // Every byte, as python read it (a hash of them would say less when they differ).
        REQUIRE_MSG(text(field(t, "hex")) == toHex(specs[i].data.data(), specs[i].data.size()), specs[i].name.c_str());
    }
}

// The header layout follows the spec byte for byte (checked by hand, not through our reader).
WEIR_TEST(GgufWriter, headerLayout) {
    GgufWriter w;
    w.addU32("k", 7);
    w.addTensor("t", kernels::GgmlType::F32, {2}, std::vector<uint8_t>(8, 0xab));
    const std::vector<uint8_t> b = w.toBytes();
    const auto u32 = [&](size_t at) { uint32_t v; std::memcpy(&v, &b[at], 4); return v; };
    const auto u64 = [&](size_t at) { uint64_t v; std::memcpy(&v, &b[at], 8); return v; };
    REQUIRE_EQ(std::string(reinterpret_cast<const char*>(b.data()), 4), std::string("GGUF"));
    REQUIRE_EQ(u32(4), 3u);
    REQUIRE_EQ(u64(8), uint64_t(1));   // tensor_count
    REQUIRE_EQ(u64(16), uint64_t(1));  // kv_count
    REQUIRE_EQ(u64(24), uint64_t(1));  // key length
    REQUIRE_EQ(char(b[32]), 'k');
    REQUIRE_EQ(u32(33), 4u);  // u32
    REQUIRE_EQ(u32(37), 7u);
    REQUIRE_EQ(u64(41), uint64_t(1));  // name length
    REQUIRE_EQ(char(b[49]), 't');
    REQUIRE_EQ(u32(50), 1u);           // n_dims
    REQUIRE_EQ(u64(54), uint64_t(2));  // ne[0]
    REQUIRE_EQ(u32(62), 0u);           // F32
    REQUIRE_EQ(u64(66), uint64_t(0));  // offset
    // Infos end at 74; data starts at 96 after zero padding.
    REQUIRE_EQ(b.size(), size_t(96 + 8));
    for (size_t i = 74; i < 96; ++i) REQUIRE_EQ(b[i], uint8_t(0));
    REQUIRE_EQ(b[96], uint8_t(0xab));
}

WEIR_TEST(GgufWriter, refusals) {
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
    REQUIRE(refuses([&] { w.addU32("a", 2); }, "duplicate key 'a'"));
    REQUIRE(refuses([&] { w.add("bad", makeArray(ValueType::U8, {makeU16(1)})); }, "array item of type u16"));
    REQUIRE(refuses([&] { w.add("bad", Value{ValueType::String, uint64_t(1)}); }, "does not hold a string"));
    REQUIRE(refuses([&] { w.setAlignment(48); }, "not a power of two"));
    REQUIRE(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {4}, std::vector<uint8_t>(15)); },
                    "needs 16 bytes, got 15"));
    REQUIRE(refuses([&] { w.addTensor("t", kernels::GgmlType::Q4_K, {128}, std::vector<uint8_t>(72)); },
                    "multiple of the block size"));
    REQUIRE(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {}, std::vector<uint8_t>()); },
                    "1 to 4 dimensions"));
    REQUIRE(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {1, 0}, std::vector<uint8_t>()); },
                    "dimension <= 0"));
    REQUIRE(refuses([&] { w.addTensor("t", static_cast<kernels::GgmlType>(99), {1}, std::vector<uint8_t>(4)); },
                    "unknown type"));
    w.addTensor("t", kernels::GgmlType::F32, {1}, std::vector<uint8_t>(4));
    REQUIRE(refuses([&] { w.addTensor("t", kernels::GgmlType::F32, {1}, std::vector<uint8_t>(4)); },
                    "duplicate tensor name"));
}

// Setting general.alignment as a key also changes the layout.
WEIR_TEST(GgufWriter, alignmentKeySetsAlignment) {
    GgufWriter w;
    w.add("general.alignment", makeU32(128));
    REQUIRE_EQ(w.alignment(), uint64_t(128));
    w.addTensor("a", kernels::GgmlType::F32, {3}, std::vector<uint8_t>(12, 1));
    w.addTensor("b", kernels::GgmlType::F32, {3}, std::vector<uint8_t>(12, 2));
    const auto bytes = w.toBytes();
    const auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "a");
    REQUIRE_EQ(f->alignment(), uint64_t(128));
    REQUIRE_EQ(f->metadata().size(), size_t(1));
    REQUIRE_EQ(f->findTensor("b")->offset, uint64_t(128));
    REQUIRE_EQ(f->findTensor("b")->data[0], uint8_t(2));
}

// A tensor made by a fill function: the writer asks for whole rows, in
// chunks when the tensor is large (here 40 rows of 1 MiB: more than one
// 32 MiB chunk), and the file holds what the function made for each offset,
// the same as toBytes and fileSize say.
WEIR_TEST(GgufWriter, filledTensorsStreamWholeRows) {
    constexpr int64_t kCols = 1 << 18, kRows = 40;  // F32: 1 MiB rows
    constexpr uint64_t kRowBytes = uint64_t(kCols) * 4;
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    GgufWriter w;
    w.addU32("answer", 42);
    w.addTensor("small", kernels::GgmlType::F32, {3}, std::vector<uint8_t>(12, 7));
    w.addTensor("big", kernels::GgmlType::F32, {kCols, kRows}, [&](uint64_t offset, uint8_t* out, uint64_t size) {
        calls.emplace_back(offset, size);
        for (uint64_t i = 0; i < size; ++i) out[i] = uint8_t((offset + i) / kRowBytes * 3 + (offset + i) % 5);
    });
    weirtest::TempDir dir;
    const std::string path = dir.filePath("filled.gguf");
    w.writeFile(path);
    REQUIRE(calls.size() > 1);
    uint64_t expectOffset = 0;
    for (const auto& [offset, size] : calls) {
        CHECK_EQ(offset, expectOffset);
        CHECK_EQ(offset % kRowBytes, uint64_t(0));
        CHECK_EQ(size % kRowBytes, uint64_t(0));
        expectOffset = offset + size;
    }
    REQUIRE_EQ(expectOffset, kRowBytes * uint64_t(kRows));
    const auto g = GgufFile::open(path);
    REQUIRE_EQ(g->fileSize(), w.fileSize());
    const TensorInfo* big = g->findTensor("big");
    REQUIRE(big != nullptr);
    REQUIRE_EQ(big->nbytes, kRowBytes * uint64_t(kRows));
    for (uint64_t at : {uint64_t(0), kRowBytes - 1, 33 * kRowBytes + 17, 40 * kRowBytes - 1})
        CHECK_EQ(big->data[at], uint8_t(at / kRowBytes * 3 + at % 5));
    CHECK_EQ(g->findTensor("small")->data[11], uint8_t(7));
    const std::vector<uint8_t> mem = w.toBytes();
    const auto onDisk = weirtest::readFile(path);
    REQUIRE(onDisk.has_value());
    REQUIRE_EQ(onDisk->size(), mem.size());
    CHECK(std::memcmp(onDisk->data(), mem.data(), mem.size()) == 0);
}
