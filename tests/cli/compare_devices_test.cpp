// `weir-cli compare-devices` and `make-synthetic --preset` run as processes
// (WEIR_BIN_DIR) on the CPU: the CPU against itself agrees bit for bit and
// passes; a device that cannot run the model, or a run where the device
// asked for was evidently not used, fails with a message; the preset list
// names every preset. (The GPU comparison runs in tests/gpu/run.sh.)
#include "tests/support/json_reading.h"
#include "tests/support/process_run.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

using namespace weirtest;

namespace {

std::string cliPath() { return environment("WEIR_BIN_DIR") + "/weir-cli"; }

TempDir* dir_ = nullptr;
std::string model_;

} // namespace

WEIR_TEST_SUITE_SETUP(CompareDevicesCli) {
    if (environment("WEIR_BIN_DIR").empty() || !isExecutable(cliPath())) SKIP("weir-cli not built (WEIR_BIN_DIR)");
    static TempDir dir;
    dir_ = &dir;
    model_ = dir.filePath("gemma3.gguf");
    const ProcessResult r = runProcess(cliPath(), {"make-synthetic", model_, "--arch", "gemma3", "--layers", "3"});
    REQUIRE_MSG(r.exited && r.exitCode == 0, r.err);
}

WEIR_TEST(CompareDevicesCli, cpuAgainstItselfPasses) {
    const ProcessResult r = runProcess(cliPath(), {"compare-devices", "-m", model_, "--device", "cpu", "--steps", "6",
                                                   "--prompts", "2", "--long-prompt", "600", "--threads", "2"});
    REQUIRE_MSG(r.exited && r.exitCode == 0, r.err + r.out);
    const Json j = parseJsonOrUndefined(r.out);
    REQUIRE_MSG(j.isDict(), r.out);
    CHECK(field(j, "pass").truthy());
    CHECK(field(j, "bit_identical").truthy());
    CHECK_EQ(field(j, "hard_divergences").asInt(), int64_t(0));
    const Json& prompts = field(j, "prompts");
    REQUIRE(prompts.isList());
    REQUIRE_EQ(prompts.asList().size(), size_t(3));  // two texts and the long one
    CHECK_EQ(field(item(prompts, 2), "prompt_tokens").asInt(), int64_t(600));
    CHECK_EQ(field(field(item(prompts, 0), "result"), "steps").asInt(), int64_t(6));
    CHECK_EQ(field(field(item(prompts, 0), "result"), "first_divergence").asInt(), int64_t(-1));
}

// A device name no build knows: the runner refuses it (exit 2) or, while
// runners ignore the device, the identical logits give it away (exit 1).
WEIR_TEST(CompareDevicesCli, anUnusableDeviceFailsWithAMessage) {
    const ProcessResult r = runProcess(cliPath(), {"compare-devices", "-m", model_, "--device", "cuda:97", "--steps", "2",
                                                   "--prompts", "1", "--long-prompt", "0", "--threads", "2"});
    REQUIRE(r.exited);
    CHECK(r.exitCode == 1 || r.exitCode == 2);
    CHECK_MSG(r.err.find("cuda:97") != std::string::npos || r.out.find("did not run on the device") != std::string::npos,
              r.err + r.out);
}

WEIR_TEST(CompareDevicesCli, presetListNamesThePresets) {
    const ProcessResult r = runProcess(cliPath(), {"make-synthetic", "--preset", "list"});
    REQUIRE_MSG(r.exited && r.exitCode == 0, r.err);
    for (const char* name : {"gemma3-270m-q4_k_m", "smollm2-135m-q4_1", "llama3-8b-q4_k_m"})
        CHECK_MSG(r.out.find(name) != std::string::npos, r.out);
    const ProcessResult bad = runProcess(cliPath(), {"make-synthetic", "--preset", "nope", dir_->filePath("x.gguf")});
    CHECK(bad.exited && bad.exitCode != 0);
    CHECK_MSG(bad.err.find("unknown synthetic model preset 'nope'") != std::string::npos, bad.err);
}
