#include "app/cli/engine_flags.h"

#include <cstdint>
#include <cstdio>
#include <limits>

#include "weir/base/error.h"
#include "weir/devices.h"
#include "weir/types/engine_limits.h"

namespace weir::cli {

bool takesEngineFlags(std::string_view command) {
    return command == "serve" || command == "soak" || command == "bench-concurrency";
}

KvDtype readKvDtypeFlag(Args& args, KvDtype def) {
    const std::string name = args.value("--kv-cache-dtype", kvDtypeName(def));
    KvDtype t = def;
    if (!kvDtypeFromName(name, t))
        throw Error("--kv-cache-dtype must be f16, q8_0, fp8_e4m3 or f32, got '" + name + "'");
    return t;
}

std::string readDeviceFlag(Args& args, const std::string& def) {
    const std::string device = args.value("--device", def);
    checkDeviceName(device);
    return device;
}

bool readOnOffFlag(Args& args, const char* name, bool def) {
    const std::string v = args.value(name, def ? "on" : "off");
    if (v == "on") return true;
    if (v == "off") return false;
    throw Error(std::string(name) + " must be on or off, got '" + v + "'");
}

int32_t readThreadsFlag(Args& args) {
    const auto threads = int32_t(args.intValue("--threads", 0, 0, EngineLimits::maxThreads()));
    noteThreadsBeyondCores(threads);
    return threads;
}

void noteThreadsBeyondCores(int32_t threads) {
    const int32_t cores = EngineLimits::physicalCores();
    if (threads > cores)
        std::fprintf(stderr,
                     "weir-cli: --threads %d is more than the %d physical cores this process may run on; the threads "
                     "beyond them share cores, which rarely helps\n",
                     threads, cores);
}

namespace {

// The option's whole type range here, so nothing is truncated on the way;
// the real limits are validateEngineOptions' (one place for app and CLI).
int32_t int32Flag(Args& args, const char* name, int32_t def) {
    return int32_t(args.intValue(name, def, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}

int64_t int64Flag(Args& args, const char* name, int64_t def) {
    return args.intValue(name, def, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
}

} // namespace

void readEngineFlags(Args& args, EngineOptions& o) {
    o.modelPath = args.value("-m", o.modelPath.empty() ? defaultModelPath() : o.modelPath);
    o.threads = int32Flag(args, "--threads", o.threads);
    o.device = readDeviceFlag(args, o.device);
    o.maxRunningRequests = int32Flag(args, "--max-running-requests", o.maxRunningRequests);
    o.prefillChunk = int32Flag(args, "--prefill-chunk", o.prefillChunk);
    o.pageSize = int32Flag(args, "--page-size", o.pageSize);
    o.kvReserveTokens = int64Flag(args, "--kv-reserve-tokens", o.kvReserveTokens);
    o.swaFullTokensRatio = args.floatValue("--swa-full-tokens-ratio", o.swaFullTokensRatio,
                                           -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
    o.swaTokens = int64Flag(args, "--swa-tokens", o.swaTokens);
    o.kvDtype = readKvDtypeFlag(args, o.kvDtype);
    o.maxContext = int32Flag(args, "--max-context", o.maxContext);
    o.retainGap = int32Flag(args, "--retain-gap", o.retainGap);
    o.maxWaiting = int32Flag(args, "--max-waiting", o.maxWaiting);
    o.repackWeights = readOnOffFlag(args, "--repack-weights", o.repackWeights);
    o.speculative = readOnOffFlag(args, "--speculative", o.speculative);
    o.draftTokens = int32Flag(args, "--draft-tokens", o.draftTokens);
    o.draftStepRows = int32Flag(args, "--draft-step-rows", o.draftStepRows);
    o.draftNgramMax = int32Flag(args, "--draft-ngram-max", o.draftNgramMax);
    o.draftNgramMin = int32Flag(args, "--draft-ngram-min", o.draftNgramMin);
    // Before the model is loaded: a bad flag is named at once. (What a
    // subcommand derives later, Engine's constructor checks the same way.)
    if (const std::string bad = validateEngineOptions(o); !bad.empty()) throw Error(bad);
    noteThreadsBeyondCores(o.threads);
}

} // namespace weir::cli
