// `weir-cli inspect` (from WEIR_BIN_DIR) run as a process: every malformed file
// ends with a non-zero exit (not a signal) and exactly one stderr line naming
// the problem; the default model's --json output matches the python `gguf` dump.
#include "tests/support/json_reading.h"
#include "tests/support/process_run.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include "engine/gguf/gguf_writer.h"
#include "engine/models/synthetic_model.h"
#include "malformed_gguf_cases.h"

namespace {

using namespace weirtest;

std::string cliPath() { return environment("WEIR_BIN_DIR") + "/weir-cli"; }

ProcessResult inspect(std::vector<std::string> args) {
    args.insert(args.begin(), "inspect");
    return runProcess(cliPath(), args);
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

} // namespace

WEIR_TEST_SUITE_SETUP(GgufInspectCli) {
    if (environment("WEIR_BIN_DIR").empty() || !isExecutable(cliPath()))
        SKIP("weir-cli not built (WEIR_BIN_DIR)");
}

WEIR_TEST(GgufInspectCli, malformedFiles) {
    TempDir dir;
    REQUIRE(dir.isValid());
    for (const auto& c : weir::gguf::testing::malformedCases()) {
        const std::string path = dir.filePath(c.name + ".gguf");
        REQUIRE(writeFile(path, std::string_view(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size())));
        const ProcessResult r = inspect({path});
        const std::string label = c.name + ": " + r.err;
        REQUIRE_MSG(r.exited, label + " (crashed)");
        REQUIRE_MSG(r.exitCode != 0, label);
        REQUIRE_MSG(r.err.ends_with('\n') && std::count(r.err.begin(), r.err.end(), '\n') == 1, label + " (not one line)");
        const std::string expected = path + ": offset " + std::to_string(c.offset) + ": ";
        REQUIRE_MSG(contains(r.err, expected), label);
        REQUIRE_MSG(contains(r.err, c.problem), label);
        REQUIRE_MSG(r.out.empty(), label + " (printed to stdout)");
    }
}

WEIR_TEST(GgufInspectCli, missingFileAndBadArguments) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"/nonexistent/x.gguf"}, std::vector<std::string>{}, std::vector<std::string>{"a", "b"}}) {
        const ProcessResult r = inspect(args);
        REQUIRE_EQ(r.exited, true);
        REQUIRE(r.exitCode != 0);
        REQUIRE_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
    }
}

// Issue 16: a model whose metadata parses but makes no sense. `inspect`
// still shows it, then fails like `generate`, naming the key and value.
WEIR_TEST(GgufInspectCli, corruptModelsExitNonZero) {
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
    TempDir dir;
    const std::string path = dir.filePath("corrupt.gguf");
    w.writeFile(path);
    const std::string expected = "gemma3.attention.layer_norm_rms_epsilon = inf: must be a finite positive number";

    ProcessResult r = inspect({path});
    REQUIRE_EQ(r.exited, true);
    REQUIRE_MSG(r.exitCode != 0, r.err);
    REQUIRE_MSG(contains(r.err, expected), r.err);
    REQUIRE(contains(r.out, "layer_norm_rms_epsilon"));  // the table came first

    const ProcessResult g = runProcess(cliPath(), {"generate", "-m", path, "-p", "hi", "-n", "2"});
    REQUIRE_EQ(g.exited, true);
    REQUIRE_MSG(g.exitCode != 0, g.err);
    REQUIRE_MSG(contains(g.err, expected), g.err);
}

// A small file made with our writer: the text table lists its tensors and totals.
WEIR_TEST(GgufInspectCli, textTable) {
    using namespace weir::gguf;
    GgufWriter w;
    w.addString("general.architecture", "tiny");
    w.add("tiny.list", makeI32Array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    w.addTensor("weights.a", weir::kernels::GgmlType::F32, {4, 2}, std::vector<uint8_t>(32));
    w.addTensor("weights.b", weir::kernels::GgmlType::Q8_0, {64}, std::vector<uint8_t>(68));
    TempDir dir;
    const std::string path = dir.filePath("tiny.gguf");
    w.writeFile(path);
    const ProcessResult r = inspect({path});
    REQUIRE_EQ(r.exitCode, 0);
    const std::string& out = r.out;
    REQUIRE_MSG(contains(out, "\"tiny\""), out);
    REQUIRE_MSG(contains(out, "[1, 2, 3, 4, 5, 6, 7, 8, ...] (12 items)"), out);  // abbreviated
    REQUIRE_MSG(std::regex_search(out, std::regex(R"(weights\.a\s+F32\s+\[4, 2\]\s+0\s+32\n)")), out);
    REQUIRE_MSG(std::regex_search(out, std::regex(R"(weights\.b\s+Q8_0\s+\[64\]\s+32\s+68\n)")), out);
    REQUIRE_MSG(contains(out, "total: 2 tensors, 72 elements, 100 bytes"), out);
}

// --json on the default model agrees with the python gguf dump.
WEIR_TEST(GgufInspectCli, jsonMatchesReference) {
    const std::string model = environment("WEIR_MODEL");
    if (model.empty() || !std::filesystem::exists(model)) SKIP("default model not found (WEIR_MODEL)");
    const auto refText = readFile(environment("WEIR_TEST_DATA") + "/gguf/gemma-3-270m-q4_k_m.table.json");
    REQUIRE(refText.has_value());
    const Json ref = parseJsonOrUndefined(*refText);
    const ProcessResult r = inspect({model, "--json"});
    REQUIRE_EQ(r.exitCode, 0);
    const Json got = parseJsonOrUndefined(r.out);
    REQUIRE_MSG(got.isDict(), got.isUndefined() ? got.undefinedMessage() : "not a JSON object");
    REQUIRE_EQ(integer(field(got, "data_offset")), integer(field(ref, "data_offset")));
    const auto& gotT = items(field(got, "tensors"));
    const auto& refT = items(field(ref, "tensors"));
    REQUIRE_EQ(gotT.size(), refT.size());
    int64_t bytes = 0;
    for (size_t i = 0; i < refT.size(); ++i) {
        const Json &a = gotT[i], &b = refT[i];
        REQUIRE_EQ(text(field(a, "name")), text(field(b, "name")));
        REQUIRE_EQ(text(field(a, "type")), text(field(b, "type_name")));
        REQUIRE_MSG(field(a, "shape").isList() && field(a, "shape").equals(field(b, "shape")),
                    field(a, "shape").toJson() + " vs " + field(b, "shape").toJson());
        REQUIRE_EQ(integer(field(a, "offset")), integer(field(b, "offset")));
        REQUIRE_EQ(integer(field(a, "bytes")), integer(field(b, "bytes")));
        bytes += integer(field(b, "bytes"));
    }
    REQUIRE_EQ(integer(field(field(got, "totals"), "bytes")), bytes);
    const auto& meta = items(field(got, "metadata"));
    REQUIRE_EQ(meta.size(), items(field(ref, "metadata")).size());
    for (const Json& o : meta) {
        if (text(field(o, "key")) != "tokenizer.ggml.tokens") continue;
        const Json& v = field(o, "value");
        REQUIRE_EQ(integer(field(v, "count")), 262144);
        REQUIRE_EQ(field(v, "truncated").isBool() && field(v, "truncated").asBool(), true);
        REQUIRE_EQ(items(field(v, "items")).size(), 8u);  // long arrays abbreviated
        REQUIRE_EQ(text(item(field(v, "items"), 1)), std::string("<eos>"));
    }
}
