// weir-cli make-synthetic: writes the small random model GGUF the
// reference tests use (same bytes for the same options), or with --preset a
// full-size one: a real model's metadata, tensor table and vocabulary size
// with tame weights, for benchmarks where the real file cannot go.
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "weir/model_file.h"
#include "weir/base/error.h"

namespace weir::cli {
namespace {

constexpr const char* kUsage =
    "usage: weir-cli make-synthetic OUT.gguf [--arch llama|qwen2|gemma3] [--seed S] [--layers N] [--rope-base B] [--window W]\n"
    "       weir-cli make-synthetic --preset NAME OUT.gguf [--seed S]\n"
    "       weir-cli make-synthetic --preset list";

std::string presetList() {
    std::string out = "presets (a real model's architecture, tensor table and vocabulary size; tame weights):\n";
    for (const SyntheticPresetInfo& p : syntheticModelPresets()) out += "  " + p.name + "  " + p.description + "\n";
    return out;
}

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    SyntheticModelSpec spec;
    spec.preset = args.value("--preset", "");
    if (spec.preset == "list") {
        args.rejectUnknown();
        std::fputs(presetList().c_str(), stdout);
        return 0;
    }
    spec.seed = uint64_t(args.intValue("--seed", int64_t(spec.seed), 0, INT64_MAX));
    if (spec.preset.empty()) {  // a preset fixes every size: these are then unknown options
        spec.architecture = args.value("--arch", spec.architecture);
        spec.nLayer = int32_t(args.intValue("--layers", spec.nLayer, 1, 256));
        spec.ropeBase = float(args.floatValue("--rope-base", spec.ropeBase, 1.0, 1e9));
        spec.slidingWindow = int32_t(args.intValue("--window", spec.slidingWindow, 0, 1 << 20));
    }
    const auto rest = args.rest();
    if (rest.size() != 1 || rest[0].rfind("-", 0) == 0) throw Error(kUsage);
    const auto t0 = std::chrono::steady_clock::now();
    writeSyntheticModel(spec, rest[0]);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!spec.preset.empty()) {
        struct stat st {};
        const long long bytes = ::stat(rest[0].c_str(), &st) == 0 ? (long long)st.st_size : -1;
        std::printf("wrote %s (preset %s, %lld bytes, seed %llu, %.1f s)\n", rest[0].c_str(), spec.preset.c_str(), bytes,
                    (unsigned long long)spec.seed, seconds);
        return 0;
    }
    std::printf("wrote %s (%s, %d layers, seed %llu)\n", rest[0].c_str(), spec.architecture.c_str(), spec.nLayer,
                (unsigned long long)spec.seed);
    return 0;
}

const std::string kHelpLines = std::string(kUsage) + "\n\n" + presetList();

Command reg{"make-synthetic",
            "write a synthetic model GGUF: OUT [--arch llama|qwen2|gemma3] [--seed S] [--layers N] [--rope-base B] "
            "[--window W], or a full-size one: --preset NAME OUT (--preset list names them)",
            &run, kHelpLines.c_str()};

} // namespace
} // namespace weir::cli
