// weir-cli make-synthetic: writes the small random model GGUF the
// reference tests use (same bytes for the same options).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "weir/model_file.h"
#include "weir/base/error.h"

namespace weir::cli {
namespace {

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    SyntheticModelSpec spec;
    spec.architecture = args.value("--arch", spec.architecture);
    spec.seed = uint64_t(args.intValue("--seed", int64_t(spec.seed), 0, INT64_MAX));
    spec.nLayer = int32_t(args.intValue("--layers", spec.nLayer, 1, 256));
    spec.ropeBase = float(args.floatValue("--rope-base", spec.ropeBase, 1.0, 1e9));
    spec.slidingWindow = int32_t(args.intValue("--window", spec.slidingWindow, 0, 1 << 20));
    const auto rest = args.rest();
    if (rest.size() != 1 || rest[0].rfind("-", 0) == 0)
        throw Error("usage: weir-cli make-synthetic OUT.gguf [--arch llama|qwen2|gemma3] [--seed S] [--layers N] [--rope-base B] [--window W]");
    writeSyntheticModel(spec, rest[0]);
    std::printf("wrote %s (%s, %d layers, seed %llu)\n", rest[0].c_str(), spec.architecture.c_str(), spec.nLayer,
                (unsigned long long)spec.seed);
    return 0;
}

Command reg{"make-synthetic", "write a small random model GGUF: OUT [--arch llama|qwen2|gemma3] [--seed S] [--layers N] [--rope-base B] [--window W]", &run};

} // namespace
} // namespace weir::cli
