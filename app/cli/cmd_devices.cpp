// weir-cli devices [--json]: the devices --device can name (the CPU, then
// each CUDA GPU), with their memory; says why no GPU is listed when none is.
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "weir/devices.h"

namespace weir::cli {
namespace {

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const bool json = args.flag("--json");
    args.rejectUnknown();
    std::string problem;
    const std::vector<ComputeDevice> devices = listComputeDevices(&problem);
    if (json) {
        std::printf("{\"devices\":[");
        for (size_t i = 0; i < devices.size(); ++i) {
            const ComputeDevice& d = devices[i];
            std::printf("%s{\"id\":%s,\"gpu\":%s,\"name\":%s,\"total_bytes\":%llu,\"free_bytes\":%llu,\"detail\":%s}",
                        i ? "," : "", jsonString(d.id).c_str(), d.gpu ? "true" : "false", jsonString(d.name).c_str(),
                        (unsigned long long)d.totalBytes, (unsigned long long)d.freeBytes, jsonString(d.detail).c_str());
        }
        std::printf("],\"gpu_problem\":%s}\n", problem.empty() ? "null" : jsonString(problem).c_str());
        return 0;
    }
    for (const ComputeDevice& d : devices)
        std::printf("%-8s %s, %.1f GiB (%.1f GiB free)%s%s\n", d.id.c_str(), d.name.c_str(),
                    double(d.totalBytes) / double(1ull << 30), double(d.freeBytes) / double(1ull << 30),
                    d.detail.empty() ? "" : ", ", d.detail.c_str());
    if (!problem.empty()) std::printf("no GPU: %s\n", problem.c_str());
    return 0;
}

static Command reg{"devices", "list the devices --device can name (cpu, cuda:N) with their memory", &run,
                   "  weir-cli devices [--json]\n"
                   "    --json   the same as one JSON document (with gpu_problem: why no GPU is listed)"};

} // namespace
} // namespace weir::cli
