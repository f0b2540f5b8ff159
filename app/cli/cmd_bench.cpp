// weir-cli bench: prefill and decode speed of the model alone (no scheduler,
// no tokenizer), as JSON. Prefill runs --pp tokens as one sequence in batches
// of --batch; decode then runs --tg greedy steps on top of that context.
// Then the machine's read bandwidth with the same threads: decode is memory-
// bound, so bytes read per decoded token (weights + K/V in view) times
// tokens/s over that bandwidth says how close decode is to the limit.
// With --speculative on|both, greedy replies through the Engine with prompt-
// lookup speculation (on, or off and on) to a prompt that quotes itself and
// one that does not: decode tokens/s, drafts verified and kept
// (speculative_bench.h).
// The thread pool's round trips (hand-off + join, one per parallel kernel
// call) per decode step come from its counters: the synchronisation points
// whose cost grows with the thread count. --step-split then runs the same
// prompt and steps again as a new sequence with the step profile on
// (weir/step_profile.h: its clocks cost a little, hence a run of its own)
// and reports where the time of a prefill pass and of a decode step went:
// per kind of op, outside the forward pass, and the pool's round trips
// (computing, waking, waiting for the last thread).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/cli/speculative_bench.h"
#include "app/cli/step_split_json.h"
#include "weir/base/error.h"
#include "weir/model_runner.h"
#include "weir/step_profile.h"
#include "weir/thread_pool_counters.h"
#include "weir/types/engine_limits.h"

namespace weir::cli {
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }



int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const std::string modelPath = args.value("-m", defaultModelPath());
    const long long pp = args.intValue("--pp", 256, 1, INT32_MAX);
    const long long tg = args.intValue("--tg", 64, 0, INT32_MAX);
    const int threads = readThreadsFlag(args);
    const std::string device = readDeviceFlag(args);
    const long long batchSize = args.intValue("--batch", 512, 1, EngineLimits::kMaxPrefillChunk);
    const KvDtype kvType = readKvDtypeFlag(args, KvDtype::F16);
    const bool bandwidth = !args.flag("--no-bandwidth");
    const bool repack = readOnOffFlag(args, "--repack-weights", true);
    const std::string specMode = args.value("--speculative", "off");
    const long long specTokens = args.intValue("--spec-tg", 128, 2, 512);
    const long long specReps = args.intValue("--spec-reps", 2, 1, 100);
    const bool stepSplit = args.flag("--step-split");
    if (specMode != "off" && specMode != "on" && specMode != "both")
        throw Error("--speculative must be off, on or both, got '" + specMode + "'");
    args.rejectUnknown();

    ModelRunnerOptions ro;
    ro.modelPath = modelPath;
    ro.threads = threads;
    ro.device = device;
    ro.kvDtype = kvType;
    ro.repackWeights = repack;
    ro.sampling.temperature = 0.0f;  // greedy: the engine's own argmax, as a served greedy request
    const auto t0 = Clock::now();
    ModelRunner runner(ro);
    const double loadMs = secondsSince(t0) * 1000.0;
    const ModelConfig& cfg = runner.config();
    if (pp + tg > cfg.nCtxTrain) throw Error("--pp + --tg exceeds the model's context of " + std::to_string(cfg.nCtxTrain));
    runner.setContext(int32_t(pp + tg));

    // Deterministic token ids spread over the vocabulary (like llama-bench's random prompt).
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto nextToken = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return int32_t((state >> 33) % uint64_t(cfg.nVocab));
    };
    std::vector<int32_t> prompt(static_cast<size_t>(pp));
    for (int32_t& t : prompt) t = nextToken();

    const ThreadPoolCounters beforePrefill = threadPoolCounters();
    const auto tp = Clock::now();
    runner.feed(prompt, int32_t(std::min<long long>(batchSize, 1 << 30)));
    const double prefillS = secondsSince(tp);

    const ThreadPoolCounters beforeDecode = threadPoolCounters();
    const auto td = Clock::now();
    int32_t next = runner.sample();
    for (long long i = 0; i < tg; ++i) {
        runner.feed({next});
        next = runner.sample();
    }
    const double decodeS = secondsSince(td);
    const ThreadPoolCounters afterDecode = threadPoolCounters();
    std::string split;
    if (stepSplit) {
        // The same prompt and steps again, as a new sequence, profiled.
        runner.restart(ro.sampling, {});
        setStepProfiling(true);
        StepProfile before = stepProfile();
        auto ts = Clock::now();
        runner.feed(prompt, int32_t(std::min<long long>(batchSize, 1 << 30)));
        const double splitPrefillS = secondsSince(ts);
        const StepProfile prefillChange = stepProfile() - before;
        split = ",\"prefill_pass_split\":" + stepSplitJson(prefillChange, splitPrefillS, prefillChange.steps) +
                ",\"profiled_prefill_tokens_per_s\":" + jsonNumber(double(pp) / splitPrefillS);
        before = stepProfile();
        ts = Clock::now();
        int32_t token = runner.sample();
        for (long long i = 0; i < tg; ++i) {
            runner.feed({token});
            token = runner.sample();
        }
        const double splitDecodeS = secondsSince(ts);
        setStepProfiling(false);
        if (tg > 0)
            split += ",\"decode_step_split\":" + stepSplitJson(stepProfile() - before, splitDecodeS, uint64_t(tg)) +
                     ",\"profiled_decode_tokens_per_s\":" + jsonNumber(double(tg) / splitDecodeS);
    }
    auto perStep = [&](uint64_t before, uint64_t after) { return jsonNumber(tg > 0 ? double(after - before) / double(tg) : 0.0); };
    const std::string poolCounts =
        ",\"pool_round_trips_prefill\":" + std::to_string(beforeDecode.roundTrips - beforePrefill.roundTrips) +
        ",\"pool_round_trips_per_decode_step\":" + perStep(beforeDecode.roundTrips, afterDecode.roundTrips) +
        ",\"pool_inline_calls_per_decode_step\":" + perStep(beforeDecode.inlineCalls, afterDecode.inlineCalls) +
        ",\"pool_chunks_per_decode_step\":" + perStep(beforeDecode.chunks, afterDecode.chunks) +
        ",\"pool_stolen_chunks_per_decode_step\":" + perStep(beforeDecode.stolenChunks, afterDecode.stolenChunks) +
        ",\"pool_left_out_workers_per_decode_step\":" + perStep(beforeDecode.leftOut, afterDecode.leftOut);
    const int32_t cores = EngineLimits::physicalCores();

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);  // before the bandwidth probe's buffer
    const double decodeRate = tg > 0 ? double(tg) / decodeS : 0.0;
    // The average step saw pp + tg/2 positions.
    const DecodeTraffic traffic = runner.decodeTraffic();
    const double bytesPerToken = double(traffic.bytesAt(pp + tg / 2));
    std::string limits;
    const ComputeDevice ran = runner.device();
    // The host's read bandwidth bounds a CPU decode only; a GPU's is its own.
    if (bandwidth && !ran.gpu) {
        const double bytesPerS = measureReadBandwidth(runner.threads());
        limits = ",\"read_bandwidth_gb_per_s\":" + jsonNumber(bytesPerS / 1e9) +
                 ",\"decode_limit_tokens_per_s\":" + jsonNumber(bytesPerS / bytesPerToken) +
                 ",\"decode_fraction_of_bandwidth_limit\":" + jsonNumber(decodeRate * bytesPerToken / bytesPerS);
    }
    if (specMode != "off")
        limits += ",\"speculative\":" +
                  runSpeculativeBench(modelPath, runner.threads(), int32_t(specTokens), int32_t(specReps),
                                      specMode == "on" ? SpeculativeBench::On : SpeculativeBench::Both);
    limits += ",\"device\":" + jsonString(ran.id) + ",\"device_name\":" + jsonString(ran.name) + split;
    std::printf("{\"model\":%s,\"architecture\":%s,\"threads\":%d,\"physical_cores\":%d,\"numa_nodes\":%d,\"oversubscribed\":%s,"
                "\"cpu_kernels\":\"%s\",\"pp\":%lld,\"tg\":%lld,\"batch\":%lld,"
                "\"kv_cache_dtype\":\"%s\",\"repack_weights\":%s,\"load_ms\":%s,\"prefill_tokens_per_s\":%s,\"decode_tokens_per_s\":%s,"
                "\"peak_rss_mb\":%s,\"decode_bytes_per_token\":%s,\"output_head_bytes\":%s%s%s}\n",
                jsonString(modelPath).c_str(), jsonString(cfg.architecture).c_str(), runner.threads(), cores,
                EngineLimits::numaNodes(), runner.threads() > cores ? "true" : "false", cpuKernelsInUse(), pp, tg, batchSize,
                kvDtypeName(kvType), repack ? "true" : "false", jsonNumber(loadMs).c_str(), jsonNumber(double(pp) / prefillS).c_str(),
                jsonNumber(decodeRate).c_str(), jsonNumber(double(ru.ru_maxrss) / 1024.0).c_str(),
                jsonNumber(bytesPerToken).c_str(), jsonNumber(double(traffic.outputHeadBytes)).c_str(), poolCounts.c_str(), limits.c_str());
    return 0;
}

Command reg{"bench", "prefill/decode speed as JSON, with the read-bandwidth limit of decode: [-m FILE] --pp N --tg N [--device cpu|cuda|cuda:N] [--threads T (0: one per physical core)] [--batch B] [--kv-cache-dtype f16|q8_0|fp8_e4m3|f32] [--no-bandwidth] [--repack-weights on|off] [--speculative off|on|both] [--spec-tg N] [--spec-reps N] [--step-split]", &run};

} // namespace
} // namespace weir::cli
