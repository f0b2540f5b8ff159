#pragma once
// The engine options every weir-cli subcommand that runs the Engine accepts,
// named like the peers' flags (see README "KV pools and their floors"):
//   -m FILE  --device cpu|cuda|cuda:N  --threads N  --max-running-requests N  --prefill-chunk N
//   --page-size N  --kv-reserve-tokens N  --swa-full-tokens-ratio R
//   --swa-tokens N  --kv-cache-dtype f16|q8_0|fp8_e4m3|f32  --max-context N
//   --retain-gap N  --max-waiting N
//   --speculative on|off  --draft-tokens N  --draft-ngram-max N  --draft-ngram-min N
// Values not given keep what `options` holds (a subcommand's own defaults).
// A value that is not a number, out of its range (validateEngineOptions) or
// too large for its type is a weir::Error naming the flag and the value.
#include <string>
#include <string_view>

#include "app/cli/command.h"
#include "weir/engine.h"

namespace weir::cli {

inline constexpr const char* kEngineFlagsHelp =
    "[-m FILE] [--device cpu|cuda|cuda:N] [--threads N] [--max-running-requests N] [--prefill-chunk N] [--page-size N] "
    "[--kv-reserve-tokens N] [--swa-full-tokens-ratio R | --swa-tokens N] "
    "[--kv-cache-dtype f16|q8_0|fp8_e4m3|f32] [--max-context N] [--retain-gap N] [--max-waiting N] "
    "[--repack-weights on|off] [--speculative on|off] [--draft-tokens N] [--draft-step-rows N] [--draft-ngram-max N] [--draft-ngram-min N]";

// The subcommands that read the engine flags (their --help lists them).
inline constexpr const char* kEngineFlagsCommands = "serve, soak, bench-concurrency";
bool takesEngineFlags(std::string_view command);

void readEngineFlags(Args& args, EngineOptions& options);
// --kv-cache-dtype alone (for subcommands that use the model directly).
KvDtype readKvDtypeFlag(Args& args, KvDtype def);
// --device: cpu, cuda, cuda:N; not given = `def` ("" = the first GPU if
// present, else the CPU). A malformed value is a weir::Error naming it.
std::string readDeviceFlag(Args& args, const std::string& def = "");
// A flag that is `on` or `off` (anything else is a weir::Error naming it).
bool readOnOffFlag(Args& args, const char* name, bool def);
// --threads alone (for subcommands that use the model directly): 0 (one per
// physical core, the default) up to EngineLimits::maxThreads(); more than the
// physical cores is said on stderr (noteThreadPlacement).
int32_t readThreadsFlag(Args& args);
// A line on stderr when `threads` is more than the physical cores this
// process may run on (0 means one per core: never more), and one when those
// cores span several NUMA nodes (where the weights sit matters there).
void noteThreadPlacement(int32_t threads);

} // namespace weir::cli
