// weir-cli generate: one prompt through the model, streamed to stdout, or as
// JSON with token ids and timings. Runs the model alone (ModelRunner: no
// scheduler, no pools), so its numbers are the model's.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "weir/base/error.h"
#include "weir/model_runner.h"

namespace weir::cli {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const std::string modelPath = args.value("-m", defaultModelPath());
    const std::string prompt = args.value("-p", "");
    const long long nPredict = args.intValue("-n", 64, 0, 1 << 20);
    SamplingParams sp;
    sp.temperature = float(args.floatValue("--temp", sp.temperature, 0.0, 100.0));
    sp.seed = uint64_t(args.intValue("--seed", 0, 0, INT64_MAX));
    sp.topK = int32_t(args.intValue("--top-k", sp.topK, 0, INT32_MAX));
    sp.topP = float(args.floatValue("--top-p", sp.topP, 0.0, 1.0));
    const int threads = readThreadsFlag(args);
    const std::string device = readDeviceFlag(args);
    const bool json = args.flag("--json");
    const KvDtype kvType = readKvDtypeFlag(args, KvDtype::F16);
    const std::string schemaFile = args.value("--json-schema", "");
    const bool jsonObject = args.flag("--json-object");
    args.rejectUnknown();
    if (prompt.empty()) throw Error("generate needs a prompt: -p TEXT");
    OutputConstraint constraint;
    if (!schemaFile.empty() && jsonObject) throw Error("--json-schema and --json-object exclude each other");
    if (jsonObject) constraint.kind = OutputConstraint::Kind::JsonObject;
    if (!schemaFile.empty()) {
        std::ifstream in(schemaFile, std::ios::binary);
        if (!in) throw Error("--json-schema: cannot read " + schemaFile);
        constraint.kind = OutputConstraint::Kind::JsonSchema;
        constraint.schema.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }

    ModelRunnerOptions ro;
    ro.modelPath = modelPath;
    ro.threads = threads;
    ro.device = device;
    ro.kvDtype = kvType;
    ro.sampling = sp;
    ro.constraint = constraint;
    const auto t0 = Clock::now();
    ModelRunner runner(ro);
    const double loadMs = msSince(t0);
    const ModelConfig& cfg = runner.config();
    const std::vector<int32_t> promptIds = runner.tokenize(prompt);
    if (promptIds.empty()) throw Error("the prompt encodes to no tokens");
    const int64_t total = int64_t(promptIds.size()) + nPredict;
    if (total > cfg.nCtxTrain)
        throw Error("prompt (" + std::to_string(promptIds.size()) + " tokens) + -n exceeds the model's context of " + std::to_string(cfg.nCtxTrain));
    runner.setContext(int32_t(total));  // KV for exactly the prompt and the reply
    std::vector<int32_t> generated;
    std::string text;

    // Prefill in chunks so a long prompt does not need a huge batch.
    const auto tp = Clock::now();
    runner.feed(promptIds, 512);
    const double prefillMs = msSince(tp);

    const auto td = Clock::now();
    for (long long i = 0; i < nPredict; ++i) {
        const int32_t next = runner.sample();
        generated.push_back(next);
        if (runner.isEndOfGeneration(next)) break;
        const std::string piece = runner.tokenText(next);
        text += piece;
        if (!json) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        }
        if (i + 1 == nPredict || runner.constraintFinished()) break;
        runner.feed({next});
    }
    const std::string rest = runner.flushText();
    text += rest;
    const double decodeMs = msSince(td);
    // Decode steps = forward passes after the prefill (the last token is sampled, not run).
    const double decodeSteps = generated.empty() ? 0.0 : double(generated.size() - 1);

    if (json) {
        std::printf("{\"model\":%s,\"prompt_tokens\":%s,\"tokens\":%s,\"text\":%s,\"timings\":{\"load_ms\":%s,"
                    "\"prefill_ms\":%s,\"prefill_tokens_per_s\":%s,\"decode_ms\":%s,\"decode_tokens_per_s\":%s},\"threads\":%d}\n",
                    jsonString(modelPath).c_str(), jsonIntArray(promptIds).c_str(), jsonIntArray(generated).c_str(),
                    jsonString(text).c_str(), jsonNumber(loadMs).c_str(), jsonNumber(prefillMs).c_str(),
                    jsonNumber(promptIds.size() / (prefillMs / 1000.0)).c_str(), jsonNumber(decodeMs).c_str(),
                    jsonNumber(decodeSteps > 0 ? decodeSteps / (decodeMs / 1000.0) : 0.0).c_str(), runner.threads());
    } else {
        std::fwrite(rest.data(), 1, rest.size(), stdout);
        std::printf("\n");
        std::fprintf(stderr, "\n[%zu prompt tokens, %zu generated; load %.0f ms, prefill %.1f tok/s, decode %.1f tok/s]\n",
                     promptIds.size(), generated.size(), loadMs, promptIds.size() / (prefillMs / 1000.0),
                     decodeSteps > 0 ? decodeSteps / (decodeMs / 1000.0) : 0.0);
    }
    return 0;
}

Command reg{"generate", "generate text from a prompt: -p TEXT [-m FILE] [-n N] [--temp T] [--seed S] [--top-k K] [--top-p P] [--device cpu|cuda|cuda:N] [--threads T] [--kv-cache-dtype f16|q8_0|fp8_e4m3|f32] [--json-schema FILE | --json-object] [--json]", &run};

} // namespace
} // namespace weir::cli
