// weir-cli inspect FILE [--json] [--max-items N]: prints a GGUF file's
// metadata (long arrays abbreviated) and its tensor table with totals; for a
// model, then checks it as loading would and fails naming what is wrong.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "weir/base/error.h"
#include "weir/model_file.h"

namespace weir::cli {
namespace {

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const bool json = args.flag("--json");
    const long long maxItems = args.intValue("--max-items", 8, 0, INT32_MAX);
    const std::vector<std::string> rest = args.rest();
    if (rest.size() != 1 || (!rest[0].empty() && rest[0][0] == '-'))
        throw Error(rest.empty() ? "usage: weir-cli inspect FILE [--json] [--max-items N]"
                                 : "unexpected argument '" + rest[rest.size() > 1 ? 1 : 0] + "'");
    const std::string out =
        describeModelFile(rest[0], json ? ModelFileFormat::Json : ModelFileFormat::Text, size_t(maxItems));
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    checkModelFile(rest[0]);
    return 0;
}

static Command reg{"inspect", "show a GGUF file's metadata and tensor table, then check it as loading would", &run,
                   "  weir-cli inspect FILE [--json] [--max-items N]\n"
                   "    --json          the same as one JSON document\n"
                   "    --max-items N   show at most N items of each metadata array (8)"};

} // namespace
} // namespace weir::cli
