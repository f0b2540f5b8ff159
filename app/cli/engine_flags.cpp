#include "app/cli/engine_flags.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

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
    noteThreadPlacement(threads);
    return threads;
}

void noteThreadPlacement(int32_t threads) {
    const int32_t cores = EngineLimits::physicalCores();
    if (threads > cores)
        std::fprintf(stderr,
                     "weir-cli: --threads %d is more than the %d physical cores this process may run on; the threads "
                     "beyond them share cores, which rarely helps\n",
                     threads, cores);
    // Weir does not place memory or threads by node: the weights sit on the
    // node that first read them, and every decode step reads all of them.
    if (const int32_t nodes = EngineLimits::numaNodes(); nodes > 1)
        std::fprintf(stderr,
                     "weir-cli: this process runs on CPUs of %d NUMA nodes; the model's weights sit on the node that "
                     "loaded them, and threads on the others read them more slowly. `numactl --interleave=all` spreads "
                     "them over every node; `numactl --cpunodebind=0 --membind=0` keeps to one\n",
                     nodes);
}

namespace {

// A value past its option's type (or past 64 bits) cannot be stored to be
// checked: it becomes the type's nearest bound, which no option's range
// includes, and the flag is remembered with the value as given,
// so that validateEngineOptions' message names the flag's own range and
// what was typed.
struct Saturated {
    std::string flag, given;
};

template <class T>
T numberFlag(Args& args, const char* name, T def, std::vector<Saturated>& saturated) {
    static const std::string kNotGiven = "\x01";  // no option can carry this value
    const std::string v = args.value(name, kNotGiven);
    if (v == kNotGiven) return def;
    char* end = nullptr;
    errno = 0;
    const long long r = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || end == v.c_str())
        throw Error(std::string("option ") + name + " expects a whole number, got '" + v + "'");
    const bool past = errno == ERANGE || r < std::numeric_limits<T>::min() || r > std::numeric_limits<T>::max();
    if (!past) return T(r);
    saturated.push_back(Saturated{name, v});
    return v.front() == '-' ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

// "(got 2147483647)" of a saturated flag's message says what was given instead.
std::string withGivenValue(const std::string& message, const std::vector<Saturated>& saturated) {
    const size_t got = message.rfind("(got ");
    for (const Saturated& s : saturated)
        if (message.rfind(s.flag + " ", 0) == 0 && got != std::string::npos)
            return message.substr(0, got) + "(got " + s.given + ")";
    return message;
}

} // namespace

void readEngineFlags(Args& args, EngineOptions& o) {
    std::vector<Saturated> past;
    o.modelPath = args.value("-m", o.modelPath.empty() ? defaultModelPath() : o.modelPath);
    o.threads = numberFlag(args, "--threads", o.threads, past);
    o.device = readDeviceFlag(args, o.device);
    o.maxRunningRequests = numberFlag(args, "--max-running-requests", o.maxRunningRequests, past);
    o.prefillChunk = numberFlag(args, "--prefill-chunk", o.prefillChunk, past);
    o.pageSize = numberFlag(args, "--page-size", o.pageSize, past);
    o.kvReserveTokens = numberFlag(args, "--kv-reserve-tokens", o.kvReserveTokens, past);
    o.swaFullTokensRatio = args.floatValue("--swa-full-tokens-ratio", o.swaFullTokensRatio,
                                           -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
    o.swaTokens = numberFlag(args, "--swa-tokens", o.swaTokens, past);
    o.kvDtype = readKvDtypeFlag(args, o.kvDtype);
    o.maxContext = numberFlag(args, "--max-context", o.maxContext, past);
    o.retainGap = numberFlag(args, "--retain-gap", o.retainGap, past);
    o.maxWaiting = numberFlag(args, "--max-waiting", o.maxWaiting, past);
    o.repackWeights = readOnOffFlag(args, "--repack-weights", o.repackWeights);
    o.speculative = readOnOffFlag(args, "--speculative", o.speculative);
    o.draftTokens = numberFlag(args, "--draft-tokens", o.draftTokens, past);
    o.draftStepRows = numberFlag(args, "--draft-step-rows", o.draftStepRows, past);
    o.draftNgramMax = numberFlag(args, "--draft-ngram-max", o.draftNgramMax, past);
    o.draftNgramMin = numberFlag(args, "--draft-ngram-min", o.draftNgramMin, past);
    // Before the model is loaded: a bad flag is named at once, with its own
    // range. (What a subcommand derives later, Engine's constructor checks the same way.)
    if (const std::string bad = validateEngineOptions(o); !bad.empty()) throw Error(withGivenValue(bad, past));
    noteThreadPlacement(o.threads);
}

} // namespace weir::cli
